"""The Python tests' counterpart of tests/check.h: check(cond, message) counts, prints a failure,
and finish(name) prints "name: N passed, N failed" (the line tests/run_all.sh sums) and exits 1
when anything failed."""
import sys

_counts = {"passed": 0, "failed": 0}


def check(cond, msg):
    if cond:
        _counts["passed"] += 1
    else:
        _counts["failed"] += 1
        print("FAIL: " + msg)
    return bool(cond)


def finish(name):
    print("%s: %d passed, %d failed" % (name, _counts["passed"], _counts["failed"]))
    sys.exit(1 if _counts["failed"] else 0)
