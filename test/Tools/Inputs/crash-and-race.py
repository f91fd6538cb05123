"""Kills attn-compile at random moments of a rebuild over a good bundle, and
races two attn-compile runs with different options on one bundle. After each
kill and after the race the bundle must load (attn-bundle-check) and its
manifest must be one a complete run writes: the old one or the new one.

Usage: crash-and-race.py ATTN_COMPILE ATTN_BUNDLE_CHECK GRID WORK_DIR
Prints one line per phase; exits 1 on the first violation."""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

compile_, check, grid, work = sys.argv[1:5]
common = ["--grid", grid, "--targets=spirv", "--subgroup-size=8", "-q", "-j", "1"]
old_options, new_options = ["--split-kv=0"], ["--split-kv=2"]


def build(directory, options):
    started = time.monotonic()
    subprocess.run([compile_] + common + options + ["-o", directory],
                   check=True)
    return time.monotonic() - started


def manifest(directory):
    with open(os.path.join(directory, "manifest.json")) as f:
        return f.read()


def expect_whole(directory, allowed, what):
    result = subprocess.run([check, directory], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"FAIL after {what}: the bundle does not load: {result.stderr}")
        sys.exit(1)
    if manifest(directory) not in allowed:
        print(f"FAIL after {what}: the manifest is neither the old nor the "
              "new one")
        sys.exit(1)


# The manifests complete runs write (they do not depend on the directory).
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
build(os.path.join(work, "old"), old_options)
seconds = build(os.path.join(work, "new"), new_options)
old, new = manifest(os.path.join(work, "old")), manifest(os.path.join(work, "new"))
assert old != new

# kill -9 at random points of a rebuild over a good bundle, again and again.
bundle = os.path.join(work, "bundle")
random.seed(7)
kills = 0
for i in range(12):
    shutil.rmtree(bundle, ignore_errors=True)
    shutil.copytree(os.path.join(work, "old"), bundle)
    options = new_options if i % 2 == 0 else old_options
    process = subprocess.Popen([compile_] + common + options + ["-o", bundle])
    time.sleep(random.uniform(0, seconds))
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        kills += 1
    process.wait()
    expect_whole(bundle, (old, new), f"kill {i}")
    # Whatever a kill left, the next run completes the bundle.
    build(bundle, new_options)
    expect_whole(bundle, (new,), f"the run after kill {i}")
print(f"{kills} kills during a rebuild: the bundle loaded every time")

# Two writers with different options at once: both succeed, one after the
# other, and the bundle is what one of them writes.
shutil.rmtree(bundle, ignore_errors=True)
shutil.copytree(os.path.join(work, "old"), bundle)
a = subprocess.Popen([compile_] + common + old_options + ["-o", bundle])
b = subprocess.Popen([compile_] + common + new_options + ["-o", bundle])
if a.wait() != 0 or b.wait() != 0:
    print("FAIL: a concurrent writer failed")
    sys.exit(1)
expect_whole(bundle, (old, new), "two concurrent writers")
print("two concurrent writers: both succeeded, the bundle loads")
