#pragma once
// Neighbour lists read in batches of kPairLanes pairs, laid out as structure
// of arrays: the solvers' pair loops gather a batch (the only scattered
// reads), then do the kernel arithmetic in loops over the lanes that the
// compiler vectorises (the same loops run per thread on the GPU), summing
// into one accumulator per lane. Lanes past the end of a list hold the
// particle itself, j = i, at an offset r = (far, far, far) with far >= h,
// where every kernel and gradient is 0: they add nothing, with no masks.
//
// The lanes' partial sums are added in a fixed order (lane_sum), so results
// do not depend on the thread count or the instruction set.
#include <stdint.h>

#include <type_traits>

#include "eddy/core/neighbor_grid.h"
#include "eddy/core/vec.h"

namespace eddy {

constexpr int kPairLanes = 8;

// Put before a loop over the lanes that adds into per-lane accumulators
// (float a[kPairLanes]) kept across batches. Without it GCC splits the
// accumulators into scalars, then adds lane by lane; with it (OpenMP's simd
// directive, -fopenmp-simd: no runtime, no threads) the loop is one vector
// operation per accumulator. Lane by lane, so no sum is reordered: the same
// bits. Empty on the device and where core's build does not enable it.
#if defined(EDDY_OMP_SIMD) && !defined(__CUDA_ARCH__)
#define EDDY_LANES _Pragma("omp simd")
#else
#define EDDY_LANES
#endif

struct PairBatch {
  float rx[kPairLanes], ry[kPairLanes], rz[kPairLanes];  // x_i - x_j
  float r2[kPairLanes];                                   // |x_i - x_j|^2
  float w[kPairLanes];  // padded positions (Vec4f): the w of x_j, a value of j's; plain ones: 0
  uint32_t j[kPairLanes];
  uint32_t q0;  // the list slot of lane 0 (pair-indexed data: slot q0 + l)
  int n;        // lanes in use: 1..kPairLanes
};

// f(batch) for each batch of i's neighbours (i at xi, positions x); `far`
// is at least the support radius.
// Full batches are gathered without a test per lane; the last, partial one
// (if any) fills its spare lanes.
//
// Positions may also come padded to 16 bytes (Vec4f), with a value of each
// particle's in w (b.w: PBF's lambda_j, ...): a neighbour is then one
// 16-byte load. On the host the eight loads of a full batch are transposed
// into the lanes with vector shuffles (4x4 in each 128-bit half), where
// three or four scalar loads a lane and the lane arrays' stores kept the
// load ports busy; on the device each lane is one float4 load. Either way
// the lanes hold the same bits. Spare lanes get w = 0.
#if !defined(__CUDACC__) && defined(__GNUC__) && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define EDDY_PADDED_SHUFFLE 1
#endif
#endif
#ifdef EDDY_PADDED_SHUFFLE
namespace detail {
typedef float f4 __attribute__((vector_size(16)));
typedef float f8 __attribute__((vector_size(32)));
// Lane l of X, Y, Z, W: the components of x[j[l]], l < 8.
inline __attribute__((always_inline)) void transpose_padded(const Vec4f* x, const uint32_t* j, f8& X, f8& Y,
                                                            f8& Z, f8& W) {
  f4 a[8];
  for (int l = 0; l < 8; ++l) __builtin_memcpy(&a[l], &x[j[l]], 16);
  // c_k = (a_k | a_{k+4}): the two 128-bit halves are transposed side by side
  const f8 c0 = __builtin_shufflevector(a[0], a[4], 0, 1, 2, 3, 4, 5, 6, 7);
  const f8 c1 = __builtin_shufflevector(a[1], a[5], 0, 1, 2, 3, 4, 5, 6, 7);
  const f8 c2 = __builtin_shufflevector(a[2], a[6], 0, 1, 2, 3, 4, 5, 6, 7);
  const f8 c3 = __builtin_shufflevector(a[3], a[7], 0, 1, 2, 3, 4, 5, 6, 7);
  const f8 xy01 = __builtin_shufflevector(c0, c1, 0, 8, 1, 9, 4, 12, 5, 13);  // x0 x1 y0 y1 | x4 x5 y4 y5
  const f8 xy23 = __builtin_shufflevector(c2, c3, 0, 8, 1, 9, 4, 12, 5, 13);
  const f8 zw01 = __builtin_shufflevector(c0, c1, 2, 10, 3, 11, 6, 14, 7, 15);  // z0 z1 w0 w1 | ...
  const f8 zw23 = __builtin_shufflevector(c2, c3, 2, 10, 3, 11, 6, 14, 7, 15);
  X = __builtin_shufflevector(xy01, xy23, 0, 1, 8, 9, 4, 5, 12, 13);
  Y = __builtin_shufflevector(xy01, xy23, 2, 3, 10, 11, 6, 7, 14, 15);
  Z = __builtin_shufflevector(zw01, zw23, 0, 1, 8, 9, 4, 5, 12, 13);
  W = __builtin_shufflevector(zw01, zw23, 2, 3, 10, 11, 6, 7, 14, 15);
}
}  // namespace detail
#endif
EDDY_HD_INLINE Vec3f batch_position(const Vec3f& p) { return p; }
EDDY_HD_INLINE Vec3f batch_position(const Vec4f& p) { return xyz(p); }
EDDY_HD_INLINE float batch_value(const Vec3f&) { return 0.0f; }
EDDY_HD_INLINE float batch_value(const Vec4f& p) { return p.w; }

template <class P, class F>
EDDY_HD_INLINE void for_pair_batches_of(const NeighborView& nb, uint32_t i, Vec3f xi, const P* x, float far, F&& f) {
  const uint32_t e = nb.end(i);
  uint32_t q0 = nb.begin(i);
  PairBatch b;
  for (; q0 + uint32_t(kPairLanes) <= e; q0 += kPairLanes) {
    b.q0 = q0;
    b.n = kPairLanes;
    const uint32_t* js = nb.indices + q0;
#ifdef EDDY_PADDED_SHUFFLE
    if constexpr (std::is_same_v<P, Vec4f>) {
      static_assert(kPairLanes == 8, "the padded gather transposes 8 lanes");
      detail::f8 X, Y, Z, W;
      detail::transpose_padded(x, js, X, Y, Z, W);
      X = xi.x - X;
      Y = xi.y - Y;
      Z = xi.z - Z;
      __builtin_memcpy(b.rx, &X, sizeof X);
      __builtin_memcpy(b.ry, &Y, sizeof Y);
      __builtin_memcpy(b.rz, &Z, sizeof Z);
      __builtin_memcpy(b.w, &W, sizeof W);
      for (int l = 0; l < kPairLanes; ++l) b.j[l] = js[l];
    } else
#endif
    {
      for (int l = 0; l < kPairLanes; ++l) {
        const uint32_t j = js[l];
        const P p = x[j];
        const Vec3f r = xi - batch_position(p);
        b.j[l] = j;
        b.rx[l] = r.x;
        b.ry[l] = r.y;
        b.rz[l] = r.z;
        b.w[l] = batch_value(p);
      }
    }
    for (int l = 0; l < kPairLanes; ++l) b.r2[l] = b.rx[l] * b.rx[l] + b.ry[l] * b.ry[l] + b.rz[l] * b.rz[l];
    f(b);
  }
  if (q0 < e) {
    b.q0 = q0;
    b.n = int(e - q0);
    for (int l = 0; l < kPairLanes; ++l) {
      const bool in = l < b.n;
      const uint32_t j = in ? nb.indices[q0 + l] : i;
      const P p = x[j];
      const Vec3f r = xi - batch_position(p);
      b.j[l] = j;
      b.rx[l] = in ? r.x : far;
      b.ry[l] = in ? r.y : far;
      b.rz[l] = in ? r.z : far;
      b.w[l] = in ? batch_value(p) : 0.0f;
    }
    for (int l = 0; l < kPairLanes; ++l) b.r2[l] = b.rx[l] * b.rx[l] + b.ry[l] * b.ry[l] + b.rz[l] * b.rz[l];
    f(b);
  }
}

template <class F>
EDDY_HD_INLINE void for_pair_batches(const NeighborView& nb, uint32_t i, Vec3f xi, const Vec3f* x, float far, F&& f) {
  for_pair_batches_of(nb, i, xi, x, far, f);
}
template <class F>
EDDY_HD_INLINE void for_pair_batches(const NeighborView& nb, uint32_t i, const Vec4f* x, float far, F&& f) {
  for_pair_batches_of(nb, i, xyz(x[i]), x, far, f);
}

// Pair-indexed values one pass keeps for later passes over the same lists
// and positions (PBF's W and g, read again by its correction, XSPH and
// vorticity passes; DFSPH's gradient scales, by its solves): the lanes in
// use are stored at the batch's list slots.
// (Through a pointer to the batch's first slot: with the index q0 + l,
// which may wrap in 32 bits, the compiler stores lane by lane.)
EDDY_HD_INLINE void store_lanes(float* dst, const PairBatch& b, const float* a) {
  float* d = dst + b.q0;
  if (b.n == kPairLanes) {
    for (int l = 0; l < kPairLanes; ++l) d[l] = a[l];
  } else {
    for (int l = 0; l < b.n; ++l) d[l] = a[l];
  }
}

// Reads them back; the spare lanes get 0, what every kernel and gradient is
// there. Reads up to kPairLanes - 1 slots past the last list, so such a
// buffer holds pair_count() + n + kPairLanes values (a slot per list entry,
// each list's spare slot, and the lanes read past the end).
EDDY_HD_INLINE void load_lanes(const float* src, const PairBatch& b, float* a) {
  const float* s = src + b.q0;
  for (int l = 0; l < kPairLanes; ++l) a[l] = l < b.n ? s[l] : 0.0f;
}

// The lanes' sum, in a fixed order.
EDDY_HD_INLINE float lane_sum(const float* a) {
  float s = a[0];
  for (int l = 1; l < kPairLanes; ++l) s += a[l];
  return s;
}

// Three lanes' sums as a vector.
EDDY_HD_INLINE Vec3f lane_sum3(const float* x, const float* y, const float* z) {
  return vec3(lane_sum(x), lane_sum(y), lane_sum(z));
}

}  // namespace eddy
