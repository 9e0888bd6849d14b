// acebench's native kernels: compiled at first use by ops/native.ts (the system C compiler, cached outside the
// repository by this file's hash) and called through Deno's FFI on tensors where tfjs-wasm keeps them (native
// addresses of its heap), like the BLAS products of ops/blas.ts.
//
// Bits never depend on the thread count: work is cut into items whose results are computed whole by one thread
// with the same code (a thread's share decides who computes an item, never how), and no result sums over items.
// Built with -ffp-contract=off and without -ffast-math, so a*b+c is two roundings and sums keep source order.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/** Bumped when an exported signature changes (ops/native.ts checks it). */
int ace_version(void) { return 11; }

typedef void (*range_fn)(const void *args, int lo, int hi);

// A process-wide pool of helper threads, started on demand and kept. A job is cut into chunks of items that the
// caller and the helpers claim one at a time, by a compare-and-swap on one word (generation, chunk count, next
// chunk): a stale helper's claim fails on the generation, and no claim reads the job's fields before it succeeds,
// so none runs a job half written. A helper the OS has not scheduled yet (a loaded machine) costs nothing: the
// caller claims the rest itself and waits only for chunks already claimed. Who computes an item never changes
// how, so the bits are the same for any thread count. One job at a time: a second caller (another Deno Worker of
// the process) runs its job alone.
#define MAX_HELPERS 63

static struct {
  range_fn fn;
  const void *args;
  int n, chunk, chunks, helpers;  // helpers: how many of the pool take part (the job's threads − 1)
} job;
static _Atomic uint64_t claim;  // generation << 32 | chunks << 16 | next chunk (chunks < 16 · 64 + 1)
static _Atomic int done;        // chunks finished in the current generation
static _Atomic uint32_t generation;
static int helpers;             // helper threads started
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER, wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

// Claim and run chunks of generation g until none is left.
static void work(uint32_t g) {
  uint64_t c = claim;
  while ((uint32_t)(c >> 32) == g && (c & 0xffff) < ((c >> 16) & 0xffff)) {
    if (!__atomic_compare_exchange_n(&claim, &c, c + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
    // Claimed: generation g is live until this chunk is done, so the job's fields are g's.
    const int lo = (int)(c & 0xffff) * job.chunk, hi = lo + job.chunk < job.n ? lo + job.chunk : job.n;
    job.fn(job.args, lo, hi);
    __atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
    c = claim;
  }
}

static void *helper(void *arg) {
  const int id = (int)(intptr_t)arg;
  pthread_mutex_lock(&wake_lock);
  uint32_t seen = generation;  // jobs before this thread existed are not its business
  pthread_mutex_unlock(&wake_lock);
  for (;;) {
    pthread_mutex_lock(&wake_lock);
    while (generation == seen) pthread_cond_wait(&wake, &wake_lock);
    seen = generation;
    const int takes_part = id < job.helpers;  // a job asking fewer threads than the pool has leaves the rest idle
    pthread_mutex_unlock(&wake_lock);
    if (takes_part) work(seen);
  }
  return NULL;
}

// Items [0, n) on up to `threads` threads (the caller one of them).
static void parallel_for(range_fn fn, const void *args, int n, int threads) {
  if (n <= 0) return;
  if (threads <= 1 || n == 1 || pthread_mutex_trylock(&pool_lock) != 0) {
    fn(args, 0, n);
    return;
  }
  if (threads > MAX_HELPERS + 1) threads = MAX_HELPERS + 1;
  while (helpers < threads - 1) {
    pthread_t t;
    if (pthread_create(&t, NULL, helper, (void *)(intptr_t)helpers) != 0) break;  // fewer: the caller does more
    pthread_detach(t);
    helpers++;
  }
  const int chunk = n / (threads * 8) > 0 ? n / (threads * 8) : 1;
  job.fn = fn;
  job.args = args;
  job.n = n;
  job.chunk = chunk;
  job.chunks = (n + chunk - 1) / chunk;
  done = 0;
  pthread_mutex_lock(&wake_lock);
  job.helpers = threads - 1;
  const uint32_t g = ++generation;
  claim = (uint64_t)g << 32 | (uint64_t)job.chunks << 16;
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&wake_lock);
  work(g);
  while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < job.chunks) sched_yield();
  pthread_mutex_unlock(&pool_lock);
}

// Dot product in 8 fixed lanes, then the lanes pairwise: one order whatever the vector width the compiler picks.
static float dot(const float *a, const float *b, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int l = 0; l < 8; l++) acc[l] += a[j + l] * b[j + l];
  }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; j < n; j++) s += a[j] * b[j];
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// Decode attention: one new position per row, against the key/value cache, fused (head split, cache write,
// scores, softmax, weighted sum of values, head merge) so a layer-step is one call instead of six tfjs kernels.

struct decode_args {
  const float *qkv;     // [b, 3·D]: the new position's q, k, v column blocks
  float *k, *v;         // cache buffers [slots·heads, cap, hd], written at position `pos`
  float *out;           // [b, D]: heads merged back into rows
  int b, heads, hd, cap, pos;
  float scale;          // 1/√hd
  const int *slot;      // the cache slot of each of the b rows (NULL: row r is slot r)
  int rs;               // qkv and out rows per batch row (a prefill's positions; 1 in decode)
};

// Offset in a cache buffer of item i's (row, head) positions.
static size_t cache_at(const struct decode_args *a, int i) {
  const int r = i / a->heads;
  return ((size_t)(a->slot ? a->slot[r] : r) * a->heads + (size_t)(i % a->heads)) * a->cap * a->hd;
}

// On x86-64 Linux compiled twice, for AVX2 and for any x86-64, the copy picked at load time by the processor
// (one source order and no contraction, so the same bits; 15–20% less attention time measured).
#if defined(__x86_64__) && defined(__linux__)
#define AVX2_TOO __attribute__((target_clones("avx2", "default")))
#else
#define AVX2_TOO
#endif
AVX2_TOO static void decode_range(const void *p, int lo, int hi) {
  const struct decode_args *a = p;
  const int hd = a->hd, d = a->heads * hd, keys = a->pos + 1;
  float *s = malloc(sizeof(float) * (size_t)keys);
  if (!s) abort();
  for (int i = lo; i < hi; i++) {
    const int r = i / a->heads, h = i % a->heads;
    const float *q = a->qkv + (size_t)r * a->rs * 3 * d + (size_t)h * hd;
    float *kc = a->k + cache_at(a, i), *vc = a->v + cache_at(a, i);
    memcpy(kc + (size_t)a->pos * hd, q + d, sizeof(float) * hd);
    memcpy(vc + (size_t)a->pos * hd, q + 2 * d, sizeof(float) * hd);
    // The next item's rows are fetched while this one computes: the step is bound by memory (the whole cache is
    // read once per token), and a head's rows are too short a stream for the hardware prefetcher (-26% measured).
    const ptrdiff_t ahead = i + 1 < hi ? (ptrdiff_t)cache_at(a, i + 1) - (ptrdiff_t)cache_at(a, i) : 0;
    // softmax(q·kⱼ · scale) over the positions 0..pos, as tfjs's softmax: max, exp(x − max), sum in order, divide.
    float mx = -INFINITY;
    for (int j = 0; j < keys; j++) {
      if (i + 1 < hi) {
        for (int c = 0; c < hd; c += 16) {
          __builtin_prefetch(kc + ahead + (size_t)j * hd + c);
          __builtin_prefetch(vc + ahead + (size_t)j * hd + c);
        }
      }
      s[j] = dot(q, kc + (size_t)j * hd, hd) * a->scale;
      if (s[j] > mx) mx = s[j];
    }
    float sum = 0;
    for (int j = 0; j < keys; j++) sum += (s[j] = expf(s[j] - mx));
    for (int j = 0; j < keys; j++) s[j] /= sum;
    // o = Σⱼ wⱼ·vⱼ in order of j, up to 8 columns at a time in registers (each column's sum in the same order).
    float *o = a->out + (size_t)r * a->rs * d + (size_t)h * hd;
    int c0 = 0;
    for (; c0 + 8 <= hd; c0 += 8) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int j = 0; j < keys; j++) {
        for (int l = 0; l < 8; l++) acc[l] += s[j] * vc[(size_t)j * hd + c0 + l];
      }
      memcpy(o + c0, acc, sizeof acc);
    }
    for (int c = c0; c < hd; c++) {  // the last hd mod 8 columns
      float acc = 0;
      for (int j = 0; j < keys; j++) acc += s[j] * vc[(size_t)j * hd + c];
      o[c] = acc;
    }
  }
  free(s);
}

/** Decode attention of b rows × heads heads (see decode_args), on `threads` threads. */
void ace_decode_attention(const float *qkv, float *k, float *v, float *out, int b, int heads, int hd, int cap,
                          int pos, float scale, int threads) {
  struct decode_args a = {qkv, k, v, out, b, heads, hd, cap, pos, scale, NULL, 1};
  parallel_for(decode_range, &a, b * heads, threads);
}

// ---------------------------------------------------------------------------------------------------------
// Adam: the operations of model/adam.wat (and of the tf-ops update in model/adam.ts) in the same order, in
// float32, so the results are those bits: gs = g·scale; m' = m·b1 + gs·c1; v' = v·b2 + gs·gs·c2;
// p' = p − (m'·lrc) / (√(v'/bc2) + eps).

struct adam_args {
  const float *p, *m, *v, *g;
  float *po, *mo, *vo;
  float scale, b1, c1, b2, c2, lrc, bc2, eps;
};

/** Elements per work item: items, not threads, are the unit, so a thread count never changes a result. */
#define ADAM_BLOCK 4096
/** Parameters at least this large (floats) are updated on several threads. */
#define ADAM_SHARED (1 << 18)

static void adam_span(const struct adam_args *a, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) {
    const float gs = a->g[i] * a->scale;
    const float mn = a->m[i] * a->b1 + gs * a->c1;
    const float vn = a->v[i] * a->b2 + (gs * gs) * a->c2;
    a->mo[i] = mn;
    a->vo[i] = vn;
    a->po[i] = a->p[i] - (mn * a->lrc) / (sqrtf(vn / a->bc2) + a->eps);
  }
}

static void adam_range(const void *a, int lo, int hi) {
  adam_span(a, (size_t)lo * ADAM_BLOCK, (size_t)hi * ADAM_BLOCK);
}

/** One Adam update of n floats (see adam_args), on `threads` threads; the last partial block on the caller. */
void ace_adam(const float *p, const float *m, const float *v, const float *g, float *po, float *mo, float *vo,
              int n, float scale, float b1, float c1, float b2, float c2, float lrc, float bc2, float eps,
              int threads) {
  struct adam_args a = {p, m, v, g, po, mo, vo, scale, b1, c1, b2, c2, lrc, bc2, eps};
  const int whole = n / ADAM_BLOCK;
  // A parameter of the reference model (≤ 64 k floats) updates in ~20 µs, less than waking the helpers costs
  // (measured: 36 updates on 2 threads 6.8 ms against 2.0 on one), so only large ones are shared.
  parallel_for(adam_range, &a, whole, n >= ADAM_SHARED ? threads : 1);
  adam_span(&a, (size_t)whole * ADAM_BLOCK, (size_t)n);
}

// ---------------------------------------------------------------------------------------------------------
// Causal softmax of training attention: scores x [n, t, t] (already scaled) → p, row i of each block over keys
// 0..i and exact zeros after (what tfjs computes with a −1e9 mask added: exp underflows to 0), and its
// gradient dx = p ⊙ (dp − Σⱼ dpⱼ pⱼ), the sum over the row's keys in order. One call each instead of tfjs's
// mask add and softmax forward, and its four-kernel gradient.

struct softmax_args {
  const float *x, *dp;
  float *out;
  int t;
};

static void causal_softmax_range(const void *q, int lo, int hi) {
  const struct softmax_args *a = q;
  const int t = a->t;
  for (int r = lo; r < hi; r++) {
    const int keys = r % t + 1;
    const float *x = a->x + (size_t)r * t;
    float *p = a->out + (size_t)r * t, mx = -INFINITY, sum = 0;
    for (int j = 0; j < keys; j++) mx = x[j] > mx ? x[j] : mx;
    for (int j = 0; j < keys; j++) sum += (p[j] = expf(x[j] - mx));
    for (int j = 0; j < keys; j++) p[j] /= sum;
    for (int j = keys; j < t; j++) p[j] = 0;
  }
}

/** Causal softmax of n blocks of t × t scores (see above) on `threads` threads. */
void ace_causal_softmax(const float *x, float *p, int n, int t, int threads) {
  struct softmax_args a = {x, NULL, p, t};
  parallel_for(causal_softmax_range, &a, n * t, threads);
}

static void causal_softmax_grad_range(const void *q, int lo, int hi) {
  const struct softmax_args *a = q;
  const int t = a->t;
  for (int r = lo; r < hi; r++) {
    const int keys = r % t + 1;
    const float *p = a->x + (size_t)r * t, *dp = a->dp + (size_t)r * t;
    float *dx = a->out + (size_t)r * t, dot = 0;
    for (int j = 0; j < keys; j++) dot += dp[j] * p[j];
    for (int j = 0; j < keys; j++) dx[j] = p[j] * (dp[j] - dot);
    for (int j = keys; j < t; j++) dx[j] = 0;
  }
}

/** Gradient of the causal softmax: p [n, t, t] its output, dp the gradient at it → dx, on `threads` threads. */
void ace_causal_softmax_grad(const float *p, const float *dp, float *dx, int n, int t, int threads) {
  struct softmax_args a = {p, dp, dx, t};
  parallel_for(causal_softmax_grad_range, &a, n * t, threads);
}

// ---------------------------------------------------------------------------------------------------------
// The sampler's draw at temperature 1 without truncation (model.ts's drawScored, in float64 in its order):
// w_j = exp(x_j − x_best), z = Σ w_j in index order, the token where u·z falls walking w, and its log-prob
// x_tok − max − log z. exp and log are libm's, so a last bit may differ from JavaScript's Math.

struct draw_args {
  const float *logits;  // [rows, v]
  const double *u;      // [rows]: each row's uniform; NaN: the row draws nothing
  int32_t *tokens;
  double *logp;
  int v;
};

// The token row x [v] draws with the uniform u, and its log-prob in *logp; w: v doubles of scratch.
static int draw_row(const float *x, double u, int v, double *w, double *logp) {
  int best = 0;
  double mx = -INFINITY, z = 0;
  for (int j = 0; j < v; j++) {
    if (x[j] > x[best]) best = j;
    if (x[j] > mx || (x[j] == mx && signbit(mx) && !signbit(x[j]))) mx = x[j];  // Math.max: +0 over −0
  }
  for (int j = 0; j < v; j++) z += (w[j] = exp((double)x[j] - (double)x[best]));
  double r = u * z;
  int tok = best;
  for (int j = 0; j < v; j++) {
    r -= w[j];
    if (r < 0) {
      tok = j;
      break;
    }
  }
  *logp = (double)x[tok] - mx - log(z);
  return tok;
}

static void draw_range(const void *p, int lo, int hi) {
  const struct draw_args *a = p;
  double *w = malloc(sizeof(double) * (size_t)a->v);
  if (!w) abort();
  for (int i = lo; i < hi; i++) {
    if (!isnan(a->u[i])) a->tokens[i] = draw_row(a->logits + (size_t)i * a->v, a->u[i], a->v, w, &a->logp[i]);
  }
  free(w);
}

/** Draws for `rows` rows of logits (see draw_args) on `threads` threads. */
void ace_draw(const float *logits, const double *u, int32_t *tokens, double *logp, int rows, int v, int threads) {
  struct draw_args a = {logits, u, tokens, logp, v};
  parallel_for(draw_range, &a, rows, threads);
}

// ---------------------------------------------------------------------------------------------------------
// Per-token scores for training, one pass per row of logits x [n, v]: the log-softmax l_j = (x_j − max) − log Σ
// exp(x_k − max) (sum in order), the target's log-prob l_target and the entropy H = −Σ exp(l_j)·l_j; the gradient
// from the saved log-softmax, with p_j = exp(l_j): dx_j = dlogp·([j = target] − p_j) − dH·p_j·(l_j + H).

struct score_args {
  const float *x, *logsm, *scores, *dy;  // scores, dy: [n, 2] (log-prob, entropy) and their gradients
  const int32_t *target;
  float *scores_out, *logsm_out, *dx;
  int v;
};

static void scores_range(const void *p, int lo, int hi) {
  const struct score_args *a = p;
  for (int r = lo; r < hi; r++) {
    const float *x = a->x + (size_t)r * a->v;
    float *l = a->logsm_out + (size_t)r * a->v, mx = -INFINITY, sum = 0, h = 0;
    for (int j = 0; j < a->v; j++) mx = x[j] > mx ? x[j] : mx;
    for (int j = 0; j < a->v; j++) sum += expf(x[j] - mx);
    const float lse = logf(sum);
    for (int j = 0; j < a->v; j++) {
      l[j] = (x[j] - mx) - lse;
      h -= expf(l[j]) * l[j];
    }
    a->scores_out[2 * r] = l[a->target[r]];
    a->scores_out[2 * r + 1] = h;
  }
}

/** Scores of n rows (see score_args): logits x, targets → scores [n, 2], log-softmax [n, v], on `threads`. */
void ace_token_scores(const float *x, const int32_t *target, float *scores, float *logsm, int n, int v,
                      int threads) {
  struct score_args a = {.x = x, .target = target, .scores_out = scores, .logsm_out = logsm, .v = v};
  parallel_for(scores_range, &a, n, threads);
}

static void scores_grad_range(const void *p, int lo, int hi) {
  const struct score_args *a = p;
  for (int r = lo; r < hi; r++) {
    const float *l = a->logsm + (size_t)r * a->v, dl = a->dy[2 * r], dh = a->dy[2 * r + 1], h = a->scores[2 * r + 1];
    float *dx = a->dx + (size_t)r * a->v;
    for (int j = 0; j < a->v; j++) {
      const float pj = expf(l[j]);
      dx[j] = dl * ((j == a->target[r] ? 1.0f : 0.0f) - pj) - dh * pj * (l[j] + h);
    }
  }
}

/** Gradient of the scores: log-softmax [n, v], scores, targets, dy [n, 2] → dx [n, v], on `threads` threads. */
void ace_token_scores_grad(const float *logsm, const float *scores, const int32_t *target, const float *dy,
                           float *dx, int n, int v, int threads) {
  struct score_args a = {.logsm = logsm, .scores = scores, .target = target, .dy = dy, .dx = dx, .v = v};
  parallel_for(scores_grad_range, &a, n, threads);
}

// ---------------------------------------------------------------------------------------------------------
// LayerNorm forward for training: model/layernorm.wat's operations in its order, in float32, so the results are
// its bits (4 lanes summed as (l0 + l1) + (l2 + l3); no fused multiply-add), rows shared among threads. (Its
// gradient stays in the .wat: one pass there sums the gain and bias gradients down the rows while it reads them
// for dx; split by rows, those sums would change order, and split by columns, a third pass measured 0.31 ms
// against the .wat's 0.17 per [2048, 128] call.)

// LayerNorm of rows x [n, d] into y (eps 1e-5), with xhat [n, d] and rstd [n] where not NULL: mean and variance
// summed in 4 lanes then (l0 + l1) + (l2 + l3), rstd = 1/√(var + eps), xhat = (x − mean)·rstd, y = xhat·g + b.
static void layer_norm(const float *x, const float *g, const float *b, float *y, float *xhat, float *rstd, int n,
                       int d) {
  for (int r = 0; r < n; r++) {
    const float *xr = x + (size_t)r * d;
    float acc[4] = {0, 0, 0, 0};
    for (int c = 0; c < d; c += 4) {
      for (int l = 0; l < 4; l++) acc[l] += xr[c + l];
    }
    const float mean = ((acc[0] + acc[1]) + (acc[2] + acc[3])) / (float)d;
    for (int l = 0; l < 4; l++) acc[l] = 0;
    for (int c = 0; c < d; c += 4) {
      for (int l = 0; l < 4; l++) acc[l] += (xr[c + l] - mean) * (xr[c + l] - mean);
    }
    const float rs = 1.0f / sqrtf(((acc[0] + acc[1]) + (acc[2] + acc[3])) / (float)d + 1e-5f);
    if (rstd) rstd[r] = rs;
    for (int c = 0; c < d; c++) {
      const float xh = (xr[c] - mean) * rs;
      if (xhat) xhat[(size_t)r * d + c] = xh;
      y[(size_t)r * d + c] = xh * g[c] + b[c];
    }
  }
}

struct ln_args {
  const float *x, *g, *b;
  float *y, *xhat, *rstd;
  int n, d;
};

static void ln_forward_range(const void *p, int lo, int hi) {
  const struct ln_args *a = p;
  const size_t at = (size_t)lo * a->d;
  layer_norm(a->x + at, a->g, a->b, a->y + at, a->xhat + at, a->rstd + lo, hi - lo, a->d);
}

/** LayerNorm forward of x [n, d] (d a multiple of 4): y, xhat [n, d] and rstd [n], on `threads` threads. */
void ace_layer_norm(const float *x, const float *g, const float *b, float *y, float *xhat, float *rstd, int n,
                    int d, int threads) {
  struct ln_args a = {x, g, b, y, xhat, rstd, n, d};
  parallel_for(ln_forward_range, &a, n, threads);
}

// ---------------------------------------------------------------------------------------------------------
// A whole decode step (one new position per row) of the model of model.ts, from tokens to logits:
//   x = wte[token] + wpe[pos]; per layer: x += proj(attention(qkv(LN1(x)))); x += down(relu(up(LN2(x))));
//   logits = LNf(x) · wteᵀ (tied head)
// Rows are independent in decode, so the rows are cut into blocks of DECODE_ROWS (fixed: the products' bits
// depend on the rows in a BLAS call) and each block runs the whole step on one thread, its residual stream in
// that thread's cache, its products through the BLAS (one thread per call), its attention as
// ace_decode_attention's. One call per step instead of ~14 tfjs kernels per layer-step, each with its bookkeeping.

#define DECODE_ROWS 64
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                         float *, int);
static sgemm_fn sgemm;

/** Find cblas_sgemm in the BLAS library at `path` (the one ops/blas.ts loaded); 0 on success, -1 if absent. */
int ace_use_blas(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  sgemm = h ? (sgemm_fn)dlsym(h, "cblas_sgemm") : NULL;
  return sgemm ? 0 : -1;
}

// C[m, n] = A[m, k] · B (+ C when accumulate), row-major; B is [k, n], or [n, k] read transposed (`bt`).
static void gemm(const float *a, const float *b, float *c, int m, int n, int k, int accumulate, int bt) {
  sgemm(101, 111, bt ? 112 : 111, m, n, k, 1.0f, a, k, b, bt ? k : n, accumulate ? 1.0f : 0.0f, c, n);
}

// Per-thread working memory, grown as needed and kept while the thread lives: freed when it exits (a sweep runs
// each job on a Deno Worker's own thread, which calls the kernels itself and ends with the job).
struct scratch_buf {
  float *p;
  size_t have;
};
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static _Atomic int scratch_buffers;  // alive now, one per thread that has used one

static void scratch_free(void *b) {
  free(((struct scratch_buf *)b)->p);
  free(b);
  scratch_buffers--;
}

/** Per-thread working buffers alive now (a thread's is freed when the thread ends). */
int ace_scratch_buffers(void) { return scratch_buffers; }

static void scratch_init(void) {
  if (pthread_key_create(&scratch_key, scratch_free) != 0) abort();
}

static float *scratch(size_t floats) {
  pthread_once(&scratch_once, scratch_init);
  struct scratch_buf *b = pthread_getspecific(scratch_key);
  if (!b) {
    b = calloc(1, sizeof *b);
    if (!b || pthread_setspecific(scratch_key, b) != 0) abort();
    scratch_buffers++;
  }
  if (floats > b->have) {
    free(b->p);
    b->p = malloc(sizeof(float) * floats);
    if (!b->p) abort();
    b->have = floats;
  }
  return b->p;
}

/** A layer's tensors in the order of `w`: LayerNorm 1 gain and bias, qkv, proj, LayerNorm 2, up, down, k, v. */
enum { LN1G, LN1B, WQKV, WPROJ, LN2G, LN2B, WUP, WDOWN, KCACHE, VCACHE, PER_LAYER };

struct step_args {
  const uint64_t *w;  // logits [b, vocab], tokens [b] (int32, position `pos`), wte [vocab, d], wpe [context, d],
                      // LNf gain, LNf bias, then PER_LAYER addresses per layer
  int b, d, heads, cap, pos, layers, vocab;
};

// Layer `w` for m rows of t new positions each (a->pos..a->pos+t−1), x [m·t, d] updated in place, in cache
// slots r0.. (or slot[0..m) where not NULL); h: m·t·8·d floats of scratch. The positions' attention runs in
// order, each writing its keys and values before it reads them: causal.
static void layer_block(const struct step_args *a, const uint64_t *w, float *x, float *h, int r0, const int *slot,
                        int m, int t) {
  const int d = a->d, hd = d / a->heads, n = m * t;
  const float *const *p = (const float *const *)w;
  float *qkv = h + (size_t)n * d, *up = qkv + (size_t)n * 3 * d, *y = up;  // y and up are never live together
  layer_norm(x, p[LN1G], p[LN1B], h, NULL, NULL, n, d);
  gemm(h, p[WQKV], qkv, n, 3 * d, d, 0, 0);
  const size_t at = (size_t)r0 * a->heads * a->cap * hd;
  for (int j = 0; j < t; j++) {
    struct decode_args att = {qkv + (size_t)j * 3 * d, (float *)p[KCACHE] + at, (float *)p[VCACHE] + at,
                              y + (size_t)j * d, m, a->heads, hd, a->cap, a->pos + j, 1.0f / sqrtf((float)hd),
                              slot, t};
    decode_range(&att, 0, m * a->heads);
  }
  gemm(y, p[WPROJ], x, n, d, d, 1, 0);  // x += y·proj (beta 1: the residual add inside the product)
  layer_norm(x, p[LN2G], p[LN2B], h, NULL, NULL, n, d);
  gemm(h, p[WUP], up, n, 4 * d, d, 0, 0);
  for (size_t i = 0; i < (size_t)n * 4 * d; i++) up[i] = up[i] > 0 ? up[i] : 0;
  gemm(up, p[WDOWN], x, n, d, 4 * d, 1, 0);
}

// Embedded rows x [m·t, d] (t positions per row from a->pos) through every layer, then the last position's
// final LayerNorm and tied head into logits [m, vocab] (x is overwritten; h: m·t·8·d floats of scratch).
static void rows_to_logits(const struct step_args *a, float *x, float *h, int r0, const int *slot, int m, int t,
                           float *logits) {
  const int d = a->d;
  for (int l = 0; l < a->layers; l++) layer_block(a, a->w + 6 + (size_t)l * PER_LAYER, x, h, r0, slot, m, t);
  for (int r = 0; t > 1 && r < m; r++) memmove(x + (size_t)r * d, x + ((size_t)r * t + t - 1) * d, sizeof(float) * d);
  layer_norm(x, (const float *)a->w[4], (const float *)a->w[5], h, NULL, NULL, m, d);
  gemm(h, (const float *)a->w[2], logits, m, a->vocab, d, 0, 1);
}

// x [rows, d] = wte[token] + wpe[pos] for the tokens of `rows` rows of t positions from a->pos.
static void embed(const struct step_args *a, const int32_t *tokens, int rows, int t, float *x) {
  const float *wte = (const float *)a->w[2], *wpe = (const float *)a->w[3];
  for (int i = 0; i < rows; i++) {
    const float *e = wte + (size_t)tokens[i] * a->d, *pe = wpe + (size_t)(a->pos + i % t) * a->d;
    for (int c = 0; c < a->d; c++) x[(size_t)i * a->d + c] = e[c] + pe[c];
  }
}

static void step_range(const void *p, int lo, int hi) {
  const struct step_args *a = p;
  for (int blk = lo; blk < hi; blk++) {
    const int r0 = blk * DECODE_ROWS, m = a->b - r0 < DECODE_ROWS ? a->b - r0 : DECODE_ROWS;
    float *x = scratch((size_t)m * 9 * a->d), *h = x + (size_t)m * a->d;  // x [m, d], then the layer's scratch
    embed(a, (const int32_t *)a->w[1] + r0, m, 1, x);
    rows_to_logits(a, x, h, r0, NULL, m, 1, (float *)a->w[0] + (size_t)r0 * a->vocab);
  }
}

/** One decode step for b rows (see step_args) on `threads` threads; ace_use_blas must have succeeded. */
void ace_decode_step(const uint64_t *w, int b, int d, int heads, int cap, int pos, int layers, int vocab,
                     int threads) {
  struct step_args a = {w, b, d, heads, cap, pos, layers, vocab};
  parallel_for(step_range, &a, (b + DECODE_ROWS - 1) / DECODE_ROWS, threads);
}

// ---------------------------------------------------------------------------------------------------------
// Sampling, prompts to tokens: each block of rows runs its prompts' prefill (the block's positions as one set of
// products, the attention causal position by position), then draws its rows' tokens (draw_row, with each row's
// own uniforms) and runs its decode steps until every row has drawn eos or max_new tokens, all on one thread,
// with its key/value cache in that thread's own memory, reused block after block: the cache stays in the
// processor's caches between a block's steps (a step over the whole batch reads the whole cache from memory once
// per token), and is neither allocated per run nor cleared (a position is written before it is read). A finished row leaves
// its block's products at once. A block is GEN_ROWS rows, fewer where its cache would pass GEN_CACHE_BYTES (a
// function of the shapes only); who runs a block never changes how, so the bits are the same for any thread count.

#define GEN_ROWS 32
#define GEN_CACHE_BYTES (64 << 20)

struct gen_args {
  struct step_args step;  // w: as ace_decode_step's, w[1] the prompts [b, p] (int32); w[0] and the caches unused
  const double *u;        // [b, max_new]: row r's uniform for its s-th token
  int32_t *tokens;        // [b, max_new]: drawn tokens (row r's first lengths[r])
  float *logp;            // [b, max_new]: their log-probs
  int32_t *lengths;       // [b]: tokens drawn per row, eos included
  int p, max_new, eos, rows;  // rows: per block
  // tokens past a row's length are left as they were; its log-probs there are 0
};

static void gen_range(const void *q, int lo, int hi) {
  const struct gen_args *g = q;
  const int d = g->step.d, v = g->step.vocab, n = g->max_new, p = g->p, layers = g->step.layers;
  const size_t per = (size_t)g->rows * g->step.cap * d;  // floats of one layer's keys (or values) of a block
  // The thread's memory: x [rows·p, d], the layers' scratch h [rows·p, 8d], logits [rows, v], then the cache.
  float *x = scratch((size_t)g->rows * (9 * d * p + v) + 2 * layers * per), *h = x + (size_t)g->rows * p * d;
  float *logits = h + (size_t)g->rows * p * 8 * d, *cache = logits + (size_t)g->rows * v;
  uint64_t *w = malloc(sizeof(uint64_t) * (6 + (size_t)layers * PER_LAYER));
  double *weights = malloc(sizeof(double) * (size_t)v);
  if (!w || !weights) abort();
  memcpy(w, g->step.w, sizeof(uint64_t) * (6 + (size_t)layers * PER_LAYER));
  for (int l = 0; l < layers; l++) {
    w[6 + (size_t)l * PER_LAYER + KCACHE] = (uint64_t)(uintptr_t)(cache + 2 * l * per);
    w[6 + (size_t)l * PER_LAYER + VCACHE] = (uint64_t)(uintptr_t)(cache + (2 * l + 1) * per);
  }
  struct step_args st = g->step;
  st.w = w;
  for (int blk = lo; blk < hi; blk++) {
    const int r0 = blk * g->rows, m0 = g->step.b - r0 < g->rows ? g->step.b - r0 : g->rows;
    int slot[GEN_ROWS], drawn[GEN_ROWS], m = m0;  // live rows' cache slots (batch row r0 + slot) and last tokens
    for (int i = 0; i < m; i++) slot[i] = i;
    memset(g->logp + (size_t)r0 * n, 0, sizeof(float) * (size_t)m0 * n);  // 0 after a row's eos
    st.pos = 0;
    embed(&st, (const int32_t *)st.w[1] + (size_t)r0 * p, m0 * p, p, x);
    rows_to_logits(&st, x, h, 0, slot, m0, p, logits);
    for (int s = 0; s < n; s++) {
      int kept = 0;
      for (int i = 0; i < m; i++) {
        const size_t r = (size_t)r0 + slot[i];
        double lp;
        const int tok = draw_row(logits + (size_t)i * v, g->u[r * n + s], v, weights, &lp);
        g->tokens[r * n + s] = tok;
        g->logp[r * n + s] = (float)lp;
        g->lengths[r] = s + 1;
        if (tok != g->eos) slot[kept] = slot[i], drawn[kept++] = tok;
      }
      m = kept;
      if (m == 0 || s + 1 == n) break;
      st.pos = p + s;
      embed(&st, drawn, m, 1, x);
      rows_to_logits(&st, x, h, 0, slot, m, 1, logits);
    }
  }
  free(w);
  free(weights);
}

/**
 * Sample max_new tokens (or up to eos) for b rows of prompts w[1] [b, p] (w as ace_decode_step's otherwise, its
 * cache entries unused; cap ≥ p + max_new − 1 positions); outputs as gen_args's; on `threads` threads.
 */
void ace_generate(const uint64_t *w, const double *u, int32_t *tokens, float *logp, int32_t *lengths, int b, int d,
                  int heads, int cap, int p, int layers, int vocab, int max_new, int eos, int threads) {
  const size_t row_bytes = (size_t)2 * layers * cap * d * sizeof(float);
  const int rows = row_bytes * GEN_ROWS <= GEN_CACHE_BYTES ? GEN_ROWS
                                                           : (int)(GEN_CACHE_BYTES / row_bytes > 0 ? GEN_CACHE_BYTES / row_bytes : 1);
  struct gen_args g = {{w, b, d, heads, cap, 0, layers, vocab}, u, tokens, logp, lengths, p, max_new, eos, rows};
  parallel_for(gen_range, &g, (b + rows - 1) / rows, threads);
}
