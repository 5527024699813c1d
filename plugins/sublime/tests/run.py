"""Run the Sublime Text package's tests and end with a plain summary line.

    python3 plugins/sublime/tests/run.py        (from anywhere)

Same tests as ``python3 -m unittest discover -s plugins/sublime/tests -v``;
the last line reads "sublime: N passed, N failed, N skipped". Exit status 0
only if every test passed.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped - len(result.expectedFailures)
    print("sublime: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
