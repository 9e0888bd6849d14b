#!/usr/bin/env bash
# Throughput on a GPU machine, in one go, for the reference and the gpu configurations: the model benchmark on
# tfjs-webgpu (Deno's WebGPU over the NVIDIA Vulkan driver), tfjs-wasm and tfjs-blas (where OpenBLAS is
# installed) on the same machine's CPU, PyTorch on the CPU and, when /usr/bin/python3 has a CUDA torch, on the
# GPU, and blas without its native kernels; then the engine (SFT sequences/s, RL step time) on webgpu, wasm, blas and auto (which records its
# calibration) for the default and gpu settings presets.
# Usage (from the repo root, after `npx --yes deno@2.9.6 install`): bash bench/perf/gpu_bench.sh [OUT_DIR]
# Every command's output is also written to OUT_DIR (default: gpu-bench-<UTC time>/), one file per command.
# Needs the Vulkan loader (Debian: libvulkan1) and the NVIDIA driver's Vulkan ICD; if no adapter is found, try
#   export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json
set -uo pipefail
cd "$(dirname "$0")/../.."
deno=(npx --yes deno@2.9.6)
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}" # wgpu warns without it
out="${1:-gpu-bench-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
step() { # step NAME COMMAND...: run, show and keep the output; a failing step is reported, the others still run
  local name=$1
  shift
  echo "== $name: $*"
  "$@" 2>&1 | tee "$out/$name.txt" || echo "== $name failed (exit ${PIPESTATUS[0]})"
}
{ date -u; uptime; nvidia-smi -L 2>/dev/null || echo "nvidia-smi: no NVIDIA GPU visible"; } | tee "$out/machine.txt"
cuda=$(/usr/bin/python3 -c "import torch; print(int(torch.cuda.is_available()))" 2>/dev/null || echo 0)
for config in reference gpu; do
  steps=(--steps 3 --reps 2 --runs 1)
  [ "$config" = gpu ] && steps=(--steps 2 --reps 1 --runs 1)
  step "model-$config-webgpu" "${deno[@]}" task bench model --config "$config" --backend webgpu --no-torch "${steps[@]}"
  # wasm on the CPU, then the PyTorch CPU reference in the same invocation
  step "model-$config-wasm-torch-cpu" "${deno[@]}" task bench model --config "$config" --backend wasm "${steps[@]}"
  step "model-$config-blas-torch-cpu" "${deno[@]}" task bench model --config "$config" --backend blas "${steps[@]}"
  # The native kernels (ops/kernels.c: whole sampling runs, decode steps, causal softmax, Adam, …) have no webgpu counterpart; on the
  # host's many cores, blas with them off is their side-by-side (threads: one per core, the default).
  step "model-$config-blas-no-native" "${deno[@]}" task bench model --config "$config" --backend blas --no-native --no-torch "${steps[@]}"
  if [ "$cuda" = 1 ]; then
    step "model-$config-torch-cuda" /usr/bin/python3 bench/perf/torch_reference.py --config "$config" --device cuda
  else
    echo "== model-$config-torch-cuda: skipped (no CUDA torch in /usr/bin/python3)" | tee "$out/model-$config-torch-cuda.txt"
  fi
done
step engine-default "${deno[@]}" task bench engine --settings default --backends webgpu,wasm,blas,auto
step engine-gpu "${deno[@]}" task bench engine --settings gpu --backends webgpu,wasm,blas,auto --sft-steps 3 --rl-steps 1
echo "outputs in $out/"
