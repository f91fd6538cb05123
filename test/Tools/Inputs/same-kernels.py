"""Checks that attn-translate's kernel files equal a bundle's, byte for byte.

usage: same-kernels.py BUNDLE DIR EXT
Every DIR/<entry>.<EXT> must be one of the bundle's kernel files of that
entry point with that extension (the target's; the manifest names them),
and the bundle may have no kernel of that extension that DIR lacks. Prints one line per entry that matched.
"""
import subprocess
import json
import os
import sys

bundle, directory, ext = sys.argv[1:4]
manifest = json.loads(subprocess.check_output(["attn-bundle", "show", bundle]))
files = {}
for variant in manifest["variants"]:
    for kernel in variant["kernels"]:
        if kernel["file"].endswith("." + ext):
            files.setdefault(kernel["entry"], set()).add(kernel["file"])
ours = sorted(f[: -len(ext) - 1] for f in os.listdir(directory)
              if f.endswith("." + ext))
if sorted(files) != ours:
    sys.exit("entries differ: bundle %s, attn-translate %s" % (sorted(files), ours))
for entry in ours:
    mine = open(os.path.join(directory, entry + "." + ext), "rb").read()
    same = [f for f in files[entry]
            if open(os.path.join(bundle, f), "rb").read() == mine]
    if not same:
        sys.exit("%s: attn-translate's kernel is not the bundle's" % entry)
    print(entry, "same")
