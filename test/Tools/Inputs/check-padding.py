"""Checks a run over a padded query against the same run without padding.

Usage: check-padding.py UNPADDED PADDED

The padded inputs add rows past query_start_loc[R] (arg4) to the query
(arg0); each result of PADDED must equal UNPADDED's bit for bit in the
batch's rows, and be zero in the padding rows (never written).
"""
import glob
import os
import sys

import numpy as np


def main():
    unpadded, padded = sys.argv[1], sys.argv[2]
    names = sorted(os.path.basename(p)
                   for p in glob.glob(os.path.join(unpadded, "result*.npy")))
    if not names:
        sys.exit("no results in " + unpadded)
    for name in names:
        a = np.load(os.path.join(unpadded, name))
        b = np.load(os.path.join(padded, name))
        rows = a.shape[0]
        if b.shape[0] <= rows or b.shape[1:] != a.shape[1:]:
            sys.exit("%s: shape %s, expected more than %d rows of %s"
                     % (name, b.shape, rows, a.shape[1:]))
        if not np.array_equal(a, b[:rows], equal_nan=True):
            sys.exit("%s: the batch's rows differ" % name)
        if np.any(b[rows:] != 0):
            sys.exit("%s: padding rows were written" % name)
        print("%s: %d rows as unpadded, %d padding rows zero"
              % (name, rows, b.shape[0] - rows))


main()
