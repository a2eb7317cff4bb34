"""Runs pytest on this folder (meson test suite 'python'): the jostle package
comes from PYTHONPATH (the build folder), the JUnit XML goes to
$JL_PYTEST_JUNIT for scripts/test to count the cases. Exit 77 (skip) when
numpy or pytest is missing."""

import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print("python tests: %s (scripts/test installs python3-numpy and python3-pytest)" % e)
    sys.exit(77)

args = [sys.argv[1], "-v", "-p", "no:cacheprovider", "-rs", "--durations=5"]
junit = os.environ.get("JL_PYTEST_JUNIT")
if junit:
    if os.path.exists(junit):
        os.remove(junit)  # a crash leaves none, not the last run's
    args.append("--junitxml=" + junit)
rc = pytest.main(args)
sys.exit(1 if rc == pytest.ExitCode.NO_TESTS_COLLECTED else int(rc))
