// Fused float32 passes of the lean Llama forward and of the output layer's streaming
// log-sum-exp (evaluation/lm/kernels.py builds this file; docs/scoring.md, "Exactness and
// speed", point 7). Each function does in one pass over its rows what the torch path does in
// two to four, and runs its rows on torch's own thread pool (at::parallel_for).
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <limits>

// glibc's vector exp (libmvec): gcc calls _ZGVdN8v_expf and its kin for the loops below
// when expf is declared with the simd attribute, which math.h does only under
// -ffast-math; that option is not used (it would change every other operation's rounding).
extern "C" float expf(float) __attribute__((__simd__("notinbranch")));

namespace {

constexpr int64_t kGrain = 16;  // rows a thread takes at least

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

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rms_norm", &rms_norm, "RMS norm of each row, times the weight, into out");
  m.def("rotary", &rotary, "rotary positions of the first heads of each row, into out");
  m.def("swiglu", &swiglu, "gate = silu(gate) * up, in place");
  m.def("block_lse", &block_lse, "one vocabulary block of the streaming log-sum-exp");
}
