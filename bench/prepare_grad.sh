#!/usr/bin/env bash
# Write `opt --grad` modules (forward and backward, both targets) of the
# examples at training-like sizes into bench/out_grad/ (OUT=DIR: there), for
# bench/grad_gpu.py on the GPU machine.
# usage: bench/prepare_grad.sh [./tilesmith]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./tilesmith}
out=${OUT:-bench/out_grad}
rm -rf "$out"
mkdir -p "$out"
while read -r file entry sizes name; do
  case "$file" in ''|'#'*) continue ;; esac
  for target in triton tilelang; do
    "$bin" opt "$file" --entry "$entry" --size "$sizes" --target "$target" --grad -o "$out/${name}_$target.py" > /dev/null
  done
done <<'CASES'
# file                                  generic            sizes                              name
examples/softmax.lean                   rowSoftmax         M=4096,N=8192                      softmax
examples/layernorm.lean                 rowLayernorm       M=4096,N=4096                      layernorm
examples/attention.lean                 attention          B=2,H=8,N=1024,D=64                attention
examples/rmsnorm_matmul.lean            rmsnormMatmul      M=4096,K=4096,N=4096               rmsnorm_matmul
examples/swiglu_mlp.lean                swigluMlp          M=2048,D=1024,F=2816               swiglu
examples/linear_cross_entropy.lean      linearCrossEntropy M=1024,D=1024,V=8192               lce
examples/transformer_block.lean         transformerBlock   B=2,N=512,D=512,H=8,F=1408         block
examples/mlp_classifier.lean            residualMlpLoss    B=256,I=64,D=256,L=4,C=10          mlp
CASES
echo "prepared $(ls "$out" | grep -vc _backward) modules in $out"
