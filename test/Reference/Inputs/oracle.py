#!/usr/bin/env python3
"""An independent NumPy oracle for attn's reference interpreter.

Usage: oracle.py --variant KEY=VALUE,... DIR

Reads the inputs DIR/arg<i>.npy and the results DIR/result<i>.npy of a run of
the function `attn-compile --variant KEY=VALUE,...` builds, recomputes the
results in float64 from DESIGN.md's formulas (sharing no code with the C++
reference), and compares them with vLLM's tolerances for the output dtype:
f32 atol 1e-5 rtol 1.3e-6, f16 atol 1e-3 rtol 1e-3, bf16 atol 1e-3 rtol
1.6e-2 (lse is always f32). reshape_and_cache must match exactly. Exits 0 when
every element is within tolerance, 1 otherwise, printing the worst elements.

With kv_cache_dtype=fp8 / fp8_e4m3 / fp8_e5m2 the cache (stored as f32 in
the .npy files) holds fp8 values and the functions take the scales last:
attention reads scale * cached, the cache write must store exactly the fp8
value nearest to the f32 quotient x / scale (vLLM's write: divided in f32
first, then ties to the even pattern, saturated), found here by searching
the table of every fp8 value built from the formats' fields. With
kv_scale_strategy=attn_head the scales hold one value per kv head, and kv
head g reads (or is written with) scale g.
"""

import argparse
import math
import os
import sys

import numpy as np

TOLERANCES = {"f32": (1e-5, 1.3e-6), "f16": (1e-3, 1e-3), "bf16": (1e-3, 1.6e-2)}


def parse_variant(spec):
    """The variant's keys with attn-compile's documented defaults."""
    given = dict(item.split("=", 1) for item in spec.split(",") if item)
    op = given["op"]
    num_heads = int(given.get("num_heads", 32))
    default_kv_heads = 8 if op == "reshape_and_cache" else num_heads
    v = {
        "op": op,
        "num_heads": num_heads,
        "num_kv_heads": int(given.get("num_kv_heads", default_kv_heads)),
        "head_size": int(given.get("head_size", 128)),
        "block_size": int(given.get("block_size", 16)),
        "dtype": given.get("dtype", "bf16"),
        "layout": given.get("layout", "nhd"),
        "causal": given.get("causal", "true") in ("true", "1"),
        "window_left": int(given.get("window_left", -1)),
        "window_right": int(given.get("window_right", -1)),
        "soft_cap": float(given.get("soft_cap", 0.0)),
        "alibi": given.get("alibi", "false") in ("true", "1"),
        "sinks": given.get("sinks", "false") in ("true", "1"),
        "kv_lora_rank": int(given.get("kv_lora_rank", 512)),
        "rope_dim": int(given.get("rope_dim", 64)),
        # reshape_and_cache with kv_lora_rank writes the MLA latent cache.
        "latent_cache": "kv_lora_rank" in given,
        "fp8": {"auto": None, "fp8": "e4m3", "fp8_e4m3": "e4m3",
                "fp8_e5m2": "e5m2"}[given.get("kv_cache_dtype", "auto")],
        "per_head_scales": given.get("kv_scale_strategy") == "attn_head",
    }
    if "scale" in given:
        scale = float(given["scale"])
    elif op == "mla_decode":
        scale = 1.0 / math.sqrt(v["kv_lora_rank"] + v["rope_dim"])
    else:
        scale = 1.0 / math.sqrt(v["head_size"])
    # The IR stores scale and soft cap as f32 attributes: that value is the
    # one the function computes with.
    v["scale"] = float(np.float32(scale))
    v["soft_cap"] = float(np.float32(v["soft_cap"]))
    return v


def load(directory, name):
    return np.load(os.path.join(directory, name + ".npy"))


def f64(a):
    return np.asarray(a, dtype=np.float64)


def fp8_table(fmt):
    """Every finite non-negative value of the format, by bit pattern."""
    mantissa_bits, bias, patterns = (3, 7, 0x7F) if fmt == "e4m3" else (2, 15, 0x7C)
    values = []
    for bits in range(patterns):  # e4m3: 0x7F is NaN; e5m2: 0x7C.. inf, NaN
        e, m = bits >> mantissa_bits, bits & ((1 << mantissa_bits) - 1)
        frac = m / (1 << mantissa_bits)
        values.append(frac * 2.0 ** (1 - bias) if e == 0
                      else (1 + frac) * 2.0 ** (e - bias))
    return np.array(values)


def f32_quotient(x, scale):
    """x / scale divided in f32, as vLLM's cache write divides
    (quant_utils.cuh: float(x) / scale) before rounding to fp8."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return f64(np.float32(x) / np.float32(scale))


def kv_scales(v, d, name, head_axes):
    """The scale file `name` shaped to scale rows whose kv head axis has
    `head_axes` axes after it: [G] with kv_scale_strategy=attn_head, else
    [1] (the same for every head)."""
    scale = f64(load(d, name))
    want = v["num_kv_heads"] if v["per_head_scales"] else 1
    if scale.shape != (want,):
        sys.exit(f"oracle: {name} has shape {scale.shape}, expected ({want},)")
    return scale.reshape((-1,) + (1,) * head_axes)


def fp8_quantize(x, fmt):
    """x rounded to the nearest fp8 value, ties to the even bit pattern,
    saturated to the largest finite one; NaN stays NaN."""
    table = fp8_table(fmt)
    mag = np.minimum(np.abs(f64(x)), table[-1])
    hi = np.clip(np.searchsorted(table, mag), 1, len(table) - 1)
    lo = hi - 1
    d_lo, d_hi = mag - table[lo], table[hi] - mag
    pick = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo)
    q = np.where(np.isnan(mag), np.nan, table[pick])
    return np.where(np.signbit(x), -q, q)


def softmax(scores, sink=None):
    """Softmax weights over the last axis of `scores` (-inf: not visible) and
    the log of the denominator, with an optional extra logit in the
    denominator only. A row with nothing in its denominator gets weights 0 and
    lse -inf."""
    m = np.max(scores, axis=-1, initial=-np.inf)
    if sink is not None:
        m = np.maximum(m, sink)
    safe_m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(np.isfinite(scores), np.exp(scores - safe_m[..., None]), 0.0)
    denom = e.sum(axis=-1)
    if sink is not None:
        denom = denom + np.exp(sink - safe_m)
    weights = e / np.where(denom > 0, denom, 1.0)[..., None]
    with np.errstate(divide="ignore"):
        lse = np.where(denom > 0, safe_m + np.log(denom), -np.inf)
    return weights, lse


def paged_attention(v, d):
    n = 5
    q, cache, table, lens, qsl = (load(d, f"arg{i}") for i in range(n))
    alibi = sinks = None
    if v["alibi"]:
        alibi = f64(load(d, f"arg{n}"))
        n += 1
    if v["sinks"]:
        sinks = f64(load(d, f"arg{n}"))
        n += 1
    q, cache = f64(q), f64(cache)
    if v["fp8"]:
        # Rows [.., G, D] (nhd) or [.., G, B, D] (hnd).
        axes = 1 if v["layout"] == "nhd" else 2
        cache[:, 0] *= kv_scales(v, d, f"arg{n}", axes)
        cache[:, 1] *= kv_scales(v, d, f"arg{n + 1}", axes)
    if v["layout"] == "hnd":  # -> [NB, 2, B, G, D]
        cache = cache.transpose(0, 1, 3, 2, 4)
    t_total, h, dim = q.shape
    g = cache.shape[3]
    b = cache.shape[2]
    head_to_kv = np.arange(h) // (h // g)
    out = np.zeros((t_total, h, dim))
    lse = np.full((t_total, h), -np.inf)
    for r in range(len(lens)):
        start, end = int(qsl[r]), int(qsl[r + 1])
        q_len, seq_len = end - start, int(lens[r])
        context = seq_len - q_len
        j = np.arange(seq_len)
        blocks = table[r, j // b]
        keys = cache[blocks, 0, j % b][:, head_to_kv]  # [S, H, D]
        values = cache[blocks, 1, j % b][:, head_to_kv]
        pos = context + np.arange(q_len)  # [Q]
        s = v["scale"] * np.einsum("qhd,shd->hqs", q[start:end], keys)
        rel = j[None, :] - pos[:, None]  # [Q, S]: j - p
        # FlashAttention-2's order: the soft cap, then the ALiBi bias
        # -slope * |j - p| (non-causal rows too).
        if v["soft_cap"] > 0:
            s = v["soft_cap"] * np.tanh(s / v["soft_cap"])
        if alibi is not None:
            s = s - alibi[:, None, None] * np.abs(rel)[None]
        visible = np.ones_like(rel, dtype=bool)
        if v["causal"]:
            visible &= rel <= 0
        if v["window_left"] >= 0:
            visible &= rel >= -v["window_left"]
        if not v["causal"] and v["window_right"] >= 0:
            visible &= rel <= v["window_right"]
        s = np.where(visible[None], s, -np.inf)
        sink = None if sinks is None else sinks[:, None]  # [H, 1]
        weights, l = softmax(s, sink)
        out[start:end] = np.einsum("hqs,shd->qhd", weights, values)
        lse[start:end] = l.T
    return [(out, v["dtype"]), (lse, "f32")]


def mla_decode(v, d):
    q, cache, table, lens = (f64(load(d, f"arg{i}")) for i in range(4))
    table, lens = table.astype(np.int64), lens.astype(np.int64)
    if v["fp8"]:
        cache = cache * f64(load(d, "arg4"))[0]
    rank = v["kv_lora_rank"]
    r_total, h, _ = q.shape
    b = cache.shape[1]
    out = np.zeros((r_total, h, rank))
    lse = np.full((r_total, h), -np.inf)
    for r in range(r_total):
        j = np.arange(int(lens[r]))
        rows = cache[table[r, j // b], j % b]  # [S, L + P]
        s = v["scale"] * (q[r] @ rows.T)  # [H, S]
        weights, lse[r] = softmax(s)
        out[r] = weights @ rows[:, :rank]
    return [(out, v["dtype"]), (lse, "f32")]


def merge_states(v, d):
    out_a, lse_a, out_b, lse_b = (f64(load(d, f"arg{i}")) for i in range(4))
    # An lse of either infinity is an empty side (vLLM's
    # merge_attn_states.cu); its out is never read. NaN stays NaN.
    lse_a = np.where(np.isinf(lse_a), -np.inf, lse_a)
    lse_b = np.where(np.isinf(lse_b), -np.inf, lse_b)
    m = np.maximum(lse_a, lse_b)
    safe_m = np.where(np.isfinite(m), m, 0.0)
    wa, wb = np.exp(lse_a - safe_m), np.exp(lse_b - safe_m)
    total = wa + wb
    nonempty = total != 0  # NaN too: a NaN lse makes the row NaN
    denom = np.where(nonempty, total, 1.0)
    term_a = np.where(np.isneginf(lse_a)[..., None], 0.0, out_a * wa[..., None])
    term_b = np.where(np.isneginf(lse_b)[..., None], 0.0, out_b * wb[..., None])
    out = (term_a + term_b) / denom[..., None]
    with np.errstate(divide="ignore"):
        lse = np.where(nonempty, safe_m + np.log(denom), -np.inf)
    return [(out, v["dtype"]), (lse, "f32")]


def reshape_and_cache(v, d):
    key, value, cache, slots = (load(d, f"arg{i}") for i in range(4))
    expected = np.array(cache, copy=True)
    if v["fp8"]:
        # key and value are [T, G, D]; the latent rows have one scale.
        k_scale = f64(load(d, "arg4"))[0]
        v_scale = k_scale
        if not v["latent_cache"]:
            k_scale = kv_scales(v, d, "arg4", 1)
            v_scale = kv_scales(v, d, "arg5", 1)
        key = fp8_quantize(f32_quotient(key, k_scale), v["fp8"])
        value = fp8_quantize(f32_quotient(value, v_scale), v["fp8"])
    b = v["block_size"]
    for t, slot in enumerate(slots):
        if slot < 0:
            continue
        block, offset = divmod(int(slot), b)
        if v["latent_cache"]:  # key = kv_c [T, L], value = k_pe [T, P]
            expected[block, offset] = np.concatenate([key[t], value[t]])
        elif v["layout"] == "nhd":
            expected[block, 0, offset] = key[t]
            expected[block, 1, offset] = value[t]
        else:
            expected[block, 0, :, offset] = key[t]
            expected[block, 1, :, offset] = value[t]
    return [(expected, "exact")]


def compare(index, got, want, kind):
    if got.shape != want.shape:
        print(f"result{index}: shape {got.shape}, expected {want.shape}")
        return False
    if kind == "exact":  # bit for bit, NaN matching NaN
        same = np.array_equal(got, want, equal_nan=True)
        if not same:
            bad = np.argwhere((got != want) & ~(np.isnan(got) & np.isnan(want)))
            print(f"result{index}: {len(bad)} elements differ, first at "
                  f"{tuple(bad[0])}: {got[tuple(bad[0])]} vs "
                  f"{want[tuple(bad[0])]}")
        return same
    atol, rtol = TOLERANCES[kind]
    got = f64(got)
    both_inf = np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
    with np.errstate(invalid="ignore"):
        err = np.where(both_inf, 0.0, np.abs(got - want))
    err = np.where(np.isnan(err), np.inf, err)
    limit = atol + rtol * np.where(np.isfinite(want), np.abs(want), 0.0)
    bad = err > limit
    worst = np.unravel_index(np.argmax(err - limit), err.shape)
    status = "FAIL" if bad.any() else "ok"
    print(f"result{index} ({kind}): {status}, max abs err {err.max():.3g}, "
          f"worst at {tuple(int(i) for i in worst)}: got {got[worst]!r}, "
          f"want {want[worst]!r}, {int(bad.sum())} of {err.size} outside "
          f"atol {atol} rtol {rtol}")
    return not bad.any()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("dir")
    args = parser.parse_args()
    v = parse_variant(args.variant)
    ops = {"paged_attention": paged_attention, "mla_decode": mla_decode,
           "merge_states": merge_states, "reshape_and_cache": reshape_and_cache}
    expected = ops[v["op"]](v, args.dir)
    ok = True
    for i, (want, kind) in enumerate(expected):
        ok &= compare(i, load(args.dir, f"result{i}"), want, kind)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
