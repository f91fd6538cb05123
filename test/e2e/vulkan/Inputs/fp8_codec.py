"""Inputs that exercise every fp8 code and every rounding tie of a format.

  fp8_codec.py write FORMAT DIR   inputs of reshape_and_cache (num_kv_heads 1,
                                  head_size 256, block_size 16, NHD, f32)
  fp8_codec.py read FORMAT DIR    inputs of paged_attention (num_heads 1,
                                  num_kv_heads 1, head_size 256, block_size
                                  16, NHD, f32) whose cache holds every
                                  finite code of FORMAT (e4m3 or e5m2)

write: the keys (k_scale 1) are every finite code with both signs, every
midpoint of two neighbouring codes (a tie: rounds to the even code), the
floats next to each midpoint, values past the largest finite one (they
saturate), the infinities, NaN and values below half the smallest subnormal.
The values (v_scale, not a power of two) are those codes and ties times
v_scale, rounded to f32, and their f32 neighbours: x / v_scale in f32 often
lands on a tie the exact quotient misses, and a kernel must round that f32
quotient, tie and all, as vLLM's write does (float(x) / scale, then fp8).

read: value row 0 of request 0 (decode, one key) and of request 1 (a
prefill of two tokens whose first token sees one key) holds the 256 codes
(NaN and infinities as 0), so out row 0 of either is v_scale times the decoded
codes, exactly, from the per-token and the tiled kernel. The formats'
values come from the NumPy oracle (test/Reference/Inputs/oracle.py).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "Reference", "Inputs"))
from oracle import fp8_table  # noqa: E402

HEAD = 256
BLOCK = 16


def f32_neighbours(x):
    x = np.float32(x)
    return [np.nextafter(x, np.float32(-np.inf)), x,
            np.nextafter(x, np.float32(np.inf))]


def write_inputs(fmt, directory):
    finite = fp8_table(fmt)  # ascending, finite, non-negative
    ties = (finite[1:] + finite[:-1]) / 2
    largest = finite[-1]
    extremes = [largest * 1.03, largest * 1.2, 1e6, 3e38, np.inf,
                finite[1] / 2, finite[1] / 4, 1e-30, 0.0]
    base = list(finite) + list(ties) + extremes
    keys = []
    for x in base:
        for y in f32_neighbours(x) if np.isfinite(x) and x != 0 else [x]:
            keys += [y, -y]
    keys.append(np.nan)
    # 0.0123 with the last of its 24 significant bits set: products of
    # codes with it are not floats, so quotients round onto ties.
    v_scale = np.array([0x3C4985F1], np.uint32).view(np.float32)[0]
    vals = []
    for x in list(finite) + list(ties):
        for y in f32_neighbours(np.float32(x) * v_scale):
            vals += [y, -y]
    n = max(len(keys), len(vals))
    tokens = -(-n // HEAD)
    key = np.zeros(tokens * HEAD, np.float32)
    key[:len(keys)] = keys
    value = np.zeros(tokens * HEAD, np.float32)
    value[:len(vals)] = vals
    blocks = -(-tokens // BLOCK)
    args = [key.reshape(tokens, 1, HEAD), value.reshape(tokens, 1, HEAD),
            np.zeros((blocks, 2, BLOCK, 1, HEAD), np.float32),
            np.arange(tokens, dtype=np.int64),
            np.array([1.0], np.float32), np.array([v_scale], np.float32)]
    save(directory, args)


def read_inputs(fmt, directory):
    # Byte b's value at position b: the finite codes, 0 for the NaN and
    # infinity patterns past them, then the same negated (bit 7).
    positive = np.zeros(128)
    table = fp8_table(fmt)
    positive[:len(table)] = table
    row = np.concatenate([positive, -positive])
    rng = np.random.default_rng(7)
    # Requests: 0 a decode over one key (block 0), 1 a prefill of two tokens
    # over two keys (block 1), 2 a decode over 40 random keys (blocks 2..4).
    cache = np.zeros((5, 2, BLOCK, 1, HEAD), np.float32)
    finite = row[np.abs(row) <= 16]
    cache[:, :, :, 0, :] = rng.choice(finite, size=(5, 2, BLOCK, HEAD))
    cache[0, 1, 0, 0, :] = row
    cache[1, 1, 0, 0, :] = row
    query = rng.uniform(-1, 1, size=(4, 1, HEAD)).astype(np.float32)
    args = [query, cache,
            np.array([[0, 0, 0], [1, 0, 0], [2, 3, 4]], np.int32),
            np.array([1, 2, 40], np.int32),
            np.array([0, 1, 3, 4], np.int32),
            np.array([0.0625], np.float32), np.array([2.0], np.float32)]
    save(directory, args)


def save(directory, args):
    os.makedirs(directory, exist_ok=True)
    for i, a in enumerate(args):
        np.save(os.path.join(directory, "arg%d.npy" % i), a)


if __name__ == "__main__":
    mode, fmt, directory = sys.argv[1:4]
    {"write": write_inputs, "read": read_inputs}[mode](fmt, directory)
