"""Loads a bundle over and over while attn-compile rewrites it.

Usage: reload-race.py ATTN_COMPILE ATTN_BUNDLE_CHECK GRID WORK_DIR [REWRITES]

The writer alternates two option sets, so each rewrite names other kernel
files and removes the previous ones once its manifest is in place; readers
(attn-bundle-check, as a serving engine loads a bundle) run back to back
meanwhile. Every load must succeed: a reader gets the old bundle or the new
one. Prints a summary line; exits 1 with the first failed load.
"""
import shutil
import subprocess
import sys
import threading

compile_, check, grid, work = sys.argv[1:5]
rewrites = int(sys.argv[5]) if len(sys.argv) > 5 else 8
bundle = work + "/race.attnb"
common = ["--grid", grid, "--targets=spirv", "--subgroup-size=8", "-q"]
options = [["--split-kv=0"], ["--split-kv=2"]]


def build(i):
    subprocess.run([compile_] + common + options[i % 2] + ["-o", bundle],
                   check=True)


def writer():
    for i in range(1, rewrites + 1):
        build(i)


shutil.rmtree(work, ignore_errors=True)
build(0)
thread = threading.Thread(target=writer)
thread.start()
loads, failures = 0, []
while thread.is_alive():
    run = subprocess.run([check, bundle], capture_output=True, text=True)
    loads += 1
    if run.returncode != 0:
        failures.append(run.stderr.strip())
thread.join()
if failures:
    print("%d of %d loads failed during %d rewrites, first: %s"
          % (len(failures), loads, rewrites, failures[0]))
    sys.exit(1)
print("%d rewrites: %d loads, every one a whole bundle" % (rewrites, loads))
