"""Checks that every SPIR-V kernel of a bundle has its MSL twin.

Usage: check-msl-twins.py BUNDLE_DIR

For every variant: the same kernel symbols for targets spirv and msl, the
same workgroup (threadgroup) size and subgroup size in their launch facts,
argument i at [[buffer(i)]], and an MSL file whose kernel function is the
recorded entry point. Prints one summary line; exits 1 naming the first
mismatch.
"""

import subprocess
import json
import os
import re
import sys


def fail(message):
    print(f"error: {message}")
    sys.exit(1)


def main():
    bundle = sys.argv[1]
    manifest = json.loads(subprocess.check_output(["attn-bundle", "show", bundle]))
    variants = manifest["variants"]
    twins = 0
    versions = set()
    for variant in variants:
        by_target = {"spirv": {}, "msl": {}}
        for kernel in variant["kernels"]:
            if kernel["target"] in by_target:
                by_target[kernel["target"]][kernel["symbol"]] = kernel
        spirv, msl = by_target["spirv"], by_target["msl"]
        if not spirv or set(spirv) != set(msl):
            fail(f"{variant['name']}: spirv kernels {sorted(spirv)} but msl "
                 f"kernels {sorted(msl)}")
        for symbol, m in msl.items():
            s = spirv[symbol]["launch"]
            launch = m["launch"]
            where = f"{variant['name']} {symbol}"
            for key in ["workgroup_size", "subgroup_size"]:
                if launch[key] != s[key]:
                    fail(f"{where}: msl {key} {launch[key]} != spirv {s[key]}")
            indices = launch["buffer_indices"]
            if indices != list(range(len(indices))):
                fail(f"{where}: buffer_indices {indices}")
            with open(os.path.join(bundle, m["file"])) as f:
                source = f.read()
            entry = re.escape(launch["entry_point"])
            if not re.search(rf"^kernel void {entry}\(", source, re.M):
                fail(f"{where}: {m['file']} has no kernel {entry}")
            versions.add(launch["msl_version"])
            twins += 1
    print(f"{len(variants)} variants, {twins} kernels: every SPIR-V kernel "
          f"has its MSL twin; MSL versions {', '.join(sorted(versions))}")


if __name__ == "__main__":
    main()
