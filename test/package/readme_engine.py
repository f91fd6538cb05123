#!/usr/bin/env python3
"""Writes the README's engine project into a directory.

The README marks each file of its engine with an HTML comment,
`<!-- readme-engine: NAME -->`, right before the fenced block that holds
it. Usage: readme_engine.py README.md OUT_DIR. Fails when a marker has no
block after it or when the README has no engine at all.
"""
import pathlib
import re
import sys


def engine_files(text):
    """(name, contents) of every marked block, in order."""
    marker = re.compile(r"^<!-- readme-engine: (\S+) -->\n```[^\n]*\n(.*?)^```$",
                        re.MULTILINE | re.DOTALL)
    files = marker.findall(text)
    marks = len(re.findall(r"<!-- readme-engine:", text))
    if not files or len(files) != marks:
        sys.exit(f"readme_engine.py: {marks} markers, {len(files)} with a "
                 "fenced block right after")
    return files


def main():
    readme, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, contents in engine_files(readme.read_text()):
        (out / name).write_text(contents)
        print(f"readme_engine.py: wrote {out / name}")


if __name__ == "__main__":
    main()
