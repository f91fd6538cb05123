#!/usr/bin/env python3
"""Corrupts one element of a result captured from a device.

Usage: corrupt.py FILE.npy I,J,K DELTA

Adds DELTA to element [I, J, K] of FILE.npy and saves it back.
"""
import sys

import numpy as np


def main():
    path, index, delta = sys.argv[1], sys.argv[2], float(sys.argv[3])
    a = np.load(path)
    a[tuple(int(i) for i in index.split(","))] += delta
    np.save(path, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
