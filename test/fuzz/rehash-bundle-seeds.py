#!/usr/bin/env python3
"""Brings the seeds of the bundle fuzz target (test/fuzz/bundle/*.bundle) to
the current manifest format in place: format_version becomes FORMAT (a
version past 2^32 keeps its distance from 2^32, so the truncation
reproducer still truncates to the current version), and every kernel
record's "hash" becomes the contentHash (BLAKE2b-256, hex) of the bytes its
#file section holds (of nothing for a #dir). The manifest keeps
"manifest_hash": "restamp", which the target stamps.

Usage: rehash-bundle-seeds.py FORMAT SEED...
"""
import hashlib
import json
import re
import sys

HEADER = re.compile(rb"\n#(file |dir |inputs)")


def sections(data):
    """The manifest, then (kind, name, body) per section, then the #inputs
    bytes (None when there is no #inputs)."""
    parts = []
    at = HEADER.search(data)
    manifest = data[:at.start()] if at else data
    while at:
        eol = data.find(b"\n", at.start() + 1)
        line = data[at.start() + 2:eol if eol >= 0 else len(data)]
        rest = len(data) if eol < 0 else eol + 1
        if line.startswith(b"inputs"):
            return manifest, parts, data[rest:]
        nxt = HEADER.search(data, rest)
        body = data[rest:nxt.start() if nxt else len(data)]
        kind, name = line.split(b" ", 1)
        parts.append((kind, name, body))
        at = nxt
    return manifest, parts, None


def rehash(path, version):
    with open(path, "rb") as f:
        data = f.read()
    manifest, parts, inputs = sections(data)
    try:
        j = json.loads(manifest)
    except ValueError:
        return
    if not isinstance(j, dict):
        return
    v = j.get("format_version")
    if isinstance(v, int):
        j["format_version"] = (1 << 32) + version if v >= 1 << 32 else version
    files = {name.decode(): (body if kind == b"file" else b"")
             for kind, name, body in parts}
    for k in j.get("kernels", []):
        if isinstance(k, dict) and k.get("file") in files:
            k["hash"] = hashlib.blake2b(files[k["file"]],
                                        digest_size=32).hexdigest()
    out = json.dumps(j, indent=1, ensure_ascii=False).encode()
    for kind, name, body in parts:
        out += b"\n#" + kind + b" " + name + b"\n" + body
    if inputs is not None:
        out += b"\n#inputs\n" + inputs
    with open(path, "wb") as f:
        f.write(out)


def main():
    version = int(sys.argv[1])
    for path in sys.argv[2:]:
        rehash(path, version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
