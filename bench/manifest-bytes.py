#!/usr/bin/env python3
"""Where a bundle manifest's bytes go, per variant: each table's lines as
written (runtime/bundle/Bundle.h: a record, or a column of the kernel
table, per line), and the variant records split into their fields.

Usage: bench/manifest-bytes.py BUNDLE

For the figures in bench/README.md (format 6); `attn-bundle stats` gives
the manifest's total."""
import json
import os
import sys


def compact(value):
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def table_lines(text):
    """Bytes per top-level member, from the text as written (a member runs
    from its key's line to the next one's)."""
    sizes, current = {}, None
    for line in text.splitlines(keepends=True):
        if line.startswith('"'):
            current = line[1:line.index('"', 1)]
        elif current is None:
            current = "format_version"
        sizes[current] = sizes.get(current, 0) + len(line.encode())
    return sizes


def variant_fields(manifest):
    """Bytes of each field of the variant records, compact JSON."""
    fields = {"name": 0, "parameters": 0, "subgroup sizes, cache keys": 0,
              "plan indices": 0, "plan values": 0, "kernel runs": 0}
    for name, parameters, entries in manifest["variants"]:
        fields["name"] += compact(name)
        fields["parameters"] += compact(parameters)
        for size, key, plan, values, runs in entries:
            fields["subgroup sizes, cache keys"] += compact([size, key])
            fields["plan indices"] += compact(plan)
            fields["plan values"] += compact(values)
            fields["kernel runs"] += compact(runs)
    return fields


def main():
    path = os.path.join(sys.argv[1], "manifest.json")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    manifest = json.loads(text)
    n = max(len(manifest["variants"]), 1)
    kernels = len(manifest["kernels"]["kinds"])
    # Rounded down, as attn-bundle stats gives it.
    print("%s: %d bytes, %d variants, %d kernel records: %d bytes per "
          "variant" % (path, len(text.encode()), n, kernels,
                       len(text.encode()) // n))
    tables = table_lines(text)
    for table, size in sorted(tables.items(), key=lambda t: -t[1]):
        print("  %-28s %8.1f" % (table, size / n))
    if sum(tables.values()) != len(text.encode()):
        print("error: the tables' lines make %d bytes, not the manifest's %d"
              % (sum(tables.values()), len(text.encode())), file=sys.stderr)
        return 1
    print("variant records by field:")
    for field, size in variant_fields(manifest).items():
        print("  %-28s %8.1f" % (field, size / n))
    columns = manifest["kernels"]
    print("kernel columns: kinds %.1f, bounds %.1f, hashes %.1f, symbols "
          "%.1f, files %.1f" % tuple(compact(columns[c]) / n for c in (
              "kinds", "bounds", "hashes", "symbols", "files")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
