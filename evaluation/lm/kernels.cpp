// Fused float32 passes of the lean Llama forward and of the output layer
// (evaluation/lm/kernels.py builds this file; docs/scoring.md, "Exactness and speed", point
// 7). Each function does in one pass over its rows what the torch path does in two or more
// operations (the attention: a gather and SDPA over pieces of the row), and runs its rows on
// torch's own thread pool (at::parallel_for).
#include <torch/extension.h>
#include <ATen/Parallel.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

// glibc's vector exp (libmvec): gcc calls _ZGVdN8v_expf and its kin for the loops below
// when expf is declared with the simd attribute, which math.h does only under
// -ffast-math; that option is not used (it would change every other operation's rounding).
extern "C" float expf(float) __attribute__((__simd__("notinbranch")));

// MKL's packed matrix products (CBLAS, LP64), from torch's own libtorch_cpu: torch's x86
// builds link MKL in and export these. Weak, so that the module still loads with a torch
// that has no MKL; `packed_available` then says false and the torch products run.
extern "C" {
size_t cblas_sgemm_pack_get_size(int identifier, int m, int n, int k) __attribute__((weak));
void cblas_sgemm_pack(int layout, int identifier, int trans, int m, int n, int k, float alpha, const float* src,
                      int ld, float* dest) __attribute__((weak));
void cblas_sgemm_compute(int layout, int transa, int transb, int m, int n, int k, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc) __attribute__((weak));
}

// oneDNN's matrix product, as ATen calls it for its reduced-precision products
// (ATen/native/mkldnn/Matmul.cpp; exported by libtorch_cpu, its header not shipped). On
// processors where MKL runs its AVX2 code although the cores have AVX-512 (AMD's), oneDNN's
// AVX-512 kernels run the model's float32 products about twice as fast (docs/scoring.md,
// point 9). Weak: a torch without oneDNN leaves it null, and `onednn_available` says false.
namespace at {
namespace native {
TORCH_API void mkldnn_matmul(const Tensor& mat1, const Tensor& mat2, const Tensor& result, float beta,
                             float alpha) __attribute__((weak));
}  // namespace native
}  // namespace at

namespace {

constexpr int64_t kGrain = 16;  // rows a thread takes at least
constexpr int64_t kLanes = 16;  // floats of one fixed-length inner loop (held in vector registers)

void check(const torch::Tensor& t, const char* name, int64_t dims) {
  TORCH_CHECK(t.scalar_type() == torch::kFloat32, name, ": float32 expected");
  TORCH_CHECK(t.dim() == dims, name, ": ", dims, " dimensions expected");
  TORCH_CHECK(t.stride(-1) == 1, name, ": its last dimension must be contiguous");
}

}  // namespace

// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w: transformers' LlamaRMSNorm.
void rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps, torch::Tensor out) {
  check(x, "x", 2);
  check(w, "weight", 1);
  check(out, "out", 2);
  const int64_t n = x.size(0), h = x.size(1);
  TORCH_CHECK(w.size(0) == h && out.size(0) == n && out.size(1) == h, "rms_norm: shapes differ");
  const float* X = x.data_ptr<float>();
  const float* W = w.data_ptr<float>();
  float* O = out.data_ptr<float>();
  const int64_t ldx = x.stride(0), ldo = out.stride(0);
  const float epsilon = static_cast<float>(eps);
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = X + r * ldx;
      float* orow = O + r * ldo;
      float s = 0.f;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < h; ++j) s += xr[j] * xr[j];
      const float scale = 1.0f / std::sqrt(s / static_cast<float>(h) + epsilon);
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) orow[j] = (xr[j] * scale) * W[j];
    }
  });
}

// out[r, k] = x[r, k] * cos[r] + rotate_half(x[r, k]) * sin[r] for the first `heads` heads
// of each row of qkv ([n, >= heads * d]), rotate_half(x) = [-x2, x1]: transformers'
// apply_rotary_pos_emb on the queries and keys together. cos and sin: [n, d].
void rotary(const torch::Tensor& qkv, int64_t heads, const torch::Tensor& cos, const torch::Tensor& sin,
            torch::Tensor out) {
  check(qkv, "qkv", 2);
  check(cos, "cos", 2);
  check(sin, "sin", 2);
  check(out, "out", 3);
  const int64_t n = qkv.size(0), d = cos.size(1), half = d / 2;
  TORCH_CHECK(qkv.size(1) >= heads * d && out.size(0) == n && out.size(1) == heads && out.size(2) == d &&
                  out.stride(1) == d && cos.size(0) == n && sin.size(0) == n && sin.size(1) == d && d % 2 == 0,
              "rotary: shapes differ");
  const float* Q = qkv.data_ptr<float>();
  const float* C = cos.data_ptr<float>();
  const float* S = sin.data_ptr<float>();
  float* O = out.data_ptr<float>();
  const int64_t ldq = qkv.stride(0), ldo = out.stride(0), ldc = cos.stride(0), lds = sin.stride(0);
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* c = C + r * ldc;
      const float* s = S + r * lds;
      for (int64_t k = 0; k < heads; ++k) {
        const float* x = Q + r * ldq + k * d;
        float* o = O + r * ldo + k * d;
#pragma omp simd
        for (int64_t j = 0; j < half; ++j) {
          o[j] = x[j] * c[j] - x[j + half] * s[j];
          o[j + half] = x[j + half] * c[j + half] + x[j] * s[j + half];
        }
      }
    }
  });
}

// gate[r] = silu(gate[r]) * up[r], in place, where gate_up[r] = [gate[r] | up[r]] ([n, 2 inter]).
void swiglu(torch::Tensor gate_up, int64_t inter) {
  check(gate_up, "gate_up", 2);
  TORCH_CHECK(gate_up.size(1) == 2 * inter, "swiglu: gate_up must hold 2 x inter columns");
  const int64_t n = gate_up.size(0), ld = gate_up.stride(0);
  float* G = gate_up.data_ptr<float>();
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* g = G + r * ld;
      const float* u = g + inter;
#pragma omp simd
      for (int64_t j = 0; j < inter; ++j) {
        const float v = g[j];
        g[j] = v / (1.0f + expf(-v)) * u[j];
      }
    }
  });
}

// One vocabulary block of the streaming log-sum-exp, for each row r of logits [n, B]:
// block_top[r] = max of the row; new_top[r] = max(top[r], block_top[r]);
// total[r] = total[r] * exp(top[r] - new_top[r]) + sum_j exp(logits[r, j] - new_top[r]).
// logits and top are read only (the caller compares targets with the old maximum).
void block_lse(const torch::Tensor& logits, const torch::Tensor& top, torch::Tensor total,
               torch::Tensor block_top, torch::Tensor new_top) {
  check(logits, "logits", 2);
  for (const torch::Tensor& t : {top, total, block_top, new_top}) {
    check(t, "row vector", 1);
    TORCH_CHECK(t.size(0) == logits.size(0), "block_lse: one value a row expected");
  }
  const int64_t n = logits.size(0), b = logits.size(1), ld = logits.stride(0);
  const float* L = logits.data_ptr<float>();
  const float* T = top.data_ptr<float>();
  float* S = total.data_ptr<float>();
  float* BT = block_top.data_ptr<float>();
  float* NT = new_top.data_ptr<float>();
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* l = L + r * ld;
      float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
      for (int64_t j = 0; j < b; ++j) m = l[j] > m ? l[j] : m;
      const float now = T[r] > m ? T[r] : m;
      float s = 0.f;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < b; ++j) s += expf(l[j] - now);
      S[r] = S[r] * expf(T[r] - now) + s;
      BT[r] = m;
      NT[r] = now;
    }
  });
}

// Attention of a packed prefix-tree row (causal.packed_hidden): query i attends to node j
// exactly when j <= i < end[j] (j is i or one of its ancestors; the row is in depth-first
// order, so the intervals nest), and only those keys are computed: about 15 a query on
// WSC273, where a dense masked attention over pieces of the row computes 60 or more.
// qk: [n, heads + kv, d], the rotated queries then keys; v: [n, kv, d]; query head h
// reads key/value head h / (heads / kv); out: [n, heads * d]. Each number is computed as
// SDPA's CPU flash kernel computes it (which transformers, so lm-eval, runs): a score is
// one chain of fused multiply-adds over the head dimension in order, times the scale;
// exp(score - maximum) summed; the output one chain of fused multiply-adds over the keys
// in order, times the reciprocal of the sum. (The exp and the order of the sum's terms
// differ.) Each thread walks its range of queries in order, keeping the keys and values
// of the current path on a stack, the keys transposed so that kLanes keys' scores are
// computed at once, for up to kPass heads that read the same keys.
namespace {

constexpr int kPass = 4;  // query heads scored in one pass over a key block

// s[p * cap + w0 + t] = scale * (q_p . key w0 + t), t < kLanes, for the P heads q[0..P).
template <int D, int P>
inline void score_block(const float* const* q, const float* kt, int64_t cap, int64_t w0, float scale, float* s) {
  float acc[P][kLanes] = {};
  for (int c = 0; c < D; ++c) {
    const float* k = kt + c * cap + w0;
    for (int p = 0; p < P; ++p) {
      const float qc = q[p][c];
#pragma omp simd
      for (int t = 0; t < kLanes; ++t) acc[p][t] = __builtin_fmaf(qc, k[t], acc[p][t]);
    }
  }
  for (int p = 0; p < P; ++p)
#pragma omp simd
    for (int t = 0; t < kLanes; ++t) s[p * cap + w0 + t] = acc[p][t] * scale;
}

template <int D>
void tree_attention_rows(const float* QK, const float* V, const int64_t* E, float* O, int64_t heads, int64_t kv,
                         int64_t ldqk, int64_t ldv, int64_t ldo, float scale, int64_t begin, int64_t stop,
                         int64_t deepest) {
  const int64_t group = heads / kv;
  const int64_t cap = (deepest + kLanes - 1) / kLanes * kLanes;
  std::vector<float> keys(kv * D * cap, 0.f), values(kv * cap * D, 0.f), score(kPass * cap, 0.f);
  std::vector<int64_t> path;
  path.reserve(cap);
  auto push = [&](int64_t j) {
    const int64_t slot = static_cast<int64_t>(path.size());
    path.push_back(j);
    for (int64_t g = 0; g < kv; ++g) {
      const float* k = QK + j * ldqk + (heads + g) * D;
      float* kt = keys.data() + g * D * cap + slot;
      for (int c = 0; c < D; ++c) kt[c * cap] = k[c];
      std::copy(V + j * ldv + g * D, V + j * ldv + (g + 1) * D, values.data() + (g * cap + slot) * D);
    }
  };
  for (int64_t j = 0; j < begin; ++j)  // the ancestors of the range's first query
    if (E[j] > begin) push(j);
  for (int64_t i = begin; i < stop; ++i) {
    while (!path.empty() && E[path.back()] <= i) path.pop_back();
    push(i);
    const int64_t m = static_cast<int64_t>(path.size());
    for (int64_t h0 = 0, pass = 0; h0 < heads; h0 += pass) {
      // a pass: up to kPass heads of one key/value head
      const int64_t g = h0 / group;
      pass = std::min<int64_t>(kPass, (g + 1) * group - h0);
      const float* q[kPass];
      for (int64_t p = 0; p < pass; ++p) q[p] = QK + i * ldqk + (h0 + p) * D;
      const float* kt = keys.data() + g * D * cap;
      for (int64_t w0 = 0; w0 < m; w0 += kLanes) {  // cap is whole blocks: w0 + kLanes <= cap
        switch (pass) {
          case 1: score_block<D, 1>(q, kt, cap, w0, scale, score.data()); break;
          case 2: score_block<D, 2>(q, kt, cap, w0, scale, score.data()); break;
          case 3: score_block<D, 3>(q, kt, cap, w0, scale, score.data()); break;
          default: score_block<D, 4>(q, kt, cap, w0, scale, score.data()); break;
        }
      }
      const float* vs = values.data() + g * cap * D;
      for (int64_t p = 0; p < pass; ++p) {
        float* s = score.data() + p * cap;
        float top = -std::numeric_limits<float>::infinity();
        for (int64_t w = 0; w < m; ++w) top = s[w] > top ? s[w] : top;
        float total = 0.f;
#pragma omp simd reduction(+ : total)
        for (int64_t w = 0; w < m; ++w) {
          s[w] = expf(s[w] - top);
          total += s[w];
        }
        const float inv = 1.0f / total;
        float* o = O + i * ldo + (h0 + p) * D;
        for (int c0 = 0; c0 < D; c0 += kLanes) {
          float acc[kLanes] = {};
          for (int64_t w = 0; w < m; ++w) {
            const float pw = s[w];
            const float* vr = vs + w * D + c0;
#pragma omp simd
            for (int t = 0; t < kLanes; ++t) acc[t] = __builtin_fmaf(pw, vr[t], acc[t]);
          }
#pragma omp simd
          for (int t = 0; t < kLanes; ++t) o[c0 + t] = acc[t] * inv;
        }
      }
    }
  }
}

}  // namespace

void tree_attention(const torch::Tensor& qk, int64_t heads, const torch::Tensor& v, const torch::Tensor& end,
                    double scale, torch::Tensor out) {
  check(qk, "qk", 3);
  check(v, "v", 3);
  check(out, "out", 2);
  TORCH_CHECK(end.scalar_type() == torch::kInt64 && end.dim() == 1 && end.is_contiguous(),
              "tree_attention: end must be a contiguous int64 vector");
  const int64_t n = qk.size(0), kv = qk.size(1) - heads, d = qk.size(2);
  TORCH_CHECK(d == 16 || d == 32 || d == 64 || d == 128, "tree_attention: head size ", d,
              " (16, 32, 64 or 128 expected)");
  TORCH_CHECK(heads > 0 && kv > 0 && heads % kv == 0 && qk.stride(1) == d && v.size(0) == n && v.size(1) == kv &&
                  v.size(2) == d && v.stride(1) == d && out.size(0) == n && out.size(1) == heads * d &&
                  end.size(0) == n,
              "tree_attention: shapes differ");
  const int64_t* E = end.data_ptr<int64_t>();
  // the intervals must nest; the deepest path is the most keys a query has
  int64_t deepest = 0;
  {
    std::vector<int64_t> path;
    for (int64_t i = 0; i < n; ++i) {
      TORCH_CHECK(E[i] > i && E[i] <= n, "tree_attention: end[", i, "] = ", E[i], " is not in (", i, ", ", n, "]");
      while (!path.empty() && E[path.back()] <= i) path.pop_back();
      TORCH_CHECK(path.empty() || E[i] <= E[path.back()], "tree_attention: the intervals do not nest at ", i);
      path.push_back(i);
      deepest = std::max<int64_t>(deepest, static_cast<int64_t>(path.size()));
    }
  }
  const float* QK = qk.data_ptr<float>();
  const float* V = v.data_ptr<float>();
  float* O = out.data_ptr<float>();
  const int64_t ldqk = qk.stride(0), ldv = v.stride(0), ldo = out.stride(0);
  const float sc = static_cast<float>(scale);
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t stop) {
    switch (d) {
      case 16: return tree_attention_rows<16>(QK, V, E, O, heads, kv, ldqk, ldv, ldo, sc, begin, stop, deepest);
      case 32: return tree_attention_rows<32>(QK, V, E, O, heads, kv, ldqk, ldv, ldo, sc, begin, stop, deepest);
      case 64: return tree_attention_rows<64>(QK, V, E, O, heads, kv, ldqk, ldv, ldo, sc, begin, stop, deepest);
      default: return tree_attention_rows<128>(QK, V, E, O, heads, kv, ldqk, ldv, ldo, sc, begin, stop, deepest);
    }
  });
}

// The arguments of `target_rank` and `lm_eval_targets`: float32 rows [R, V] with contiguous
// entries, contiguous int64 row and target vectors, a float32 value and a bool greedy
// vector, one each a target, every (row, target) inside the rows.
void check_targets(const torch::Tensor& rows, const torch::Tensor& row, const torch::Tensor& target,
                   const torch::Tensor& value, const torch::Tensor& greedy, const char* name) {
  check(rows, "rows", 2);
  check(value, "value", 1);
  for (const torch::Tensor* t : {&row, &target})
    TORCH_CHECK(t->scalar_type() == torch::kInt64 && t->dim() == 1 && t->is_contiguous(), name,
                ": row and target must be contiguous int64 vectors");
  TORCH_CHECK(greedy.scalar_type() == torch::kBool && greedy.dim() == 1 && greedy.is_contiguous(), name,
              ": greedy must be a contiguous bool vector");
  const int64_t count = target.size(0), r_count = rows.size(0), vocab = rows.size(1);
  TORCH_CHECK(row.size(0) == count && value.size(0) == count && greedy.size(0) == count, name,
              ": one row, value and greedy flag a target expected");
  TORCH_CHECK(vocab > 0, name, ": empty rows");
  const int64_t* RI = row.data_ptr<int64_t>();
  const int64_t* T = target.data_ptr<int64_t>();
  for (int64_t i = 0; i < count; ++i)
    TORCH_CHECK(RI[i] >= 0 && RI[i] < r_count && T[i] >= 0 && T[i] < vocab, name, ": target ", i, " (row ",
                RI[i], ", entry ", T[i], ") is outside the rows");
}

// For each target i of a row of log-probabilities (rows [R, V], row[i], target[i]):
// value[i] = rows[row[i], target[i]] and greedy[i] = whether the target is the row's
// argmax as torch decides it (the first maximum): no entry before it is >= its value and
// none after it is larger. A row is read only as far as it takes to decide (a larger entry
// ends the search); the rows are read only.
void target_rank(const torch::Tensor& rows, const torch::Tensor& row, const torch::Tensor& target,
                 torch::Tensor value, torch::Tensor greedy) {
  check_targets(rows, row, target, value, greedy, "target_rank");
  const int64_t count = target.size(0), vocab = rows.size(1), ld = rows.stride(0);
  const int64_t* RI = row.data_ptr<int64_t>();
  const int64_t* T = target.data_ptr<int64_t>();
  const float* L = rows.data_ptr<float>();
  float* VAL = value.data_ptr<float>();
  bool* G = greedy.data_ptr<bool>();
  constexpr int64_t kStep = 512;  // entries read before the search may stop
  at::parallel_for(0, count, 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* l = L + RI[i] * ld;
      const int64_t t = T[i];
      const float x = l[t];
      bool first = true;
      for (int64_t j0 = 0; j0 < vocab && first; j0 += kStep) {
        const int64_t j1 = std::min(vocab, j0 + kStep);
        // entries before the target may not equal it, entries after it may not exceed it
        float m = -std::numeric_limits<float>::infinity();
        const int64_t before = std::min(j1, std::max(j0, t));
#pragma omp simd reduction(max : m)
        for (int64_t j = j0; j < before; ++j) m = l[j] > m ? l[j] : m;
        if (m >= x) first = false;
        m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
        for (int64_t j = std::max(j0, t + 1); j < j1; ++j) m = l[j] > m ? l[j] : m;
        if (m > x) first = false;
      }
      VAL[i] = x;
      G[i] = first;
    }
  });
}

namespace {
// The sum of a row's exp(x - max) as torch's float32 log_softmax adds it (ATen's
// map_reduce_all with its vector of `lanes` floats, then VecReduceAllSIMD): each lane adds
// its entries (j = lane, lane + lanes, ...) one after another, a partial last vector adds
// to its first lanes only, and the lanes are added pairwise, halves first.
#if defined(__AVX2__)
// glibc's 8-float vector exp (libmvec's AVX2 variant, which gcc also calls for the loops
// above), on gcc's 8-float vectors (the same registers as __m256).
typedef float v8f __attribute__((vector_size(32)));
extern "C" v8f _ZGVdN8v_expf(v8f);

inline v8f load8(const float* x) {
  v8f v;
  __builtin_memcpy(&v, x, sizeof v);
  return v;
}
#endif

template <int lanes>
float torch_sum_exp(const float* x, int64_t v, float top) {
  float acc[lanes];
  if (v < lanes) {  // torch's slow path: the entries one after another
    float s = expf(x[0] - top);
    for (int64_t j = 1; j < v; ++j) s += expf(x[j] - top);
    return s;
  }
  const int64_t whole = v - v % lanes;
#if defined(__AVX2__)
  // lanes / 8 vectors of 8 accumulators, lane l in vector l / 8
  v8f a[lanes / 8];
  const v8f t = {top, top, top, top, top, top, top, top};
  for (int k = 0; k < lanes / 8; ++k) a[k] = _ZGVdN8v_expf(load8(x + 8 * k) - t);
  for (int64_t j = lanes; j < whole; j += lanes)
    for (int k = 0; k < lanes / 8; ++k) a[k] += _ZGVdN8v_expf(load8(x + j + 8 * k) - t);
  for (int k = 0; k < lanes / 8; ++k) __builtin_memcpy(acc + 8 * k, &a[k], sizeof a[k]);
#else
#pragma omp simd
  for (int l = 0; l < lanes; ++l) acc[l] = expf(x[l] - top);
  for (int64_t j = lanes; j < whole; j += lanes) {
#pragma omp simd
    for (int l = 0; l < lanes; ++l) acc[l] += expf(x[j + l] - top);
  }
#endif
  for (int64_t l = 0; l < v - whole; ++l) acc[l] += expf(x[whole + l] - top);
  for (int width = lanes / 2; width >= 1; width /= 2)  // lane i += lane i ^ width
    for (int l = 0; l < width; ++l) acc[l] = acc[l] + acc[l + width];
  return acc[0];
}
}  // namespace

// lm-evaluation-harness's normalization of whole float32 logit rows ([R, V]) at the targets
// only, with the rows read twice and nothing written: for target i of row row[i],
// value[i] = log_softmax(rows[row[i]])[target[i]] as torch's float32 log_softmax computes it
// ((x - max) - log(sum), the sum in torch's order for a vector of `lanes` floats: 16 where
// torch runs its AVX-512 kernels, 8 for AVX2) and greedy[i] = whether the target is the
// first maximum of that normalised row (torch's argmax).
void lm_eval_targets(const torch::Tensor& rows, const torch::Tensor& row, const torch::Tensor& target,
                     int64_t lanes, torch::Tensor value, torch::Tensor greedy) {
  TORCH_CHECK(lanes == 8 || lanes == 16, "lm_eval_targets: lanes must be 8 or 16");
  check_targets(rows, row, target, value, greedy, "lm_eval_targets");
  const int64_t count = target.size(0), r_count = rows.size(0), vocab = rows.size(1), ld = rows.stride(0);
  const int64_t* RI = row.data_ptr<int64_t>();
  const int64_t* T = target.data_ptr<int64_t>();
  const float* L = rows.data_ptr<float>();
  // each row with a target: its maximum and log(sum exp(x - max))
  std::vector<char> used(r_count, 0);
  for (int64_t i = 0; i < count; ++i) used[RI[i]] = 1;
  std::vector<float> top(r_count), log_sum(r_count);
  at::parallel_for(0, r_count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      if (!used[r]) continue;
      const float* x = L + r * ld;
      float m = x[0];
#pragma omp simd reduction(max : m)
      for (int64_t j = 1; j < vocab; ++j) m = x[j] > m ? x[j] : m;
      const float s = lanes == 16 ? torch_sum_exp<16>(x, vocab, m) : torch_sum_exp<8>(x, vocab, m);
      top[r] = m;
      log_sum[r] = std::log(s);
    }
  });
  float* VAL = value.data_ptr<float>();
  bool* G = greedy.data_ptr<bool>();
  at::parallel_for(0, count, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r = RI[i], t = T[i];
      const float* x = L + r * ld;
      const float m = top[r], ls = log_sum[r];
      const float v = (x[t] - m) - ls;
      // the normalisation keeps the order (or makes ties), so the row's largest normalised
      // entry is the maximum's, -log(sum); the target is the first one equal to it
      bool first = v == (m - m) - ls;
      if (first) {
        int64_t ties = 0;
#pragma omp simd reduction(+ : ties)
        for (int64_t j = 0; j < t; ++j) ties += (x[j] - m) - ls == v;
        first = ties == 0;
      }
      VAL[i] = v;
      G[i] = first;
    }
  });
}

namespace {
// CBLAS's enumerations (mkl_cblas.h)
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kPacked = 151, kBMatrix = 162;
// The row count packing is asked for: MKL's packed size and layout of a weight depend on
// its own shape only (measured: the same for 1 to 4,096 rows), and the products read it
// at any row count.
constexpr int kPackRows = 1024;

int as_int(int64_t v, const char* what) {
  TORCH_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), what, " is too large for MKL's products");
  return static_cast<int>(v);
}
}  // namespace

bool packed_available() { return cblas_sgemm_pack_get_size && cblas_sgemm_pack && cblas_sgemm_compute; }

// A linear layer's weight [n, k] (out = x @ weight.T) in MKL's packed layout, in a new
// float32 tensor of the size MKL asks for: the product then reads the weight as its kernel
// wants it instead of repacking it at every call. The packed data must stay where it is
// (MKL's layout depends on its alignment): a copy of the tensor is not a packed weight.
torch::Tensor pack_weight(const torch::Tensor& weight) {
  TORCH_CHECK(packed_available(), "pack_weight: this torch build has no MKL packed products");
  check(weight, "weight", 2);
  const int n = as_int(weight.size(0), "the weight"), k = as_int(weight.size(1), "the weight");
  const int ld = as_int(weight.stride(0), "the weight's row stride");
  const size_t bytes = cblas_sgemm_pack_get_size(kBMatrix, kPackRows, n, k);
  auto packed = torch::empty({static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float))}, weight.options());
  cblas_sgemm_pack(kRowMajor, kBMatrix, kTrans, kPackRows, n, k, 1.0f, weight.data_ptr<float>(), ld,
                   packed.data_ptr<float>());
  return packed;
}

// out = x @ weight.T + beta * out for a weight [n, k] packed by `pack_weight`; beta 0 (out
// overwritten) or 1 (added to: the residual add of addmm_). x [m, k] and out [m, n] with
// contiguous rows (any row stride). The same numbers as torch's product (MKL's sgemm) from
// a few hundred rows (200 for SmolLM2's shapes); with fewer, torch's product takes another
// of MKL's paths, and the two differ by float32 rounding.
void packed_mm(const torch::Tensor& x, const torch::Tensor& packed, int64_t n, double beta, torch::Tensor out) {
  TORCH_CHECK(packed_available(), "packed_mm: this torch build has no MKL packed products");
  check(x, "x", 2);
  check(out, "out", 2);
  TORCH_CHECK(packed.scalar_type() == torch::kFloat32 && packed.dim() == 1 && packed.is_contiguous(),
              "packed_mm: a weight packed by pack_weight expected");
  TORCH_CHECK(beta == 0.0 || beta == 1.0, "packed_mm: beta must be 0 or 1");
  const int m = as_int(x.size(0), "x"), k = as_int(x.size(1), "x"), cols = as_int(n, "n");
  TORCH_CHECK(out.size(0) == m && out.size(1) == n, "packed_mm: out must be [", m, ", ", n, "]");
  const size_t bytes = cblas_sgemm_pack_get_size(kBMatrix, kPackRows, cols, k);
  TORCH_CHECK(static_cast<size_t>(packed.numel()) * sizeof(float) >= bytes,
              "packed_mm: the packed weight is not one of [", n, ", ", k, "]");
  if (m == 0) return;
  cblas_sgemm_compute(kRowMajor, kNoTrans, kPacked, m, cols, k, x.data_ptr<float>(), as_int(x.stride(0), "x"),
                      packed.data_ptr<float>(), k, static_cast<float>(beta), out.data_ptr<float>(),
                      as_int(out.stride(0), "out"));
}

bool onednn_available() { return &at::native::mkldnn_matmul != nullptr; }

// out = x @ weight_t + beta * out (beta 0 or 1, the residual add) by oneDNN's float32
// matrix product (`mkldnn_matmul` above: oneDNN's sum post-op for beta 1). x [m, k] and out
// [m, n] with contiguous rows, weight_t [k, n] contiguous or the transpose of a contiguous
// weight [n, k]. The numbers differ from torch's product (MKL's) by float32 rounding: oneDNN
// adds in another order. One row goes to torch's product (below).
void onednn_mm(const torch::Tensor& x, const torch::Tensor& weight_t, double beta, torch::Tensor out) {
  TORCH_CHECK(onednn_available(), "onednn_mm: this torch build has no oneDNN products");
  check(x, "x", 2);
  check(out, "out", 2);
  TORCH_CHECK(weight_t.scalar_type() == torch::kFloat32 && weight_t.dim() == 2, "onednn_mm: a float32 weight expected");
  TORCH_CHECK(beta == 0.0 || beta == 1.0, "onednn_mm: beta must be 0 or 1");
  TORCH_CHECK(x.size(1) == weight_t.size(0) && out.size(0) == x.size(0) && out.size(1) == weight_t.size(1),
              "onednn_mm: x [m, k], weight_t [k, n] and out [m, n] expected");
  if (x.size(0) == 0) return;
  if (x.size(0) == 1) {
    // one row: torch's product. ATen's oneDNN call with the sum post-op corrupts the heap
    // at one row (torch 2.13: "double free or corruption"); one row costs nothing anyway.
    if (beta == 1.0) {
      out.addmm_(x, weight_t);
    } else {
      at::mm_out(out, x, weight_t);
    }
    return;
  }
  at::native::mkldnn_matmul(x, weight_t, out, static_cast<float>(beta), 1.0f);
}

// Winnow's own float32 product, in MKL's order of additions (docs/scoring.md, "Exactness and
// speed", point 10). MKL's sgemm, where it runs its AVX2 code (on AMD's EPYC, although the
// cores have AVX-512), cuts k into blocks of 192 and adds each block as one chain of fused
// multiply-adds from zero, then adds the block's sum to out (beta 1: to what out held):
// out = ((out + s1) + s2) + ... Measured: bit for bit equal to torch's product for k of 100
// (one block), 384, 576, 600 (the last block shorter), 1,536 and 2,048, from 12 rows and 32
// columns up (with fewer, MKL takes other paths). The
// same order here on AVX-512's 16 lanes runs at oneDNN's rate, twice MKL's on that
// processor, and gives torch's numbers; `prepacked.order_block` checks the block length
// against torch's product on the machine before a weight is packed this way, and no block
// length agreeing there, MKL's packed products run.
namespace {
constexpr int64_t kPanel = 32;  // weight columns a micro-kernel reads: two vectors of 16 floats
constexpr int64_t kTile = 14;   // rows a micro-kernel computes: 28 accumulators + 2 weights + x
}  // namespace

bool ordered_available() {
#if defined(__AVX512F__)
  return true;
#else
  return false;
#endif
}

// A linear layer's weight [n, k] (out = x @ weight.T) as `ordered_mm` reads it: panels of 32
// of its rows, each k x 32 with one panel row per k (the last panel's missing rows zero).
torch::Tensor order_pack(const torch::Tensor& weight) {
  TORCH_CHECK(weight.scalar_type() == torch::kFloat32 && weight.dim() == 2, "order_pack: a float32 weight [n, k] expected");
  const int64_t n = weight.size(0), k = weight.size(1), panels = (n + kPanel - 1) / kPanel;
  auto packed = torch::zeros({panels * k * kPanel}, weight.options());
  const float* w = weight.data_ptr<float>();
  const int64_t s0 = weight.stride(0), s1 = weight.stride(1);
  float* o = packed.data_ptr<float>();
  at::parallel_for(0, panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t j = 0; j < kPanel && p * kPanel + j < n; ++j)
        for (int64_t i = 0; i < k; ++i) o[(p * k + i) * kPanel + j] = w[(p * kPanel + j) * s0 + i * s1];
  });
  return packed;
}

#if defined(__AVX512F__)
namespace {
// rows x 32 outputs over one block of kb: a fused multiply-add chain from zero along k (a:
// the rows' x interleaved, [kb][rows]; b: the panel's block, [kb][32]), then out = out +
// chain where ``add`` (a later block, or beta 1), else out = chain. Masks: the panel's
// columns that exist.
template <int R>
void ordered_tile(const float* a, const float* b, int64_t kb, float* c, int64_t ldc, __mmask16 m0, __mmask16 m1,
                  bool add) {
  __m512 s0[R], s1[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    s0[i] = _mm512_setzero_ps();
    s1[i] = _mm512_setzero_ps();
  }
  for (int64_t t = 0; t < kb; ++t) {
    const __m512 b0 = _mm512_loadu_ps(b + t * kPanel), b1 = _mm512_loadu_ps(b + t * kPanel + 16);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const __m512 x = _mm512_set1_ps(a[t * R + i]);
      s0[i] = _mm512_fmadd_ps(x, b0, s0[i]);
      s1[i] = _mm512_fmadd_ps(x, b1, s1[i]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    float* ci = c + i * ldc;
    if (add) {
      s0[i] = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, ci), s0[i]);
      s1[i] = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, ci + 16), s1[i]);
    }
    _mm512_mask_storeu_ps(ci, m0, s0[i]);
    _mm512_mask_storeu_ps(ci + 16, m1, s1[i]);
  }
}

using OrderedTile = void (*)(const float*, const float*, int64_t, float*, int64_t, __mmask16, __mmask16, bool);
constexpr OrderedTile kOrderedTiles[kTile + 1] = {
    nullptr,           &ordered_tile<1>,  &ordered_tile<2>,  &ordered_tile<3>,  &ordered_tile<4>,
    &ordered_tile<5>,  &ordered_tile<6>,  &ordered_tile<7>,  &ordered_tile<8>,  &ordered_tile<9>,
    &ordered_tile<10>, &ordered_tile<11>, &ordered_tile<12>, &ordered_tile<13>, &ordered_tile<14>};

__mmask16 lanes(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF) : count <= 0 ? 0 : static_cast<__mmask16>((1u << count) - 1);
}
}  // namespace
#endif

// out = x @ weight.T + beta * out (beta 0 or 1) for a weight [n, k] packed by `order_pack`,
// adding in blocks of ``block`` along k as MKL does (above). x [m, k] and out [m, n] with
// contiguous rows. Each output is made by one thread in one order, so the numbers do not
// depend on the thread count or on the other rows.
void ordered_mm(const torch::Tensor& x, const torch::Tensor& packed, int64_t n, int64_t block, double beta,
                torch::Tensor out) {
  TORCH_CHECK(ordered_available(), "ordered_mm: the kernels were built without AVX-512");
  check(x, "x", 2);
  check(out, "out", 2);
  TORCH_CHECK(beta == 0.0 || beta == 1.0, "ordered_mm: beta must be 0 or 1");
  TORCH_CHECK(block > 0, "ordered_mm: the block length must be positive");
  const int64_t m = x.size(0), k = x.size(1), panels = (n + kPanel - 1) / kPanel;
  TORCH_CHECK(out.size(0) == m && out.size(1) == n, "ordered_mm: out must be [", m, ", ", n, "]");
  TORCH_CHECK(packed.scalar_type() == torch::kFloat32 && packed.dim() == 1 && packed.is_contiguous() &&
                  packed.numel() == panels * k * kPanel,
              "ordered_mm: a weight [", n, ", ", k, "] packed by order_pack expected");
  if (m == 0 || n == 0) return;
#if defined(__AVX512F__)
  const int64_t tiles = (m + kTile - 1) / kTile, ldx = x.stride(0), ldc = out.stride(0);
  const float* X = x.data_ptr<float>();
  const float* B = packed.data_ptr<float>();
  float* C = out.data_ptr<float>();
  // x's rows interleaved by tile and block: block k0's tile t at A + k0 * tiles * kTile + t * kb * kTile
  thread_local std::vector<float> interleaved;
  interleaved.resize(static_cast<size_t>(tiles * kTile * k));
  float* A = interleaved.data();
  at::parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r0 = t * kTile, rows = std::min(kTile, m - r0);
      for (int64_t k0 = 0; k0 < k; k0 += block) {
        const int64_t kb = std::min(block, k - k0);
        float* to = A + k0 * tiles * kTile + t * kb * kTile;
        for (int64_t i = 0; i < kb; ++i)
          for (int64_t r = 0; r < rows; ++r) to[i * rows + r] = X[(r0 + r) * ldx + k0 + i];
      }
    }
  });
  // each thread its panels of columns; a panel's blocks in order, each over all row tiles
  // (the panel's block of weights stays in the first-level cache, out's panel in the second)
  at::parallel_for(0, panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t cols = std::min(kPanel, n - p * kPanel);
      const __mmask16 m0 = lanes(cols), m1 = lanes(cols - 16);
      for (int64_t k0 = 0; k0 < k; k0 += block) {
        const int64_t kb = std::min(block, k - k0);
        const bool add = beta != 0.0 || k0 > 0;
        const float* b = B + (p * k + k0) * kPanel;
        for (int64_t t = 0; t < tiles; ++t) {
          const int64_t r0 = t * kTile, rows = std::min(kTile, m - r0);
          kOrderedTiles[rows](A + k0 * tiles * kTile + t * kb * kTile, b, kb, C + r0 * ldc + p * kPanel, ldc, m0, m1,
                              add);
        }
      }
    }
  });
#endif
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rms_norm", &rms_norm, "RMS norm of each row, times the weight, into out");
  m.def("rotary", &rotary, "rotary positions of the first heads of each row, into out");
  m.def("swiglu", &swiglu, "gate = silu(gate) * up, in place");
  m.def("block_lse", &block_lse, "one vocabulary block of the streaming log-sum-exp");
  m.def("tree_attention", &tree_attention, "attention of a packed prefix-tree row over each query's path, into out");
  m.def("target_rank", &target_rank, "each target's log-probability and whether it is its row's argmax");
  m.def("lm_eval_targets", &lm_eval_targets, "lm-eval's log_softmax at the targets, and whether each is its row's argmax");
  m.def("packed_available", &packed_available, "whether torch's MKL packed products can be called");
  m.def("pack_weight", &pack_weight, "a linear layer's weight [n, k] in MKL's packed layout");
  m.def("packed_mm", &packed_mm, "out = x @ weight.T + beta * out, the weight packed");
  m.def("onednn_available", &onednn_available, "whether torch's oneDNN products can be called");
  m.def("onednn_mm", &onednn_mm, "out = x @ weight_t + beta * out by oneDNN's product");
  m.def("ordered_available", &ordered_available, "whether the kernels have Winnow's own product (AVX-512)");
  m.def("order_pack", &order_pack, "a linear layer's weight [n, k] in panels for ordered_mm");
  m.def("ordered_mm", &ordered_mm, "out = x @ weight.T + beta * out in MKL's order of additions");
}
