"""Checks that every float knob of a grid reaches the bundle's manifest as the
f32 the user wrote: for each variant entry, the manifest's text of `scale`
and `soft_cap` must read back as float32(grid value). Prints one line per
variant and a summary; exits 1 on the first mismatch."""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manifest_hash import parameters  # noqa: E402


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


grid = json.load(open(sys.argv[1]))
manifest = json.load(open(sys.argv[2] + "/manifest.json"))
wanted = {key: {f32(v) for v in grid[key]} for key in ("scale", "soft_cap")}
seen = {key: set() for key in wanted}
for variant in manifest["variants"]:
    params = parameters(manifest, variant)
    for key in wanted:
        have = f32(params[key])
        if have not in wanted[key]:
            print(f"error: {variant[0]}: {key} {params[key]} "
                  f"is none of the grid's {sorted(wanted[key])}")
            sys.exit(1)
        seen[key].add(have)
for key in wanted:
    if seen[key] != wanted[key]:
        print(f"error: {key}: the grid has {sorted(wanted[key])}, the bundle "
              f"{sorted(seen[key])}")
        sys.exit(1)
print(f"{len(manifest['variants'])} variants: every float knob is the grid's f32")
