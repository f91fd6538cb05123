#!/bin/sh
# Drives one package test; see CMakeLists.txt next to this file.
#   run.sh MODE ATTN_BUILD_DIR PROJECT_DIR WORK_DIR [ATTN_COMPILE]
# Exit 0: passed, 77: skipped (and why), anything else: failed.
set -eu
mode=$1 build=$2 project=$3 work=$4 compiler=${5:-}

if [ "$mode" = bundle ]; then
  if [ -z "$compiler" ] || [ ! -x "$compiler" ]; then
    echo "SKIP: no attn-compile in this build (ATTN_BUILD_COMPILER=OFF?)"
    exit 77
  fi
fi

rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"

set -- -S "$project" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release
if [ "$mode" = bundle ]; then
  set -- "$@" -DWITH_BUNDLE=ON -DATTN_COMPILE_EXECUTABLE="$compiler"
fi
if command -v ninja > /dev/null; then
  set -- "$@" -G Ninja
fi
cmake "$@"
cmake --build "$work/build" -j 2
"$work/build/decode-step"
