"""Checks that every float knob of a grid reaches the bundle's manifest as the
f32 the user wrote: for each variant entry, the manifest's text of `scale`
and `soft_cap` must read back as float32(grid value). Prints one line per
variant and a summary; exits 1 on the first mismatch."""
import json
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


grid = json.load(open(sys.argv[1]))
manifest = json.load(open(sys.argv[2] + "/manifest.json"))
wanted = {key: {f32(v) for v in grid[key]} for key in ("scale", "soft_cap")}
seen = {key: set() for key in wanted}
for entry in manifest["variants"]:
    for key in wanted:
        have = f32(entry["parameters"][key])
        if have not in wanted[key]:
            print(f"error: {entry['name']}: {key} {entry['parameters'][key]} "
                  f"is none of the grid's {sorted(wanted[key])}")
            sys.exit(1)
        seen[key].add(have)
for key in wanted:
    if seen[key] != wanted[key]:
        print(f"error: {key}: the grid has {sorted(wanted[key])}, the bundle "
              f"{sorted(seen[key])}")
        sys.exit(1)
print(f"{len(manifest['variants'])} variants: every float knob is the grid's f32")
