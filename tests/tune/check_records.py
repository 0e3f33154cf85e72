"""The tuner's records, end to end on the CPU: `tilesmith tune` writes a
manifest, tools/tune.py's record_line() writes what it would append after
timing (a made-up winner: this machine has no GPU), and `tilesmith tiles
--tuned` and `opt --target best` read it back: the schedule and the target
take effect, a record of another program does not, and a later record of
the same key wins.  Prints "N passed, M failed"."""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import tune  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests"))
from checks import Checks  # noqa: E402

check = Checks()


def run(tool, *args):
    return subprocess.run([tool, *args], capture_output=True, text=True, cwd=ROOT)


def main(tool):
    tool = os.path.abspath(tool)
    entry = ["examples/attention.lean", "--entry", "attention", "--size", "B=1,H=2,N=1024,D=64"]
    with tempfile.TemporaryDirectory() as d:
        r = run(tool, "tune", *entry, "--top", "2", "-o", os.path.join(d, "t"))
        check(r.returncode == 0, "tune writes its modules and manifest")
        man = json.load(open(os.path.join(d, "t", "manifest.json")))
        check(len(man["candidates"]) == 4 and all(os.path.exists(os.path.join(d, "t", c["module"]))
                                                  for c in man["candidates"]),
              "two schedules, two targets, every module written")
        recs = os.path.join(d, "tuned.tsv")
        best = {"target": "triton", "schedule": "stream=32,stages=3", "ms": 0.088, "predicted_us": 12.3}
        other = dict(man, key="0123456789abcdef")
        with open(recs, "w") as f:
            f.write(tune.record_line(other, dict(best, schedule="stream=16"), "NVIDIA H200", "torch 2.11", "2026-12-03") + "\n")
            f.write(tune.record_line(man, dict(best, target="tilelang", schedule="stream=128"), "NVIDIA H200",
                                     "torch 2.11", "2026-12-03") + "\n")
            f.write(tune.record_line(man, best, "NVIDIA\tH200", "torch 2.11", "2026-12-03") + "\n")
        r = run(tool, "tiles", *entry, "--tuned", recs)
        check(r.returncode == 0 and "shared B6 : bfloat16[32, 64]" in r.stdout and "stages=3)" in r.stdout,
              "tiles --tuned applies the key's last record (32-key tiles, 3 stages)")
        r0 = run(tool, "tiles", *entry)
        check("shared B6 : bfloat16[32, 64]" not in r0.stdout, "without --tuned the cost model's schedule")
        out = os.path.join(d, "best.py")
        r = run(tool, "opt", *entry, "--tuned", recs, "--target", "best", "-o", out)
        check(r.returncode == 0 and "triton module" in r.stdout and "NVIDIA H200" in r.stdout,
              "opt --target best writes the record's target")
        r = run(tool, "opt", "examples/attention.lean", "--entry", "attention", "--size", "B=1,H=2,N=512,D=64",
                "--tuned", recs, "--target", "best", "-o", out)
        check(r.returncode == 1 and "no tuned record" in r.stderr, "another size has no record: an error, not a guess")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "./tilesmith"))
