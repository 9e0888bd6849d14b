#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (CPU only) from the llama.cpp source that the npm package node-llama-cpp ships
# (its llama/gitRelease.bundle), for the real-server conformance test (tests/bench/external/llama_server.test.ts).
# Everything lives outside the repository, in a cache that later runs reuse:
#   ${ACEBENCH_LLAMA_CACHE:-~/.cache/acebench/llama.cpp}/bin/llama-server
# Idempotent: exits 0 at once when the binary is already there. Needs npm, git, cmake and a C++17 compiler.
# Usage: bash bench/external/build_llama_server.sh [--jobs N]   (N defaults to 2)
set -euo pipefail

version="3.21.1" # node-llama-cpp release whose bundled llama.cpp is built; newer ones may refuse `npm ci` locks
jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
  --jobs) jobs="$2"; shift 2 ;;
  -h | --help) sed -n '2,7p' "$0"; exit 0 ;;
  *) echo "build_llama_server: unknown argument '$1' (expected --jobs N)" >&2; exit 2 ;;
  esac
done

cache="${ACEBENCH_LLAMA_CACHE:-$HOME/.cache/acebench/llama.cpp}"
binary="$cache/bin/llama-server"
if [ -x "$binary" ]; then
  echo "build_llama_server: $binary already built"
  exit 0
fi
for tool in npm git cmake c++; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build_llama_server: '$tool' not found" >&2; exit 1; }
done

mkdir -p "$cache"
cd "$cache"
tarball="node-llama-cpp-$version.tgz"
if [ ! -f "$tarball" ]; then
  npm pack --silent "node-llama-cpp@$version" >/dev/null
fi
# The package carries llama.cpp as a git bundle; a clone of it is the source tree.
if [ ! -f src/CMakeLists.txt ]; then
  rm -rf package src
  tar xzf "$tarball" package/llama/gitRelease.bundle
  git -c advice.detachedHead=false clone -q package/llama/gitRelease.bundle src
  rm -rf package
fi

start=$(date +%s)
# Only what the server needs: no web UI (its prebuilt assets would be downloaded), no TLS, no tests or examples,
# portable CPU code (GGML_NATIVE=OFF) so a cached binary also runs on another machine of the same kind.
cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON >build.log 2>&1 ||
  { tail -n 20 build.log >&2; echo "build_llama_server: cmake configure failed (log: $cache/build.log)" >&2; exit 1; }
cmake --build build --target llama-server -j "$jobs" >>build.log 2>&1 ||
  { tail -n 20 build.log >&2; echo "build_llama_server: build failed (log: $cache/build.log)" >&2; exit 1; }
mkdir -p bin
cp build/bin/llama-server bin/llama-server.tmp && mv bin/llama-server.tmp "$binary"
echo "build_llama_server: built $binary in $(($(date +%s) - start)) s with -j $jobs"
