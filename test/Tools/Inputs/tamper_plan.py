#!/usr/bin/env python3
"""Edits the plans of a bundle as an attacker would, and re-stamps it.

Usage: tamper_plan.py BUNDLE KERNEL (param K | grid D) VALUE

In every plan of BUNDLE/manifest.json, each launch of a kernel whose symbol
contains KERNEL gets VALUE as its params-buffer element K (param) or as its
grid dimension D (grid), from a new constant slot; then the manifest hash
is recomputed as the runtime computes it (FNV-1a 64 over the compact JSON
without the hash, keys sorted), so the bundle loads as if attn-compile had
written it. The reproducer of issue 34, item 3.
"""
import json
import sys


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def constant(plan, value):
    """A new slot holding `value`, defined before every op."""
    slot = plan["num_slots"]
    plan["num_slots"] += 1
    plan["ops"].insert(0, {"op": "const", "result": slot, "imm": value})
    return slot


def tamper(plan, kernel, what, index, value):
    """The number of launches of `kernel` in `plan` changed."""
    consts = {o["result"]: o["imm"] for o in plan["ops"] if o["op"] == "const"}
    changed = 0
    for launch in [o for o in plan["ops"] if o["op"] == "launch"]:
        if kernel not in launch["kernel"]:
            continue
        if what == "grid":
            launch["operands"][index] = constant(plan, value)
            changed += 1
            continue
        params = launch["operands"][-1]
        for store in [o for o in plan["ops"] if o["op"] == "store"]:
            buffer, at, _ = store["operands"]
            if buffer == params and consts.get(at) == index:
                store["operands"][2] = constant(plan, value)
                changed += 1
    return changed


def main():
    bundle, kernel, what, index, value = sys.argv[1:6]
    path = bundle + "/manifest.json"
    with open(path) as f:
        manifest = json.load(f)
    changed = sum(tamper(p, kernel, what, int(index), int(value))
                  for p in manifest["plans"])
    if not changed:
        sys.exit(f"tamper_plan.py: no launch of {kernel} to change")
    manifest.pop("manifest_hash")
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    manifest["manifest_hash"] = "%016x" % fnv1a64(text.encode())
    with open(path, "w") as f:
        json.dump(manifest, f)
    print(f"tamper_plan.py: {changed} launch(es) of {kernel} changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
