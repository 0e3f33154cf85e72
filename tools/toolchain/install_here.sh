#!/usr/bin/env bash
# Install the pinned TileLang + Triton toolchain on this (GPU-less) machine, for
# offline lowering and compiling to sm_90a (see docs/TOOLCHAIN.md).
#
#   tools/toolchain/install_here.sh [--venv DIR] [--torch real|stub] [--validate]
#
#   --venv DIR     install into the virtual environment DIR (made if missing);
#                  default $TOOLCHAIN_VENV or $HOME/.cache/tilesmith/toolchain-venv
#   --torch real   (default) torch 2.11.0 from PyPI without its CUDA wheels; it
#                  uses the CUDA toolkit's libraries in /usr/local/cuda-13.0/lib
#   --torch stub   no torch: a stand-in module (torch_stub/) that is enough for
#                  tilelang to import, lower and build (venv only, never system-wide)
#   --validate     run validate_example.py afterwards
#
# Prints, last, the python to use (e.g. TOOLCHAIN_PYTHON=/path/bin/python).
# Re-running with the same pins and options does nothing (stamp file).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${TOOLCHAIN_VENV:-$HOME/.cache/tilesmith/toolchain-venv}"
torch_mode=real validate=0
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --torch) torch_mode="$2"; shift 2 ;;
    --validate) validate=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "install_here.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$torch_mode" in real|stub) ;; *) echo "install_here.sh: --torch real|stub" >&2; exit 2 ;; esac

base_py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  "$base_py" -m venv "$venv"
fi
py="$venv/bin/python"
stamp_dir="$venv"
"$py" -c 'import sys; assert sys.version_info[:2] >= (3, 10), sys.version' ||
  { echo "install_here.sh: tilelang needs Python >= 3.10" >&2; exit 1; }

stamp="$stamp_dir/.tilesmith-toolchain-stamp"
want="$(cat "$here/requirements-cpu.txt" "$here/requirements-torch.txt" "$here/torch_stub/torch/__init__.py" | sha256sum | cut -c1-16) torch=$torch_mode py=$("$py" -c 'import sys; print(sys.version.split()[0])')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   "$py" -c 'import tilelang, triton' >/dev/null 2>&1; then
  echo "install_here.sh: already installed ($want)"
else
  pip_install() { "$py" -m pip install -q --disable-pip-version-check --no-deps "$@"; }
  t0=$(date +%s)
  pip_install -r "$here/requirements-cpu.txt"
  site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  if [ "$torch_mode" = real ]; then
    if [ -f "$site/torch/__init__.py" ] && grep -q __tilesmith_stub__ "$site/torch/__init__.py"; then
      rm -rf "$site/torch"
    fi
    pip_install -r "$here/requirements-torch.txt"
    if ! "$py" -c 'import torch' 2>/tmp/toolchain-torch-err.$$; then
      cat /tmp/toolchain-torch-err.$$ >&2; rm -f /tmp/toolchain-torch-err.$$
      echo "install_here.sh: torch does not import. It needs cuBLAS/cuDNN/NCCL/... from the" >&2
      echo "  CUDA toolkit (/usr/local/cuda-13.0/lib via ld.so.conf). Without them, use" >&2
      echo "  --torch stub, or install torch==2.11.0 with its dependencies (about 3 GB)." >&2
      exit 1
    fi
    rm -f /tmp/toolchain-torch-err.$$
  else
    if [ -d "$site/torch" ] && ! grep -q __tilesmith_stub__ "$site/torch/__init__.py" 2>/dev/null; then
      "$py" -m pip uninstall -y -q torch || true
    fi
    rm -rf "$site/torch"
    cp -r "$here/torch_stub/torch" "$site/torch"
  fi
  echo "$want" > "$stamp"
  echo "install_here.sh: installed in $(( $(date +%s) - t0 )) s ($want)"
fi

"$py" - <<'EOF'
import importlib.metadata as m
for d in ("tilelang", "apache-tvm-ffi", "z3-solver", "triton", "torch", "numpy"):
    try:
        print(f"  {d}=={m.version(d)}")
    except m.PackageNotFoundError:
        print(f"  {d}: (not installed as a distribution)")
EOF
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDA_HOME:-}" ]; then
  echo "install_here.sh: warning: no nvcc (TileLang can lower, but not build device code)" >&2
fi
if [ "$validate" = 1 ]; then
  "$py" "$here/validate_example.py"
fi
echo "TOOLCHAIN_PYTHON=$py"
