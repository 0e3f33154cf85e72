# one device call: compile every module of bench/exp (and its original) in parallel, then check and time each in turn
source tools/toolchain/gpu_setup.sh > /dev/null || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader
mods="bench/out/attention_4k_tilelang.py bench/out/attention_b8_h32_n2048_d64_tilelang.py $(ls bench/exp/attention_*_v*.py)"
for m in $mods; do timeout 300 python3 $m --warm 1 > /dev/null 2>&1 & done; wait
for r in 1 2; do for m in $mods; do echo "== $m"; timeout 120 python3 $m 2>&1 | tail -2; done; done
