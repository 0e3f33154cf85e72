#!/usr/bin/env bash
# Run `tilesmith verify` on every concrete instance of every example (the
# ones `tilesmith check FILE` elaborates) and print one line per instance,
# then "N passed, M failed" (instances).  VERIFY_TRIALS (default 1) is the
# number of random-normal trials per shrunken instance; the adversarial
# input kinds always run once each.  VERIFY_DTYPE (default bf16) is the
# storage type.  Without file arguments it also runs `verify --grad` (the
# backward pass opt --grad writes) on the examples at the training sizes of
# bench/prepare_grad.sh and on the transformer LM of examples/pytorch.
# usage: tests/verify_examples.sh ./tilesmith [examples/*.lean ...]
set -u
bin=${1:-./tilesmith}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export NO_COLOR=1
trials=${VERIFY_TRIALS:-1}
dtype=${VERIFY_DTYPE:-bf16}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(examples/*.lean)
pass=0 fail=0
# one verify: LABEL ARGS... (one line, and what failed beneath)
one() {
  local label=$1 log
  shift
  log=$(mktemp)
  if "$bin" verify "$@" --trials "$trials" --dtype "$dtype" > "$log" 2>&1; then
    pass=$((pass + 1))
    echo "ok   $label: $(tail -1 "$log")"
  else
    fail=$((fail + 1))
    echo "FAIL $label"
    grep -v '^ok \|^skip ' "$log" | head -20 | sed 's/^/    /'
  fi
  rm -f "$log"
}
for f in "${files[@]}"; do
  entries=$("$bin" check "$f" 2>/dev/null | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' || true)
  for e in $entries; do
    one "$f $e" "$f" --entry "$e"
  done
done
if [ $# -eq 0 ]; then
  # programs that are not examples, at sizes where the search fuses them
  # differently from the examples (held-out programs that once failed)
  while read -r f e sizes; do
    one "$f $e [$sizes]" "$f" --entry "$e" --size "$sizes"
  done <<'CASES'
tests/emit/small_products.lean rightAssocProduct N=37,D=8,E=5
tests/emit/small_products.lean rightAssocProduct N=1000,D=16,E=24
tests/emit/small_products.lean rowScaledSoftmax M=4,N=40000
tests/emit/small_products.lean qkNormAttention B=1,H=2,N=300,D=32
tests/emit/small_products.lean qkNormAttention B=2,H=8,N=2048,D=64
tests/emit/small_products.lean qkNormAttention B=1,H=1,N=4096,D=64
tests/emit/small_products.lean rowScaledSoftmax M=2,N=100000
tests/emit/small_products.lean twoExp M=2,N=100000
tests/emit/small_products.lean sameExpTwice M=2,N=100000
tests/emit/small_products.lean attnMeanPool B=3,N=37,D=24,C=10
tests/search/programs.lean halfSlice M=37,N=45
CASES
  while read -r f e sizes; do
    one "$f $e --grad [$sizes]" --grad "$f" --entry "$e" --size "$sizes"
  done <<'CASES'
examples/softmax.lean rowSoftmax M=4096,N=8192
examples/layernorm.lean rowLayernorm M=4096,N=4096
examples/attention.lean attention B=2,H=8,N=1024,D=64
examples/causal_attention.lean causalAttention B=2,H=8,N=1024,D=64
examples/softcap_window_attention.lean softcapWindowAttention B=2,H=8,N=1024,D=64,W=256
examples/rmsnorm_matmul.lean rmsnormMatmul M=4096,K=4096,N=4096
examples/swiglu_mlp.lean swigluMlp M=2048,D=1024,F=2816
examples/linear_cross_entropy.lean linearCrossEntropy M=1024,D=1024,V=8192
examples/transformer_block.lean transformerBlock B=2,N=512,D=512,H=8,F=1408
examples/mlp_classifier.lean residualMlpLoss B=256,I=64,D=256,L=4,C=10
examples/transformer_lm.lean transformerLMLoss B=16,N=128,V=256,D=256,H=4,F=704,L=4
CASES
  # a depth of 2 kept by every shrunken instance, so the plan carries over
  # to all of them (shrunk to 3 or 1, all but one were skipped)
  line=$("$bin" verify tests/search/programs.lean --entry residualStack --size M=4096,D=1024,L=2 --trials 1 2>&1 | tail -1)
  case "$line" in
    *"does not carry over"* | *" 1 instance,"*)
      fail=$((fail + 1)); echo "FAIL residualStack at depth 2: $line" ;;
    *" passed, 0 failed"*) pass=$((pass + 1)); echo "ok   residualStack at depth 2, every instance checked: $line" ;;
    *) fail=$((fail + 1)); echo "FAIL residualStack at depth 2: $line" ;;
  esac
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
