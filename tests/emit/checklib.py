"""What the CPU-side module checks share: a tally of "ok"/"FAIL" lines and
loading an emitted module from its path."""

import importlib.util


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
