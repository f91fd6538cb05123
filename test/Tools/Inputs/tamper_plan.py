#!/usr/bin/env python3
"""Edits the plans of a bundle as an attacker would, and re-stamps it.

Usage: tamper_plan.py BUNDLE KERNEL (param K | grid D) VALUE

In every plan of BUNDLE/manifest.json, each launch of a kernel whose symbol
contains KERNEL gets VALUE as its params-buffer element K (param) or as its
grid dimension D (grid), from a new constant slot; then the manifest hash
is recomputed as the runtime computes it, so the bundle loads as if
attn-compile had written it. The reproducer of issue 34, item 3.

Format 4 and later share plan shapes between entries and give each entry its
numbers (runtime/bundle/PlanTemplate.h): the new constant is a new op at
the front of the shape, and its value goes into every entry of that shape
at the same place (entries are written whole, without the changed-values
shorthand).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manifest_hash import manifest_text  # noqa: E402

HOLES = {"const": 1, "alloc": 1, "launch": 3}


def op_positions(shape):
    """The position of each op's first value among the plan's values."""
    at = sum(1 + len(t["shape"]) for key in ("arguments", "results")
             for t in shape.get(key, []))
    positions = []
    for op in shape["ops"]:
        positions.append(at)
        at += HOLES.get(op["op"], 0)
    return positions


def tamper(shape, values, kernel, what, index):
    """Edits `shape` so that the launches of `kernel` read a new constant,
    put first among the ops; returns how many launches changed."""
    positions = op_positions(shape)
    consts = {op["result"]: values[positions[i]]
              for i, op in enumerate(shape["ops"]) if op["op"] == "const"}
    slot = shape["num_slots"]
    changed = 0
    for launch in [o for o in shape["ops"] if o["op"] == "launch"]:
        if kernel not in launch["kernel"]:
            continue
        if what == "grid":
            launch["operands"][index] = slot
            changed += 1
            continue
        params = launch["operands"][-1]
        for store in [o for o in shape["ops"] if o["op"] == "store"]:
            buffer, at, _ = store["operands"]
            if buffer == params and consts.get(at) == index:
                store["operands"][2] = slot
                changed += 1
    if changed:
        shape["num_slots"] += 1
        shape["ops"].insert(0, {"op": "const", "result": slot, "imm": None})
    return changed


def entries(manifest):
    """Every entry with its values whole (the shorthand undone)."""
    for variant in manifest["variants"]:
        previous = None
        for entry in variant[2]:
            if isinstance(entry[3], dict):
                # "n": the number of values, where it differs from the
                # entry before's (its positions past that end are given).
                n = entry[3].get("n", len(previous))
                values = (list(previous) + [None] * n)[:n]
                for key, value in entry[3].items():
                    if key != "n":
                        values[int(key)] = value
                entry[3] = values
            previous = entry[3]
            yield entry


def main():
    bundle, kernel, what, index, value = sys.argv[1:6]
    path = bundle + "/manifest.json"
    with open(path) as f:
        manifest = json.load(f)
    all_entries = list(entries(manifest))
    changed = 0
    for i, shape in enumerate(manifest["plans"]):
        users = [e for e in all_entries if e[2] == i]
        if not users:
            continue
        first = op_positions(shape)[0] if shape["ops"] else 0
        n = tamper(shape, users[0][3], kernel, what, int(index))
        if n:
            for e in users:
                e[3].insert(first, int(value))
        changed += n
    if not changed:
        sys.exit(f"tamper_plan.py: no launch of {kernel} to change")
    with open(path, "w") as f:
        f.write(manifest_text(manifest))
    print(f"tamper_plan.py: {changed} launch(es) of {kernel} changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
