#!/usr/bin/env bash
# Download (here, where PyPI is reachable) the wheels that TileLang needs on the
# offline H200 machine, strip them, and leave them in .whl/ at the repo root.
#
#   tools/toolchain/fetch_gpu_wheels.sh [--python-version 3.12] [--no-strip] [--allow-unignored]
#
# The H200 image already has torch 2.11.0, triton 3.6.0, numpy, cloudpickle,
# ml-dtypes, psutil, tqdm and typing-extensions; it lacks tilelang,
# apache-tvm-ffi and z3-solver.  Unstripped these are 77.8 MiB, over the 64 MiB
# that a device call may carry; stripped (strip_wheel.py) about 53.6 MiB.
#
# .whl/ must be git-ignored (so it is never committed and travels only when a
# call names it in `carry`): add `/.whl/` to .gitignore or .git/info/exclude.
# On the device machine (one call, carry [".whl"]):
#   source tools/toolchain/gpu_setup.sh && python3 tools/toolchain/validate_example.py --run
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
pyver=3.12 strip=1 allow_unignored=0
while [ $# -gt 0 ]; do
  case "$1" in
    --python-version) pyver="$2"; shift 2 ;;
    --no-strip) strip=0; shift ;;
    --allow-unignored) allow_unignored=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "fetch_gpu_wheels.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
cd "$root"
if ! git check-ignore -q .whl/probe.whl 2>/dev/null; then
  echo "fetch_gpu_wheels.sh: .whl/ is not git-ignored; add '/.whl/' to .gitignore or .git/info/exclude" >&2
  [ "$allow_unignored" = 1 ] || exit 1
fi
PY="${PYTHON:-python3}"
raw="$(mktemp -d)"
trap 'rm -rf "$raw"' EXIT
pkgs=(tilelang==0.1.15 apache-tvm-ffi==0.1.12 z3-solver==4.15.4.0)
"$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d "$raw" "${pkgs[@]}"
mkdir -p .whl
for p in "${pkgs[@]}"; do   # keep one version of each: two stop `pip install`
  n="$(echo "${p%%==*}" | tr - _)"
  rm -f .whl/"$n"-*.whl
done
for w in "$raw"/*.whl; do
  if [ "$strip" = 1 ]; then
    "$PY" "$here/strip_wheel.py" "$w" .whl
  else
    cp "$w" .whl/
  fi
done
ls -l .whl/
total=$(du -cb .whl/*.whl | tail -1 | cut -f1)
echo "fetch_gpu_wheels.sh: .whl/ holds $(( total / 1048576 )) MiB; a device call carries at most 64 MiB in all"
