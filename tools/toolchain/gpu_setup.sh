# Source this on the offline H200 machine, in the repo root, in a device call
# that carries .whl/ (made here by tools/toolchain/fetch_gpu_wheels.sh):
#
#   source tools/toolchain/gpu_setup.sh && python3 tools/toolchain/validate_example.py --run
#
# Installs the carried wheels (tilelang, apache-tvm-ffi, z3-solver; the image
# has torch, triton and the rest) into /tmp/site, exports PYTHONPATH, and
# keeps TileLang's cache in /tmp.  Returns non-zero if tilelang does not import.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || return 1
export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
export TILELANG_CACHE_DIR="${TILELANG_CACHE_DIR:-/tmp/tilelang-cache}"
export TILELANG_PRINT_ON_COMPILATION="${TILELANG_PRINT_ON_COMPILATION:-0}"
python3 -c 'import tilelang, torch, triton; print("gpu_setup: tilelang", tilelang.__version__, "torch", torch.__version__, "triton", triton.__version__, "cuda", torch.cuda.is_available())' || return 1
