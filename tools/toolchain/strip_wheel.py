#!/usr/bin/env python3
"""Rewrite a wheel without the files TileLang never reads at run time.

Usage: strip_wheel.py IN.whl OUT_DIR      (writes OUT_DIR/<same file name>)

Rules (per distribution, chosen by the wheel's file name):
  tilelang        C++ implementation sources (*.cc/*.cpp under tilelang/src),
                  TVM's C++ source tree (tilelang/3rdparty/tvm/src/), CUTLASS's
                  tools/ (profiler/library/util, used only by TVM's cutlass BYOC).
                  Headers (tl_templates, cute/cutlass include, tvm include) stay.
  z3_solver       the z3 command-line binary (*.data/data/bin/z3) and the second
                  copy of the library (z3/lib/libz3.so.4.15; the wheel stores
                  libz3.so twice because zip has no symlinks).  libz3.so carries
                  SONAME libz3.so.4.15: `import z3` (done by tilelang.env) loads
                  it first, which satisfies libtvm_compiler.so's DT_NEEDED.
  apache_tvm_ffi  the libbacktrace source tree (libtvm_ffi_testing.so must stay:
                  tvm_ffi/core.abi3.so links it).
Everything is recompressed at zlib level 9 and RECORD is rewritten with the
new hashes and sizes, so `pip install` accepts the result.
"""
import base64
import hashlib
import os
import re
import sys
import zipfile

RULES = {
    "tilelang-": [
        r"^tilelang/src/.*\.(cc|cpp)$",
        r"^tilelang/3rdparty/tvm/src/",
        r"^tilelang/3rdparty/cutlass/tools/",
    ],
    "z3_solver-": [
        r"^z3_solver-[^/]*\.data/data/bin/z3$",
        r"^z3/lib/libz3\.so\.[0-9.]+$",
    ],
    "apache_tvm_ffi-": [
        r"^tvm_ffi/3rdparty/libbacktrace/",
    ],
}


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def main() -> int:
    src, out_dir = sys.argv[1], sys.argv[2]
    name = os.path.basename(src)
    pats = []
    for prefix, rules in RULES.items():
        if name.startswith(prefix):
            pats = [re.compile(r) for r in rules]
    os.makedirs(out_dir, exist_ok=True)
    dst = os.path.join(out_dir, name)
    if os.path.abspath(dst) == os.path.abspath(src):
        dst_tmp = dst + ".tmp"
    else:
        dst_tmp = dst
    zin = zipfile.ZipFile(src)
    record_name = next(i.filename for i in zin.infolist() if i.filename.endswith(".dist-info/RECORD"))
    kept, dropped, dropped_bytes = [], 0, 0
    with zipfile.ZipFile(dst_tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
        for info in zin.infolist():
            if info.filename == record_name:
                continue
            if any(p.search(info.filename) for p in pats):
                dropped += 1
                dropped_bytes += info.file_size
                continue
            data = zin.read(info)
            zi = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            zi.external_attr = info.external_attr
            zi.compress_type = zipfile.ZIP_STORED if info.is_dir() else zipfile.ZIP_DEFLATED
            zout.writestr(zi, data, compress_type=zi.compress_type, compresslevel=9)
            if not info.is_dir():
                kept.append(f"{info.filename},{record_hash(data)},{len(data)}")
        kept.append(f"{record_name},,")
        zi = zipfile.ZipInfo(record_name, date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        zout.writestr(zi, "\n".join(kept) + "\n", compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    if dst_tmp != dst:
        os.replace(dst_tmp, dst)
    print(f"{name}: dropped {dropped} files ({dropped_bytes / 2**20:.1f} MiB raw); "
          f"{os.path.getsize(src) / 2**20:.2f} MiB -> {os.path.getsize(dst) / 2**20:.2f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
