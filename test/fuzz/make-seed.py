#!/usr/bin/env python3
"""Flattens an attn-compile bundle into a fuzz seed.

Usage: make-seed.py bundle BUNDLE_DIR OUT [INPUTS_FROM]
       make-seed.py plan BUNDLE_DIR OUT [INPUTS_FROM]

bundle: the bundle target's format (BundleFuzzer.cpp): the manifest with
"manifest_hash": "restamp", a "#file NAME" section per kernel file, then
"#inputs". plan: the plan target's (PlanFuzzer.cpp): the manifest, an empty
"#edits" section, then "#inputs". The #inputs bytes are those of the seed
INPUTS_FROM when given (to keep an old seed's draws), else 512 bytes of a
fixed pattern.
"""
import json
import os
import sys


def inputs_of(path):
    if not path:
        return bytes((i * 37 + 11) % 251 for i in range(512))
    data = open(path, "rb").read()
    at = data.find(b"\n#inputs\n")
    return data[at + len(b"\n#inputs\n"):] if at >= 0 else b""


def main():
    kind, bundle, out = sys.argv[1:4]
    inputs = inputs_of(sys.argv[4] if len(sys.argv) > 4 else None)
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    manifest["manifest_hash"] = "restamp"
    text = json.dumps(manifest, indent=1).encode()
    with open(out, "wb") as f:
        f.write(text)
        if kind == "bundle":
            for k in manifest["kernels"]:
                f.write(b"\n#file " + k["file"].encode() + b"\n")
                f.write(open(os.path.join(bundle, k["file"]), "rb").read())
        else:
            f.write(b"\n#edits\n")
        f.write(b"\n#inputs\n")
        f.write(inputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
