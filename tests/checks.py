"""The pass/fail tally the Python test scripts share: one line per check,
then "N passed, M failed" and the exit status (1 on a failure)."""


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what):
        ok = bool(ok)
        self.passed += ok
        self.failed += not ok
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        return ok

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0
