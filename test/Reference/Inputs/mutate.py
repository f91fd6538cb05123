#!/usr/bin/env python3
"""Copies a run's inputs and edits some of them, to make bad inputs.

Usage: mutate.py SRC DST [argN STATEMENT]...

Copies SRC/arg*.npy to DST (SRC may be DST, to edit in place), then for each pair loads DST/argN.npy as the
NumPy array `a`, runs STATEMENT (for example 'a[0] = 1' or
'a = a.astype(np.int64)') and saves `a` back with np.save.
"""
import glob
import os
import shutil
import sys

import numpy as np


def main():
    src, dst, edits = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(dst, exist_ok=True)
    if not os.path.samefile(src, dst):
        for path in glob.glob(os.path.join(src, "arg*.npy")):
            shutil.copy(path, dst)
    for name, statement in zip(edits[::2], edits[1::2]):
        path = os.path.join(dst, name + ".npy")
        scope = {"np": np, "a": np.load(path)}
        exec(statement, scope)
        np.save(path, scope["a"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
