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
  uint32_t j[kPairLanes];
  uint32_t q0;  // the list slot of lane 0 (pair-indexed data: slot q0 + l)
  int n;        // lanes in use: 1..kPairLanes
};

// f(batch) for each batch of i's neighbours (i at xi, positions x); `far`
// is at least the support radius.
// Full batches are gathered without a test per lane; the last, partial one
// (if any) fills its spare lanes.
template <class F>
EDDY_HD_INLINE void for_pair_batches(const NeighborView& nb, uint32_t i, Vec3f xi, const Vec3f* x, float far, F&& f) {
  const uint32_t e = nb.end(i);
  uint32_t q0 = nb.begin(i);
  PairBatch b;
  for (; q0 + uint32_t(kPairLanes) <= e; q0 += kPairLanes) {
    b.q0 = q0;
    b.n = kPairLanes;
    for (int l = 0; l < kPairLanes; ++l) {
      const uint32_t j = nb.indices[q0 + l];
      const Vec3f r = xi - x[j];
      b.j[l] = j;
      b.rx[l] = r.x;
      b.ry[l] = r.y;
      b.rz[l] = r.z;
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
      const Vec3f r = xi - x[j];
      b.j[l] = j;
      b.rx[l] = in ? r.x : far;
      b.ry[l] = in ? r.y : far;
      b.rz[l] = in ? r.z : far;
    }
    for (int l = 0; l < kPairLanes; ++l) b.r2[l] = b.rx[l] * b.rx[l] + b.ry[l] * b.ry[l] + b.rz[l] * b.rz[l];
    f(b);
  }
}

// Pair-indexed values one pass keeps for later passes over the same lists
// and positions (PBF's W and g, read again by its correction, XSPH and
// vorticity passes; DFSPH's gradient scales, by its solves): the lanes in
// use are stored at the batch's list slots.
EDDY_HD_INLINE void store_lanes(float* dst, const PairBatch& b, const float* a) {
  if (b.n == kPairLanes) {
    for (int l = 0; l < kPairLanes; ++l) dst[b.q0 + l] = a[l];
  } else {
    for (int l = 0; l < b.n; ++l) dst[b.q0 + l] = a[l];
  }
}

// Reads them back; the spare lanes get 0, what every kernel and gradient is
// there. Reads up to kPairLanes - 1 slots past the last list, so such a
// buffer holds pair_count() + n + kPairLanes values (a slot per list entry,
// each list's spare slot, and the lanes read past the end).
EDDY_HD_INLINE void load_lanes(const float* src, const PairBatch& b, float* a) {
  for (int l = 0; l < kPairLanes; ++l) a[l] = l < b.n ? src[b.q0 + l] : 0.0f;
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
