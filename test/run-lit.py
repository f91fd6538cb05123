#!/usr/bin/env python3
"""Runs one lit test file for ctest.

Exit status: lit's own, except 77 when the test was UNSUPPORTED, so ctest
reports it as skipped (not passed) and the reason lit gave is printed.
"""
import subprocess
import sys


def main() -> int:
    lit, test = sys.argv[1], sys.argv[2]
    proc = subprocess.run([lit, "-v", test], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(proc.stdout)
    if "UNSUPPORTED:" in proc.stdout and proc.returncode == 0:
        for line in proc.stdout.splitlines():
            if "unavailable features" in line or "UNSUPPORTED" in line:
                print(f"SKIPPED: {line.strip()}")
        return 77
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
