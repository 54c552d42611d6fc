"""Runs one group of the Python package's tests (python/tests/test_GROUP*.py) with unittest,
as CTest's python_GROUP: exit 0 when they pass, 1 when one fails, 77 (CTest's skip) when every
test of the group skipped, printing why (no numpy, no GPU, no torch).
    python3 python/tests/run.py core|gpu|torch    (PYTHONPATH: the build tree's python/)"""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
group = sys.argv[1] if len(sys.argv) > 1 else "core"
sys.path.insert(0, here)
try:
    import amk  # noqa: F401
except ImportError as e:
    print("python_%s: cannot import amk (%s); PYTHONPATH=%s" % (group, e,
          os.environ.get("PYTHONPATH", "")), file=sys.stderr)
    sys.exit(1)
suite = unittest.defaultTestLoader.discover(here, pattern="test_%s*.py" % group)
result = unittest.TextTestRunner(verbosity=2).run(suite)
if not result.wasSuccessful():
    sys.exit(1)
if result.testsRun and len(result.skipped) == result.testsRun:
    reasons = sorted(set(r for _, r in result.skipped))
    print("SKIP: every test of python_%s skipped: %s" % (group, "; ".join(reasons)))
    sys.exit(77)
sys.exit(0)
