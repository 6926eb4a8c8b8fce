#!/usr/bin/env python3
"""Tests of serving_mix.py's arguments, without torch or a GPU.

    python3 scripts/serving_mix_test.py

`go test ./runner` runs this file whenever python3 is on PATH.
"""

import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serving_mix  # noqa: E402


class DecodeBatches(unittest.TestCase):
    def test_sizes_read(self):
        self.assertEqual(serving_mix.batch_sizes("1,8,32"), [1, 8, 32])

    def test_bad_value_is_a_usage_error_before_torch(self):
        # A malformed list once died in a traceback after torch's import;
        # argparse now exits 2 with the value and what it wants.
        for bad in ("1,x", "8,,32", "0,4", ""):
            err = io.StringIO()
            with self.assertRaises(SystemExit) as cm, contextlib.redirect_stderr(err):
                serving_mix.main(["--decode-batches", bad])
            self.assertEqual(cm.exception.code, 2, bad)
            self.assertIn("--decode-batches", err.getvalue())
            self.assertNotIn("Traceback", err.getvalue())


class Counts(unittest.TestCase):
    def test_zero_or_words_are_usage_errors(self):
        for flag, bad in (("--prefill-every", "0"), ("--steps", "-1"), ("--hidden", "big")):
            err = io.StringIO()
            with self.assertRaises(SystemExit) as cm, contextlib.redirect_stderr(err):
                serving_mix.main([flag, bad])
            self.assertEqual(cm.exception.code, 2, (flag, bad))
            self.assertIn(flag, err.getvalue())


if __name__ == "__main__":
    unittest.main()
