#include "ops/cpu_kernels.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Backward recomputes forward's x * scale + shift to find where the ReLU let the gradient
// through, so both must round alike: the file is built without FMA contraction under GCC
// (core/CMakeLists.txt), and clang contracts only within one expression, here one per lambda.

namespace netsmith::ops::kernels {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int kLanes = 16;               // independent partial sums (vectorisable reductions)
constexpr std::int64_t kRowChunk = 256;  // channels-last reductions: rows per partial sum

bool channelsLast(const torch::Tensor& x) {
  return !x.is_contiguous() && x.is_contiguous(torch::MemoryFormat::ChannelsLast);
}

torch::MemoryFormat formatOf(bool cl) {
  return cl ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
}

/// Sums of f(i) and g(i) over i < n, in kLanes float lanes, returned as doubles.
template <typename F>
void laneSums(std::int64_t n, F f, double& s1, double& s2) {
  float a[kLanes] = {}, b[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      float u, v;
      f(i + j, u, v);
      a[j] += u;
      b[j] += v;
    }
  }
  for (int j = 0; i < n; ++i, ++j) {
    float u, v;
    f(i, u, v);
    a[j] += u;
    b[j] += v;
  }
  double sa = 0, sb = 0;
  for (int j = 0; j < kLanes; ++j) {
    sa += a[j];
    sb += b[j];
  }
  s1 += sa;
  s2 += sb;
}

/// Per-channel sums (s1[c], s2[c]) of f over an image tensor's values, NCHW or channels-last.
/// `f(c, x, g, u, v)` gets the channel, the value of `x` and of `g` at one position.
/// The order of additions depends on the shape only, never on the thread count.
template <bool HasG, typename F>
void channelSums(const float* x, const float* g, std::int64_t n, std::int64_t c, std::int64_t hw,
                 bool cl, F f, std::vector<double>& s1, std::vector<double>& s2) {
  s1.assign(static_cast<std::size_t>(c), 0.0);
  s2.assign(static_cast<std::size_t>(c), 0.0);
  if (!cl) {
    at::parallel_for(0, c, 1, [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t ch = c0; ch < c1; ++ch) {
        double a = 0, b = 0;
        for (std::int64_t img = 0; img < n; ++img) {
          const std::int64_t base = (img * c + ch) * hw;
          const float* __restrict xp = x + base;
          const float* __restrict gp = HasG ? g + base : x;
          laneSums(
              hw,
              [&](std::int64_t i, float& u, float& v) { f(ch, xp[i], HasG ? gp[i] : 0.f, u, v); },
              a, b);
        }
        s1[ch] = a;
        s2[ch] = b;
      }
    });
    return;
  }
  const std::int64_t rows = n * hw;
  const std::int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  std::vector<double> p1(static_cast<std::size_t>(chunks * c)),
      p2(static_cast<std::size_t>(chunks * c));
  at::parallel_for(0, chunks, 1, [&](std::int64_t k0, std::int64_t k1) {
    std::vector<float> av(static_cast<std::size_t>(c)), bv(static_cast<std::size_t>(c));
    float* __restrict a = av.data();
    float* __restrict b = bv.data();
    for (std::int64_t k = k0; k < k1; ++k) {
      std::fill(av.begin(), av.end(), 0.f);
      std::fill(bv.begin(), bv.end(), 0.f);
      const std::int64_t r1 = std::min(rows, (k + 1) * kRowChunk);
      for (std::int64_t r = k * kRowChunk; r < r1; ++r) {
        const float* __restrict xp = x + r * c;
        const float* __restrict gp = HasG ? g + r * c : x;
        for (std::int64_t ch = 0; ch < c; ++ch) {
          float u, v;
          f(ch, xp[ch], HasG ? gp[ch] : 0.f, u, v);
          a[ch] += u;
          b[ch] += v;
        }
      }
      for (std::int64_t ch = 0; ch < c; ++ch) {
        p1[static_cast<std::size_t>(k * c + ch)] = a[ch];
        p2[static_cast<std::size_t>(k * c + ch)] = b[ch];
      }
    }
  });
  for (std::int64_t k = 0; k < chunks; ++k) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      s1[static_cast<std::size_t>(ch)] += p1[static_cast<std::size_t>(k * c + ch)];
      s2[static_cast<std::size_t>(ch)] += p2[static_cast<std::size_t>(k * c + ch)];
    }
  }
}

/// out[i] = f(channel, x[i], g[i]) over an image tensor, NCHW or channels-last.
template <bool HasG, typename F>
void channelMap(const float* x, const float* g, float* out, std::int64_t n, std::int64_t c,
                std::int64_t hw, bool cl, F f) {
  if (!cl) {
    at::parallel_for(0, n * c, 1, [&](std::int64_t p0, std::int64_t p1) {
      for (std::int64_t p = p0; p < p1; ++p) {
        const std::int64_t ch = p % c;
        const float* __restrict xp = x + p * hw;
        const float* __restrict gp = HasG ? g + p * hw : x;
        float* __restrict op = out + p * hw;
        for (std::int64_t i = 0; i < hw; ++i)
          op[i] = f(ch, xp[i], HasG ? gp[i] : 0.f);
      }
    });
    return;
  }
  at::parallel_for(0, n * hw, 64, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* __restrict xp = x + r * c;
      const float* __restrict gp = HasG ? g + r * c : x;
      float* __restrict op = out + r * c;
      for (std::int64_t ch = 0; ch < c; ++ch)
        op[ch] = f(ch, xp[ch], HasG ? gp[ch] : 0.f);
    }
  });
}

struct ImageDims {
  std::int64_t n, c, h, w;
  bool cl;
};

ImageDims dimsOf(const torch::Tensor& x) {
  return {x.size(0), x.size(1), x.size(2), x.size(3), channelsLast(x)};
}

// ---- batch norm (+ ReLU) ----------------------------------------------------------------------

class BatchNormFn : public torch::autograd::Function<BatchNormFn> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               torch::Tensor runningMean, torch::Tensor runningVar, double momentum,
                               double eps, bool relu) {
    RECORD_USER_SCOPE("netsmith::batch_norm");  // named in profiles
    const ImageDims d = dimsOf(x);
    const std::int64_t hw = d.h * d.w;
    const double count = static_cast<double>(d.n * hw);
    const float* xp = x.data_ptr<float>();
    // Shifted sums (by each channel's first value) keep E[x^2] - E[x]^2 accurate.
    std::vector<float> shift(static_cast<std::size_t>(d.c));
    for (std::int64_t ch = 0; ch < d.c; ++ch)
      shift[static_cast<std::size_t>(ch)] = d.cl ? xp[ch] : xp[ch * hw];
    std::vector<double> s1, s2;
    channelSums<false>(
        xp, nullptr, d.n, d.c, hw, d.cl,
        [&](std::int64_t ch, float v, float, float& u, float& w) {
          u = v - shift[static_cast<std::size_t>(ch)];
          w = u * u;
        },
        s1, s2);
    auto opts = x.options();
    auto mean = torch::empty({d.c}, opts), invstd = torch::empty({d.c}, opts);
    auto scale = torch::empty({d.c}, opts), offset = torch::empty({d.c}, opts);
    const float* wp = weight.data_ptr<float>();  // always defined: see batchNormTrain()
    const float* bp = bias.data_ptr<float>();
    float* rm = runningMean.data_ptr<float>();
    float* rv = runningVar.data_ptr<float>();
    for (std::int64_t ch = 0; ch < d.c; ++ch) {
      const auto k = static_cast<std::size_t>(ch);
      const double dm = s1[k] / count;
      const double var = std::max(0.0, s2[k] / count - dm * dm);
      const double m = shift[k] + dm;
      const double is = 1.0 / std::sqrt(var + eps);
      mean.data_ptr<float>()[ch] = static_cast<float>(m);
      invstd.data_ptr<float>()[ch] = static_cast<float>(is);
      const float sc = static_cast<float>(wp[ch] * is);
      scale.data_ptr<float>()[ch] = sc;
      offset.data_ptr<float>()[ch] = static_cast<float>(bp[ch] - m * sc);
      rm[ch] = static_cast<float>((1 - momentum) * rm[ch] + momentum * m);
      rv[ch] = static_cast<float>((1 - momentum) * rv[ch] + momentum * var * count / (count - 1));
    }
    auto out = torch::empty(x.sizes(), opts.memory_format(formatOf(d.cl)));
    const float* sc = scale.data_ptr<float>();
    const float* of = offset.data_ptr<float>();
    if (relu) {
      channelMap<false>(xp, nullptr, out.data_ptr<float>(), d.n, d.c, hw, d.cl,
                        [&](std::int64_t ch, float v, float) {
                          const float y = v * sc[ch] + of[ch];
                          return y < 0.f ? 0.f : y;  // a NaN stays NaN, as in torch::relu
                        });
    } else {
      channelMap<false>(xp, nullptr, out.data_ptr<float>(), d.n, d.c, hw, d.cl,
                        [&](std::int64_t ch, float v, float) { return v * sc[ch] + of[ch]; });
    }
    ctx->save_for_backward({x, mean, invstd, scale, offset});
    ctx->saved_data["relu"] = relu;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const bool relu = ctx->saved_data["relu"].toBool();
    variable_list result(8);
    if (!grads[0].defined()) return result;
    const auto saved = ctx->get_saved_variables();
    auto [dx, gw, gb] =
        relu ? backwardPasses<true>(saved, grads[0]) : backwardPasses<false>(saved, grads[0]);
    result[0] = dx;
    result[1] = gw;
    result[2] = gb;
    return result;
  }

 private:
  /// dx, d weight, d bias from the gradient at the output, in two passes (sums, then dx).
  template <bool Relu>
  static std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> backwardPasses(
      const variable_list& saved, const torch::Tensor& grad) {
    const auto& x = saved[0];
    const ImageDims d = dimsOf(x);
    const std::int64_t hw = d.h * d.w;
    const double count = static_cast<double>(d.n * hw);
    const auto g = grad.contiguous(formatOf(d.cl));
    const float* xp = x.data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    const float* mp = saved[1].data_ptr<float>();
    const float* ip = saved[2].data_ptr<float>();
    const float* sc = saved[3].data_ptr<float>();
    const float* of = saved[4].data_ptr<float>();
    // The gradient reaching the batch norm's output: the ReLU lets it through where y > 0.
    auto dz = [sc, of](std::int64_t ch, float v, float gv) {
      if constexpr (Relu) {
        const float y = v * sc[ch] + of[ch];
        return y > 0.f ? gv : 0.f;
      } else {
        return gv;
      }
    };
    std::vector<double> sumDz, sumDzX;
    channelSums<true>(
        xp, gp, d.n, d.c, hw, d.cl,
        [&](std::int64_t ch, float v, float gv, float& u, float& w) {
          u = dz(ch, v, gv);
          w = u * (v - mp[ch]);
        },
        sumDz, sumDzX);
    std::vector<float> k1v(static_cast<std::size_t>(d.c)), k2v(k1v), k3v(k1v);
    auto opts = x.options();
    auto gw = torch::empty({d.c}, opts), gb = torch::empty({d.c}, opts);
    for (std::int64_t ch = 0; ch < d.c; ++ch) {
      const auto k = static_cast<std::size_t>(ch);
      const double is = ip[ch];
      gw.data_ptr<float>()[ch] = static_cast<float>(sumDzX[k] * is);
      gb.data_ptr<float>()[ch] = static_cast<float>(sumDz[k]);
      // dx = scale * (dz - mean(dz)) - (x - mean) * scale * invstd^2 * mean(dz * (x - mean))
      const double a = sc[ch];
      const double b = a * is * is * sumDzX[k] / count;
      k1v[k] = static_cast<float>(a);
      k2v[k] = static_cast<float>(b);
      k3v[k] = static_cast<float>(-a * sumDz[k] / count + b * mp[ch]);
    }
    const float* k1 = k1v.data();
    const float* k2 = k2v.data();
    const float* k3 = k3v.data();
    auto dx = torch::empty(x.sizes(), opts.memory_format(formatOf(d.cl)));
    channelMap<true>(xp, gp, dx.data_ptr<float>(), d.n, d.c, hw, d.cl,
                     [&](std::int64_t ch, float v, float gv) {
                       return dz(ch, v, gv) * k1[ch] - v * k2[ch] + k3[ch];
                     });
    return {dx, gw, gb};
  }
};

// ---- dropout ----------------------------------------------------------------------------------

/// A 32-bit integer hash with low bias (Wellons' "lowbias32").
inline std::uint32_t mix32(std::uint32_t v) {
  v ^= v >> 16;
  v *= 0x7feb352dU;
  v ^= v >> 15;
  v *= 0x846ca68bU;
  v ^= v >> 16;
  return v;
}

/// out[i] = keep(i) ? in[i] * scale : 0, where keep(i) is a hash of (seed, i) >= threshold.
void maskedScale(const float* in, float* out, std::int64_t n, std::uint64_t seed,
                 std::uint32_t threshold, float scale) {
  const auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  at::parallel_for(0, n, 4096, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      const auto u = static_cast<std::uint64_t>(i);
      const std::uint32_t r = mix32(mix32(static_cast<std::uint32_t>(u) + k0) ^
                                    (static_cast<std::uint32_t>(u >> 32) + k1));
      out[i] = r >= threshold ? in[i] * scale : 0.f;
    }
  });
}

class DropoutFn : public torch::autograd::Function<DropoutFn> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p) {
    RECORD_USER_SCOPE("netsmith::dropout");  // named in profiles
    // One draw from the default generator per call: torch::manual_seed reproduces the masks.
    const auto seed = static_cast<std::uint64_t>(
        torch::randint(std::numeric_limits<std::int64_t>::max(), {1}, torch::kLong)
            .item<std::int64_t>());
    const auto threshold =
        static_cast<std::uint32_t>(std::min(4294967295.0, std::floor(p * 4294967296.0)));
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    auto out = torch::empty_like(x, torch::MemoryFormat::Contiguous);
    maskedScale(x.data_ptr<float>(), out.data_ptr<float>(), x.numel(), seed, threshold, scale);
    ctx->saved_data["seed"] = static_cast<std::int64_t>(seed);
    ctx->saved_data["threshold"] = static_cast<std::int64_t>(threshold);
    ctx->saved_data["scale"] = static_cast<double>(scale);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list result(2);
    if (!grads[0].defined()) return result;
    const auto g = grads[0].contiguous();
    auto dx = torch::empty_like(g, torch::MemoryFormat::Contiguous);
    maskedScale(g.data_ptr<float>(), dx.data_ptr<float>(), g.numel(),
                static_cast<std::uint64_t>(ctx->saved_data["seed"].toInt()),
                static_cast<std::uint32_t>(ctx->saved_data["threshold"].toInt()),
                static_cast<float>(ctx->saved_data["scale"].toDouble()));
    result[0] = dx;
    return result;
  }
};

// ---- 2x2 max pooling, stride 2, NCHW ------------------------------------------------------------

/// The value LibTorch's max pooling picks in a 2x2 window and its place (0-3, row-major): a value
/// replaces the one so far when greater or NaN, so the first maximum wins, or the last NaN.
inline float pick4(float a, float b, float c, float d, int& k) {
  float m = a;
  k = 0;
  if (b > m || b != b) m = b, k = 1;
  if (c > m || c != c) m = c, k = 2;
  if (d > m || d != d) m = d, k = 3;
  return m;
}

#if defined(__SSE2__)
/// Four windows at once: a, b (top row's even and odd columns), c, d (bottom row's). m gets the
/// picked values, k the places (as 32-bit integers), with pick4()'s rule.
inline void pick4x4(__m128 a, __m128 b, __m128 c, __m128 d, __m128& m, __m128i& k) {
  m = a;
  k = _mm_setzero_si128();
  const __m128 vs[3] = {b, c, d};
  for (int i = 0; i < 3; ++i) {
    const __m128 v = vs[i];
    const __m128 take = _mm_or_ps(_mm_cmpgt_ps(v, m), _mm_cmpunord_ps(v, v));
    m = _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, m));
    const __m128i ti = _mm_castps_si128(take);
    k = _mm_or_si128(_mm_and_si128(ti, _mm_set1_epi32(i + 1)), _mm_andnot_si128(ti, k));
  }
}

/// Even and odd elements of p[0..7].
inline void evenOdd(const float* p, __m128& even, __m128& odd) {
  const __m128 lo = _mm_loadu_ps(p), hi = _mm_loadu_ps(p + 4);
  even = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  odd = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
}

/// Windows j0..j0+3 of the output row over input rows a0 (top) and a1: their picks and places.
inline void windows4(const float* a0, const float* a1, std::int64_t j0, __m128& m, __m128i& k) {
  __m128 a, b, c, d;
  evenOdd(a0 + 2 * j0, a, b);
  evenOdd(a1 + 2 * j0, c, d);
  pick4x4(a, b, c, d, m, k);
}
#endif

struct PoolDims {
  std::int64_t planes, h, w, oh, ow;
};

PoolDims poolDimsOf(const torch::Tensor& x) {
  const auto h = x.size(2), w = x.size(3);
  return {x.size(0) * x.size(1), h, w, h / 2, w / 2};
}

/// Covers the windows 0..ow-1 of a row: four(j0) does windows j0..j0+3 (SSE2), the last four
/// overlapping the ones before when ow is no multiple of four (they are written again with the
/// same values); one(j) does window j, for rows under four windows or without SSE2.
template <typename Four, typename One>
void walkRow(std::int64_t ow, [[maybe_unused]] const Four& four, const One& one) {
#if defined(__SSE2__)
  if (ow >= 4) {
    std::int64_t j = 0;
    for (; j + 4 <= ow; j += 4)
      four(j);
    if (j < ow) four(ow - 4);
    return;
  }
#endif
  for (std::int64_t j = 0; j < ow; ++j)
    one(j);
}

/// One output row from input rows a0 (top) and a1.
void maxPoolRow(const float* a0, const float* a1, float* o, std::int64_t ow) {
#if defined(__SSE2__)
  const auto four = [&](std::int64_t j0) {
    __m128 m;
    __m128i k;
    windows4(a0, a1, j0, m, k);
    _mm_storeu_ps(o + j0, m);
  };
#else
  const auto four = [](std::int64_t) {};
#endif
  walkRow(ow, four, [&](std::int64_t j) {
    int k;
    o[j] = pick4(a0[2 * j], a0[2 * j + 1], a1[2 * j], a1[2 * j + 1], k);
  });
}

/// The gradient of one output row into input rows d0 (top) and d1: each window's pick (found
/// again from a0 and a1) gets the output's gradient, the other three places zero.
void maxPoolGradRow(const float* a0, const float* a1, const float* g, float* d0, float* d1,
                    std::int64_t ow) {
#if defined(__SSE2__)
  const auto four = [&](std::int64_t j0) {
    __m128 m;
    __m128i k;
    windows4(a0, a1, j0, m, k);
    const __m128 v = _mm_loadu_ps(g + j0);
    __m128 to[4];
    for (int i = 0; i < 4; ++i)
      to[i] = _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(k, _mm_set1_epi32(i))), v);
    _mm_storeu_ps(d0 + 2 * j0, _mm_unpacklo_ps(to[0], to[1]));
    _mm_storeu_ps(d0 + 2 * j0 + 4, _mm_unpackhi_ps(to[0], to[1]));
    _mm_storeu_ps(d1 + 2 * j0, _mm_unpacklo_ps(to[2], to[3]));
    _mm_storeu_ps(d1 + 2 * j0 + 4, _mm_unpackhi_ps(to[2], to[3]));
  };
#else
  const auto four = [](std::int64_t) {};
#endif
  walkRow(ow, four, [&](std::int64_t j) {
    int k;
    pick4(a0[2 * j], a0[2 * j + 1], a1[2 * j], a1[2 * j + 1], k);
    const float v = g[j];
    d0[2 * j] = k == 0 ? v : 0.f;
    d0[2 * j + 1] = k == 1 ? v : 0.f;
    d1[2 * j] = k == 2 ? v : 0.f;
    d1[2 * j + 1] = k == 3 ? v : 0.f;
  });
}

std::int64_t poolGrain(const PoolDims& d) {
  return std::max<std::int64_t>(1, 16384 / (4 * d.ow));
}

void maxPoolForward(const float* x, float* out, const PoolDims& d) {
  at::parallel_for(0, d.planes * d.oh, poolGrain(d), [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t p = r / d.oh, i = r % d.oh;
      const float* a0 = x + (p * d.h + 2 * i) * d.w;
      maxPoolRow(a0, a0 + d.w, out + r * d.ow, d.ow);
    }
  });
}

/// dx from x and the output's gradient; an odd last row or column gets zero.
void maxPoolBackward(const float* x, const float* g, float* dx, const PoolDims& d) {
  at::parallel_for(0, d.planes * d.oh, poolGrain(d), [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t p = r / d.oh, i = r % d.oh;
      const std::int64_t top = (p * d.h + 2 * i) * d.w;
      float* d0 = dx + top;
      float* d1 = d0 + d.w;
      maxPoolGradRow(x + top, x + top + d.w, g + r * d.ow, d0, d1, d.ow);
      if (d.w > 2 * d.ow) d0[d.w - 1] = d1[d.w - 1] = 0.f;
      if (i == d.oh - 1 && d.h > 2 * d.oh)
        std::fill(d1 + d.w, d1 + 2 * d.w, 0.f);  // the plane's odd last row
    }
  });
}

class MaxPoolFn : public torch::autograd::Function<MaxPoolFn> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x) {
    RECORD_USER_SCOPE("netsmith::max_pool2x2");  // named in profiles
    const auto d = poolDimsOf(x);
    auto out = torch::empty({x.size(0), x.size(1), d.oh, d.ow}, x.options());
    maxPoolForward(x.data_ptr<float>(), out.data_ptr<float>(), d);
    ctx->save_for_backward({x});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list result(1);
    if (!grads[0].defined()) return result;
    const auto x = ctx->get_saved_variables()[0];
    const auto g = grads[0].contiguous();
    auto dx = torch::empty_like(x, torch::MemoryFormat::Contiguous);
    maxPoolBackward(x.data_ptr<float>(), g.data_ptr<float>(), dx.data_ptr<float>(), poolDimsOf(x));
    result[0] = dx;
    return result;
  }
};

}  // namespace

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("NETSMITH_CPU_KERNELS");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

bool imageTakes(const torch::Tensor& x) {
  return enabled() && x.defined() && x.layout() == torch::kStrided && x.device().is_cpu() &&
         x.scalar_type() == torch::kFloat && x.dim() == 4 && x.numel() > 0 &&
         (x.is_contiguous() || x.is_contiguous(torch::MemoryFormat::ChannelsLast));
}

torch::Tensor batchNormTrain(const torch::Tensor& x, const torch::Tensor& weight,
                             const torch::Tensor& bias, torch::Tensor runningMean,
                             torch::Tensor runningVar, double momentum, double eps, bool relu) {
  auto plain = [](const torch::Tensor& t) {
    return !t.defined() || (t.scalar_type() == torch::kFloat && t.device().is_cpu() &&
                            t.is_contiguous() && t.dim() == 1);
  };
  const bool fits = imageTakes(x) && x.numel() / x.size(1) > 1 && plain(weight) && plain(bias) &&
                    runningMean.defined() && runningVar.defined() && plain(runningMean) &&
                    plain(runningVar);
  if (!fits) {
    auto y = torch::batch_norm(x, weight, bias, runningMean, runningVar, true, momentum, eps, true);
    return relu ? torch::relu(y) : y;
  }
  // Autograd functions take defined tensors only: without an affine transform, a scale of one
  // and a shift of zero stand in (they need no gradient, so theirs is dropped).
  const auto c = x.size(1);
  return BatchNormFn::apply(x, weight.defined() ? weight : torch::ones({c}, x.options()),
                            bias.defined() ? bias : torch::zeros({c}, x.options()), runningMean,
                            runningVar, momentum, eps, relu);
}

bool dropoutTakes(const torch::Tensor& x) {
  return enabled() && x.defined() && x.layout() == torch::kStrided && x.device().is_cpu() &&
         x.scalar_type() == torch::kFloat && x.is_contiguous() && x.numel() > 0;
}

torch::Tensor dropout(const torch::Tensor& x, double p) {
  if (!dropoutTakes(x) || !(p > 0.0 && p < 1.0)) return torch::dropout(x, p, true);
  return DropoutFn::apply(x, p);
}

bool maxPool2x2Takes(const torch::Tensor& x) {
  return imageTakes(x) && x.is_contiguous() && x.size(2) >= 2 && x.size(3) >= 2;
}

torch::Tensor maxPool2x2(const torch::Tensor& x) {
  if (!maxPool2x2Takes(x)) return torch::max_pool2d(x, {2, 2}, {2, 2});
  return MaxPoolFn::apply(x);
}

}  // namespace netsmith::ops::kernels
