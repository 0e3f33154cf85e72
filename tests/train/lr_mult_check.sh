#!/usr/bin/env bash
# tilesmith train's and sweep's --lr-mult NAME=X (a Param's learning rate
# times X on top of the parametrization's): each check compares two short
# trainings that must give the same final loss (the same learning rates
# reached two ways) or must not, and the errors of a wrong name or form.
# usage: tests/train/lr_mult_check.sh ./tilesmith   Prints "N passed, M failed".
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
pass=0 fail=0
check() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2"; fi; }
mlp=(examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=64,D=32,L=2,C=10 --steps 4
     --data x=@digits:0-63/16 --data labels=@digits:64)
fin() { "$bin" train "${mlp[@]}" "$@" 2>&1 | grep "^final loss"; }
a=$(fin --optimizer sgd --lr 0.02)
b=$(fin --optimizer sgd --lr 0.01 --lr-mult Win=2 --lr-mult G=2 --lr-mult W=2 --lr-mult Wout=2)
[ -n "$a" ] && [ "$a" = "$b" ]; check $? "every Param's rate doubled is the base rate doubled ($a)"
c=$(fin --optimizer sgd --lr 0.01 --lr-mult W=4)
d=$(fin --optimizer sgd --lr 0.01)
[ -n "$c" ] && [ "$c" != "$d" ]; check $? "one Param's rate times 4 changes the training ($c against $d)"
[ "$(fin --lr 0.01 --lr-mult W=1)" = "$(fin --lr 0.01)" ]; check $? "a multiplier of 1 changes nothing"
der=(--param derived --width D=32 --depth L=1)
e=$(fin "${der[@]}" --lr 0.01 --lr-mult W=depth^1)
f=$(fin "${der[@]}" --lr 0.01 --lr-mult W=2)
[ -n "$e" ] && [ "$e" = "$f" ]; check $? "depth^1 at depth 2 over base 1 is a factor 2"
m=$("$bin" train "${mlp[@]}" --lr-mult Wq=2 2>&1); r=$?
[ $r = 1 ] && echo "$m" | grep -q "the entry has no Param Wq (its Params: Win G W Wout)"
check $? "a name that is no Param is refused with the Params listed"
m=$("$bin" train "${mlp[@]}" --lr-mult W=depth^1 2>&1); r=$?
[ $r = 1 ] && echo "$m" | grep -q "needs --param derived with --depth SYM=BASE"; check $? "depth^E without a base is refused"
m=$("$bin" train "${mlp[@]}" --lr-mult W=-1 2>&1); r=$?
[ $r = 2 ] && echo "$m" | grep -q "X needs a number above 0"; check $? "a multiplier not above 0 is a usage error"
m=$("$bin" train "${mlp[@]}" --lr-mult W=2 --lr-mult W=3 2>&1); r=$?
[ $r = 2 ] && echo "$m" | grep -q "given twice"; check $? "a Param named twice is a usage error"
m=$("$bin" sweep examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=64,C=10 --width D=32 --widths 32 \
    --depth L=1 --depths 1,2 --lrs 0.01,0.02 --steps 2 --data x=@digits:0-63/16 --data labels=@digits:64 \
    --lr-mult W=depth^1 --csv /dev/null 2>&1); r=$?
[ $r = 2 ] && echo "$m" | grep -q "add --param derived"; check $? "a sweep's depth^E needs --param derived"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
