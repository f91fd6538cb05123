"""Replaces the first compressed SPIR-V kernel file of a bundle with bytes
that are not a zstd frame, and names it by their hash as attn-compile would
(file name and manifest record), the manifest's hash rewritten: only the
frame itself is wrong."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "Tools", "Inputs"))
from manifest_hash import (content_hash, kernel_hash,  # noqa: E402
                           manifest_text, set_kernel_hash)

bundle = sys.argv[1]
path = os.path.join(bundle, "manifest.json")
with open(path) as f:
    manifest = json.load(f)
kind = next(i for i, k in enumerate(manifest["kinds"]) if k[3] == ".spv.zst")
record = manifest["kernels"]["kinds"].index(kind)
entry, ext = manifest["kinds"][kind][1], manifest["kinds"][kind][3]
junk = b"not a zstd frame"
os.remove(os.path.join(bundle, "kernels", "%s.%s%s" % (
    entry, kernel_hash(manifest, record), ext)))
set_kernel_hash(manifest, record, content_hash(junk))
with open(os.path.join(bundle, "kernels", "%s.%s%s" % (
        entry, content_hash(junk), ext)), "wb") as f:
    f.write(junk)
with open(path, "w") as f:
    f.write(manifest_text(manifest))
