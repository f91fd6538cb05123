#!/usr/bin/env python3
"""Corrupts elements of a result captured from a device.

Usage: corrupt.py FILE.npy I,J,K DELTA

Adds DELTA to element [I, J, K] of FILE.npy and saves it back. An index may
be a range A:B (or : for all), as numpy slices: 0:3,6,: is every element of
head 6 in tokens 0 to 2.
"""
import sys

import numpy as np


def part(text):
    """An index or a slice of one dimension."""
    if ":" not in text:
        return int(text)
    lo, hi = text.split(":")
    return slice(int(lo) if lo else None, int(hi) if hi else None)


def main():
    path, index, delta = sys.argv[1], sys.argv[2], float(sys.argv[3])
    a = np.load(path)
    a[tuple(part(i) for i in index.split(","))] += delta
    np.save(path, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
