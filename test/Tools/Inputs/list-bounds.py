#!/usr/bin/env python3
"""Prints the launch bounds of each kernel of a bundle, one line each.

Usage: list-bounds.py BUNDLE

For every kernel entry point (once, whatever its targets and forms):
  ENTRY params NAME,... args NAME,...
  ENTRY: MIN <= PLUS + TIMES * F * ... <= MAX
with the arguments and params named (bytes(kv_cache), num_reqs, g0).
"""
import json
import subprocess
import sys


def kernels(bundle):
    """Every kernel of every entry, whole (attn-bundle show)."""
    shown = json.loads(subprocess.check_output(["attn-bundle", "show", bundle]))
    for variant in shown["variants"]:
        yield from variant["kernels"]


def main():
    seen = set()
    for k in kernels(sys.argv[1]):
        bounds = k["launch"].get("bounds")
        if bounds is None or k["entry"] in seen:
            continue
        seen.add(k["entry"])
        params, args = bounds["params"], bounds["arguments"]

        def name(q):
            if isinstance(q, int):
                return str(q)
            if q.startswith("bytes"):
                return "bytes(" + args[int(q[5:])] + ")"
            if q.startswith("p"):
                return params[int(q[1:])]
            return q

        print(f"{k['entry']} params {','.join(params)} args {','.join(args)}")
        for c in bounds["checks"]:
            product = "".join(" * " + name(f) for f in c["of"])
            print(f"{k['entry']}: {c['min']} <= {c['plus']} + {c['times']}"
                  f"{product} <= {name(c['max'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
