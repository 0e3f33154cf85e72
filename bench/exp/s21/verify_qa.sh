cd /work/main
for f in bench/exp/s20/qa/*.lean; do
  for e in $(./tilesmith check $f | grep -v '^[[:space:]]' | grep -v ':'); do
    for g in "" "--grad"; do
      r=$(timeout 300 ./tilesmith verify $f --entry $e $g 2>&1 | tail -1)
      echo "$f $e $g :: $r"
    done
  done
done
