#!/bin/sh
# Drives one package test; see CMakeLists.txt next to this file.
#   run.sh MODE ATTN_BUILD_DIR PROJECT_DIR WORK_DIR ATTN_SOURCE_DIR
# Exit 0: passed, 77: skipped (and why), anything else: failed.
set -eu
mode=$1 build=$2 project=$3 work=$4 source=$5

rm -rf "$work"
mkdir -p "$work"

if [ "$mode" = readme ]; then
  # The README's engine, with the README's commands and nothing else: no
  # generator, no build type, only the prefix.
  cmake --install "$build" --prefix "$work/attn" > "$work/install.log"
  python3 "$source/test/package/readme_engine.py" "$source/README.md" \
    "$work/engine"
  if [ ! -x "$work/attn/bin/attn-compile" ]; then
    echo "SKIP: no attn-compile in this build (ATTN_BUILD_COMPILER=OFF?)"
    exit 77
  fi
  cd "$work"
  cmake -S engine -B engine-build -DCMAKE_PREFIX_PATH="$work/attn"
  cmake --build engine-build
  engine-build/engine
  exit 0
fi
set -- -S "$project" -B "$work/build" -DCMAKE_BUILD_TYPE=Release
if command -v ninja > /dev/null; then
  set -- "$@" -G Ninja
fi

case "$mode" in
build_tree)
  # The build tree is a package too.
  set -- "$@" -Dattn_DIR="$build/cmake"
  ;;
*)
  cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
  set -- "$@" -DCMAKE_PREFIX_PATH="$work/prefix"
  ;;
esac

if [ "$mode" = bundle ]; then
  tools="$work/prefix/bin"
  if [ ! -x "$tools/attn-compile" ]; then
    echo "SKIP: no attn-compile in this build (ATTN_BUILD_COMPILER=OFF?)"
    exit 77
  fi
  # The installed tools start from the prefix and load nothing from the
  # build tree.
  for tool in attn-compile attn-run attn-diff; do
    if ldd "$tools/$tool" | grep -v "$work/prefix/" | grep -E "not found|$build"
    then
      echo "FAIL: installed $tool needs the libraries above" >&2
      exit 1
    fi
  done
  "$tools/attn-compile" --help > /dev/null
  "$tools/attn-run" "$source/examples/llama3_8b.mlir" --entry=reshape_and_cache \
    --random 0 > /dev/null
  # attn_add_bundle finds the installed attn-compile through the package;
  # its cpu kernels link with ld.lld from the LLVM it was built with (as it
  # loads that LLVM's libraries), else from PATH.
  set -- "$@" -DWITH_BUNDLE=ON
fi
cmake "$@"
cmake --build "$work/build" -j 2
if [ "$mode" = host_example ]; then
  # Three models' serving steps on the CPU device, each checked against the
  # reference ops.
  "$work/build/attn-host-example" --device cpu
else
  "$work/build/decode-step"
fi
