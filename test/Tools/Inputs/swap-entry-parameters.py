#!/usr/bin/env python3
"""Swaps the parameters of two variants of a bundle, so that each entry
claims the other's variant while keeping its own kernels and plan, and
rewrites the manifest's hash as attn-compile computes it (BLAKE2b-256 of
the manifest without the fields manifest_hash and signature, dumped
compactly with sorted keys). A signature stays as it was: it no longer
holds, which the runtime finds.

Usage: swap-entry-parameters.py BUNDLE NAME_A NAME_B

Test tooling for attn-diff --bundle: a bundle whose kernels do not compute
the variant its manifest names, which the runtime cannot tell by hashes
(only by a signature); and an attacker's edit, re-stamped.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manifest_hash import digest, manifest_text  # noqa: E402
from manifest_hash import parameters, set_parameters  # noqa: E402


def main():
    bundle, name_a, name_b = sys.argv[1:4]
    path = bundle + "/manifest.json"
    with open(path) as f:
        manifest = json.load(f)
    if digest(manifest) != manifest["manifest_hash"]:
        sys.exit("swap-entry-parameters.py: cannot reproduce the manifest's "
                 "hash; attn-compile's hashing changed")
    params = {v[0]: parameters(manifest, v) for v in manifest["variants"]}
    for v in manifest["variants"]:
        if v[0] == name_a:
            set_parameters(manifest, v, params[name_b])
        elif v[0] == name_b:
            set_parameters(manifest, v, params[name_a])
    with open(path, "w") as f:
        f.write(manifest_text(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
