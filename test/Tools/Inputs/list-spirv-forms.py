"""Prints, per SPIR-V kernel of a bundle, its entry point and ABI form.

One line per (symbol, form), sorted: "ENTRY bindings" or "ENTRY addresses
N" (N: num_buffers). A symbol with both forms prints two lines; each form
must name its own file.
"""
import subprocess
import json
import sys

manifest = json.loads(subprocess.check_output(["attn-bundle", "show", sys.argv[1]]))
lines = set()
files = {}
for variant in manifest["variants"]:
    for kernel in variant["kernels"]:
        if kernel["target"] != "spirv":
            continue
        launch = kernel["launch"]
        if launch.get("abi") == "buffer_address":
            form = "addresses %d" % launch["num_buffers"]
        else:
            form = "bindings"
        key = (kernel["symbol"], form)
        if key in files and files[key] != kernel["file"]:
            sys.exit("two files for one form of " + kernel["symbol"])
        files[key] = kernel["file"]
        lines.add(kernel["entry"] + " " + form)
if len(set(files.values())) != len(files):
    sys.exit("two forms share a file")
for line in sorted(lines):
    print(line)
