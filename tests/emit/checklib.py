"""What the CPU-side module checks share: a tally of "ok"/"FAIL" lines,
loading an emitted module from its path, and a lint of emitted TileLang."""

import importlib.util
import re


class Tally:
    """Counts checks and prints one line each: "ok   WHAT" or "FAIL WHAT: WHY"."""

    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what, why=""):
        self.passed += bool(ok)
        self.failed += not ok
        print(("ok   " if ok else "FAIL ") + what + ("" if ok or not why else ": " + why), flush=True)

    def done(self):
        """Prints "N passed, M failed"; the exit status."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def load_module(path, name):
    """The module at path, imported under name."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def mixed_pipelines(src):
    """The kernels of an emitted TileLang module with a top-level loop that
    loads by T.copy beside one whose threads fill a shared tile (a map into
    it that is not a plain load).  TileLang 0.1.15 splits such a block into
    a producer and consumers for the first loop and runs the second in the
    consumers; info_nce_big's backward k15 then gave other row sums at every
    launch on an H100.  The emitter loads such a kernel element-wise."""
    bad = []
    for m in re.finditer(r"\ndef (\w+)\((.*?)(?=\n@T\.prim_func|\nPRIM_FUNCS)", src, re.S):
        body = m.group(2)
        shared = set(re.findall(r"(\w+) = T\.alloc_shared\(", body))
        loops, cur = [], None
        for line in body.splitlines():
            ind = len(line) - len(line.lstrip())
            if ind == 8 and re.match(r"\s*for \w+ in T\.(Pipelined|serial)\(", line):
                cur = {"copy": False, "fill": False}
                loops.append(cur)
                continue
            if cur is not None and line.strip() and ind <= 8:
                cur = None
            if cur is None:
                continue
            cur["copy"] |= "T.copy(" in line
            a = re.match(r"\s*(\w+)\[i, j\] = (.*)$", line)
            if a and a.group(1) in shared and not re.fullmatch(r"\w+\[[^\[\]]*\]", a.group(2).strip()):
                cur["fill"] = True
        if any(lp["copy"] for lp in loops) and any(lp["fill"] and not lp["copy"] for lp in loops):
            bad.append(m.group(1))
    return bad
