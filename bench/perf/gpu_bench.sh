#!/usr/bin/env bash
# Throughput on a GPU machine: the model benchmark on tfjs-webgpu (Deno's WebGPU over the NVIDIA Vulkan driver)
# beside tfjs-wasm on the same machine's CPU and the PyTorch CPU reference when /usr/bin/python3 has torch; then
# the engine itself (SFT, RL rollouts and updates) on webgpu and wasm.
# Usage (from the repo root, after `npx --yes deno@2.9.6 install`): bash bench/engines/tfjs/gpu_bench.sh
# Needs the Vulkan loader (Debian: libvulkan1) and the NVIDIA driver's Vulkan ICD; if no adapter is found, try
#   export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json
set -euo pipefail
cd "$(dirname "$0")/../../.."
deno=(npx --yes deno@2.9.6)
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}" # wgpu warns without it
nvidia-smi -L 2>/dev/null || echo "nvidia-smi: no NVIDIA GPU visible"
echo "== webgpu"
"${deno[@]}" task bench model --backend webgpu --no-torch "$@"
echo "== wasm (CPU, one thread) and the PyTorch CPU reference"
"${deno[@]}" task bench model --backend wasm "$@"
echo "== the engine (default sweep settings): webgpu, then wasm"
"${deno[@]}" task bench engine --backends webgpu,wasm
