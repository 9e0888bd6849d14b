#!/usr/bin/python3
"""PyTorch CPU reference for the policy-model throughput benchmark.

It trains and samples the *reference configuration* of the small decoder-only
transformer that the tfjs engine implements, so both can be timed side by side
on the same machine (`deno task bench model` runs it). It needs Debian's
PyTorch and OpenBLAS:

    apt-get install -y python3-torch libopenblas0-pthread
    /usr/bin/python3 bench/perf/torch_reference.py             # one JSON line on stdout
    /usr/bin/python3 bench/perf/torch_reference.py --profile   # ms per op class (torch.profiler)
    /usr/bin/python3 bench/perf/torch_reference.py --device cuda  # on a machine with a CUDA torch

Each thread count also measures this process's matmul peak (torch.mm of two --peak-n square float32
matrices, best of 5), so `bench model` can put each row's GFLOP/s against its own peak.

Reference configuration (keep the tfjs benchmark identical):
  vocab 64, d_model 128, 4 heads, 4 layers, context 64, pre-LayerNorm blocks
  (LayerNorm with gain and bias), fused QKV projection and output projection
  without bias, ReLU MLP of width 4*d_model without bias, final LayerNorm,
  learned positional embedding, output head tied to the token embedding,
  next-token cross-entropy, Adam(lr 1e-3).
  train:  batch 32 x 64 tokens per step  -> tokens/s = 2048 / step time
  sample: batch 256, prompt 16 tokens, 48 new tokens, temperature 1.0,
          key/value cache             -> generated tokens/s = 256*48 / time
"""
import argparse, json, time, sys
import torch
import torch.nn as nn
import torch.nn.functional as F

# The reference configuration; `--config gpu` switches to the gpu one (the tfjs `gpu` settings preset's model:
# width 512, 8 layers, context 256), with the same batch shapes as `deno task bench model --config gpu`.
# `--config tiny` is a seconds-long smoke configuration for tests (bench/perf/model.ts TINY).
V, D, H, L, T = 64, 128, 4, 4, 64
TRAIN_B, SAMPLE_B, PROMPT, NEW = 32, 256, 16, 48
CONFIG = sys.argv[sys.argv.index("--config") + 1] if "--config" in sys.argv else "reference"
if CONFIG == "gpu":
    V, D, H, L, T = 64, 512, 8, 8, 256
    TRAIN_B, SAMPLE_B, PROMPT, NEW = 32, 256, 16, 240
elif CONFIG == "tiny":
    V, D, H, L, T = 16, 32, 2, 1, 32
    TRAIN_B, SAMPLE_B, PROMPT, NEW = 4, 8, 16, 8
torch.manual_seed(0)
DEVICE = "cpu"


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.proj = nn.Linear(D, D, bias=False)
        self.up = nn.Linear(D, 4 * D, bias=False)
        self.down = nn.Linear(4 * D, D, bias=False)

    def forward(self, x, cache=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, H, D // H).permute(2, 0, 3, 1, 4)
        if cache is not None:
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        y = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1) if hasattr(F, "scaled_dot_product_attention") \
            else self._attn(q, k, v, t)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, D))
        return x + self.down(F.relu(self.up(self.ln2(x))))

    @staticmethod
    def _attn(q, k, v, t):
        a = (q @ k.transpose(-1, -2)) / (D // H) ** 0.5
        if t > 1:
            s = k.shape[2]
            mask = torch.ones(t, s, dtype=torch.bool, device=q.device).tril(s - t)
            a = a.masked_fill(~mask, float("-inf"))
        return a.softmax(-1) @ v


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Parameter(torch.randn(T, D) * 0.02)
        self.blocks = nn.ModuleList([Block() for _ in range(L)])
        self.ln = nn.LayerNorm(D)

    def forward(self, ids, start=0, caches=None):
        x = self.tok(ids) + self.pos[start:start + ids.shape[1]]
        for i, blk in enumerate(self.blocks):
            x = blk(x, None if caches is None else caches[i])
        return self.ln(x) @ self.tok.weight.T


def train_step(model, opt, ids):
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()


def bench_train(model, steps=10):
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    ids = torch.randint(0, V, (TRAIN_B, T + 1), device=DEVICE)
    times = []
    for i in range(steps + 2):
        t0 = time.perf_counter()
        train_step(model, opt, ids)
        sync()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    times.sort()
    return TRAIN_B * T / times[len(times) // 2]


@torch.no_grad()
def sample_run(model):
    ids = torch.randint(0, V, (SAMPLE_B, PROMPT), device=DEVICE)
    caches = [{} for _ in range(L)]
    logits = model(ids, 0, caches)[:, -1]
    for step in range(NEW):
        nxt = torch.multinomial(logits.softmax(-1), 1)
        logits = model(nxt, PROMPT + step, caches)[:, -1]
    sync()


def bench_sample(model, reps=3):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        sample_run(model)
        times.append(time.perf_counter() - t0)
    times.sort()
    return SAMPLE_B * NEW / times[len(times) // 2]


def peak_gflops(n, reps=5):
    """Best GFLOP/s of torch.mm on two n x n float32 matrices at the current thread count (2n^3 FLOPs each)."""
    a, b = torch.randn(n, n, device=DEVICE), torch.randn(n, n, device=DEVICE)
    torch.mm(a, b)  # warm-up: thread pool and BLAS buffers
    sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b)
        sync()
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


# Op classes of the profile table (the same classes `bench model --profile` gives tfjs's kernels).
CLASSES = [
    ("matmul", ("aten::mm", "aten::addmm", "aten::matmul", "aten::linear")),
    ("attention", ("aten::bmm", "aten::_softmax", "aten::_softmax_backward_data", "aten::masked_fill",
                   "aten::tril", "aten::scaled_dot_product", "aten::_scaled_dot_product")),
    ("layer norm", ("aten::native_layer_norm",)),
    ("softmax/cross-entropy", ("aten::_log_softmax", "aten::nll_loss", "aten::log_softmax")),
    ("gather/one-hot", ("aten::embedding", "aten::index", "aten::multinomial")),
    ("data movement", ("aten::cat", "aten::copy_", "aten::contiguous", "aten::clone", "aten::permute",
                       "aten::transpose", "aten::t", "aten::view", "aten::reshape", "aten::slice",
                       "aten::select", "aten::unbind", "aten::_unsafe_view", "aten::as_strided",
                       "aten::expand", "aten::narrow", "aten::split", "aten::squeeze", "aten::unsqueeze")),
    ("tensor allocation", ("aten::empty", "aten::zeros", "aten::zero_", "aten::fill_", "aten::resize_",
                           "aten::ones", "aten::new_", "aten::empty_like", "aten::zeros_like")),
]


def op_class(name):
    for cls, prefixes in CLASSES:
        if any(name.startswith(p) for p in prefixes):
            return cls
    return "element-wise/other"


def profile_ms(f, reps):
    """Self CPU ms per op class for one call of f (mean over reps), and the wall ms (which also holds Python,
    autograd and dispatch time outside the aten ops: `bench model --profile` reports it as framework overhead)."""
    from torch.profiler import profile, ProfilerActivity
    f()  # warm-up
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(reps):
            f()
    wall = (time.perf_counter() - t0) * 1000 / reps
    out = {}
    for e in prof.key_averages():
        if e.key.startswith("Optimizer.") or e.key.startswith("ProfilerStep") or not e.key.startswith("aten::"):
            continue
        cls = op_class(e.key)
        out[cls] = out.get(cls, 0) + e.self_cpu_time_total / 1000 / reps
    return {"wall_ms": wall, "classes": out}


def profile_all(threads):
    torch.set_num_threads(threads)
    model = Model().to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    ids = torch.randint(0, V, (TRAIN_B, T + 1), device=DEVICE)
    fwd_bwd = lambda: (opt.zero_grad(), F.cross_entropy(model(ids[:, :-1]).reshape(-1, V),
                                                        ids[:, 1:].reshape(-1)).backward())
    train = profile_ms(fwd_bwd, 5)
    # Adam separately, so its element-wise ops are counted as Adam rather than as element-wise; its time outside
    # aten ops (the Python of opt.step) stays in the wall, hence in framework overhead, as for forward+backward.
    adam = profile_ms(opt.step, 5)
    train["classes"]["Adam"] = sum(adam["classes"].values())
    train["wall_ms"] += adam["wall_ms"]
    return {"threads": threads, "train_step": train, "sampling_run": profile_ms(lambda: sample_run(model), 2)}


ap = argparse.ArgumentParser()
ap.add_argument("--threads", default="1,2", help="thread counts to try; the best of each figure is kept")
ap.add_argument("--profile", action="store_true", help="print ms per op class instead of throughput")
ap.add_argument("--device", default="cpu", help="cpu or cuda")
ap.add_argument("--config", default="reference", choices=["reference", "gpu", "tiny"], help="model and batch shapes")
ap.add_argument("--peak-n", type=int, default=1024, help="side of the square torch.mm that measures the peak")
args = ap.parse_args()
DEVICE = args.device
thread_counts = [int(t) for t in args.threads.split(",")]
if args.profile:
    print(json.dumps({"engine": f"torch {torch.__version__} {DEVICE}",
                      "profiles": [profile_all(t) for t in thread_counts]}))
    sys.exit(0)
# Best over 1 and 2 threads: on a 2-core machine either can win. Each figure keeps the thread count it won
# at, whose measured peak is the one to compare it with.
best = {"train_tokens_per_s": 0, "sample_tokens_per_s": 0, "train_threads": 0, "sample_threads": 0}
peaks = {}
for threads in thread_counts:
    torch.set_num_threads(threads)
    peaks[str(threads)] = round(peak_gflops(args.peak_n), 1)
    model = Model().to(DEVICE)
    for k, f in (("train", bench_train), ("sample", bench_sample)):
        v = round(f(model))
        if v > best[f"{k}_tokens_per_s"]:
            best[f"{k}_tokens_per_s"], best[f"{k}_threads"] = v, threads
print(json.dumps({
    "engine": f"torch {torch.__version__} {DEVICE}",
    "threads": thread_counts,
    "config": args.config,
    "params": sum(p.numel() for p in model.parameters()),
    **best,
    "peak_n": args.peak_n,
    "peak_gflops": peaks,
}))
