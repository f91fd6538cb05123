#!/usr/bin/env python3
"""Swaps the parameters of two variants of a bundle, so that each entry
claims the other's variant while keeping its own kernels and plan, and
rewrites the manifest's hash as attn-compile computes it (FNV-1a 64 of the
manifest without the field, dumped compactly with sorted keys).

Usage: swap-entry-parameters.py BUNDLE NAME_A NAME_B

Test tooling for attn-diff --bundle: a bundle whose kernels do not compute
the variant its manifest names, which the runtime cannot tell by hashes.
"""
import json
import sys


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def digest(manifest):
    rest = {k: v for k, v in manifest.items() if k != "manifest_hash"}
    text = json.dumps(rest, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)
    return fnv1a64(text.encode())


def main():
    bundle, name_a, name_b = sys.argv[1:4]
    path = bundle + "/manifest.json"
    with open(path) as f:
        manifest = json.load(f)
    if digest(manifest) != manifest["manifest_hash"]:
        sys.exit("swap-entry-parameters.py: cannot reproduce the manifest's "
                 "hash; attn-compile's hashing changed")
    params = {v["name"]: v["parameters"] for v in manifest["variants"]}
    for v in manifest["variants"]:
        if v["name"] == name_a:
            v["parameters"] = params[name_b]
        elif v["name"] == name_b:
            v["parameters"] = params[name_a]
    manifest["manifest_hash"] = digest(manifest)
    with open(path, "w") as f:
        json.dump(manifest, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
