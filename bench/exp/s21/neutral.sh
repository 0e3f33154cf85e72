#!/bin/bash
# usage: neutral.sh OLD_BIN NEW_BIN MODE [FILES...]   MODE: tiles | gtiles | tilelang | triton | gtilelang
# prints the definitions whose output differs between the two binaries
old=$1 new=$2 mode=$3; shift 3
files=${@:-examples/*.lean tests/search/programs.lean tests/emit/small_products.lean tests/emit/shared_tiles.lean tests/prims.lean bench/exp/s20/qa/*.lean}
d=$(mktemp -d)
for f in $files; do
  for e in $($new check $f | grep -v '^[[:space:]]' | grep -v ':'); do echo "$f $e"; done
done > $d/list
run() {  # bin f e out
  case $mode in
    tiles) $1 tiles $2 --entry $3 > $4 2>&1;;
    gtiles) $1 tiles $2 --entry $3 --grad > $4 2>&1;;
    tilelang|triton) mkdir -p $4.d; $1 opt $2 --entry $3 --target $mode -o $4.d/m.py >/dev/null 2>&1; cat $4.d/*.py > $4 2>/dev/null;;
    gtilelang|gtriton) mkdir -p $4.d; $1 opt $2 --entry $3 --grad --target ${mode#g} -o $4.d/m.py >/dev/null 2>&1; cat $4.d/*.py > $4 2>/dev/null;;
  esac
}
export -f run; export mode
cat $d/list | xargs -P2 -L1 bash -c 'f=$0 e=$1; run '$old' $f $e '$d'/o_$e; run '$new' $f $e '$d'/n_$e; cmp -s '$d'/o_$e '$d'/n_$e || echo "DIFF $f $e"'
echo "$(wc -l < $d/list) definitions compared ($mode)"
[ -n "$KEEP" ] && echo $d || rm -rf $d
