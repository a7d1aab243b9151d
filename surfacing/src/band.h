#pragma once
// Internal to surfacing/: sparse narrow bands on 8^3 bricks, in voxel units,
// without OpenVDB (so these files compile in seconds).
//
// The fast liquid chain (liquid_sdf.cpp) runs on these: the sphere
// rasteriser, closest-point redistancing and separable smoothing read and
// write plain float arrays, 512 per brick in OpenVDB's leaf order
// (x * 64 + y * 8 + z), so a brick becomes an OpenVDB leaf by one copy.
//
// A voxel's value is a signed distance in voxels, or +inf / -inf where only
// its side is known (outside / inside, farther than the band computed).
#include <array>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "eddy/core/huge_pages.h"
#include "eddy/core/vec.h"

namespace eddy::band {

constexpr int kDim = 8, kVoxels = 512;
constexpr int offset(int x, int y, int z) { return (x << 6) | (y << 3) | z; }
constexpr float kInf = std::numeric_limits<float>::infinity();
// Slot of the neighbour (dx, dy, dz), each -1..1, in Bricks::nbr.
constexpr int nbr_slot(int dx, int dy, int dz) { return (dx + 1) * 9 + (dy + 1) * 3 + dz + 1; }
// Index-space position of voxel v of the brick with coordinates c.
inline Vec3f voxel_position(const std::array<int, 3>& c, int v) {
  return vec3(float(c[0] * kDim + (v >> 6)), float(c[1] * kDim + ((v >> 3) & 7)), float(c[2] * kDim + (v & 7)));
}

uint64_t pack(int bx, int by, int bz);
void unpack(uint64_t key, int& bx, int& by, int& bz);

// Where a brick has no stored neighbour: the neighbour is wholly outside or inside.
constexpr int32_t kOutside = -1, kInside = -2;
// A missing neighbour's value: its side, at no known distance.
inline float missing_phi(int32_t o) { return o == kInside ? -kInf : kInf; }

// Trilinear interpolation of the corners c[k], k = (x << 2) | (y << 1) | z.
inline float trilinear(const float c[8], float tx, float ty, float tz) {
  const float c00 = c[0] + (c[1] - c[0]) * tz, c01 = c[2] + (c[3] - c[2]) * tz;
  const float c10 = c[4] + (c[5] - c[4]) * tz, c11 = c[6] + (c[7] - c[6]) * tz;
  const float c0 = c00 + (c01 - c00) * ty, c1 = c10 + (c11 - c10) * ty;
  return c0 + (c1 - c0) * tx;
}

// The bands' large arrays, on huge pages (eddy/core/huge_pages.h).
using Values = LargeVector<float>;

// 8 floats or ints as one value (GCC and Clang vector extensions), for the
// loops over a row of 8 voxels: SSE pairs in a portable build, one AVX
// register in the copies compiled for AVX2 (picked at run time by
// CpuExecutor::uses_avx2(), with the same bits: the same IEEE operations in
// the same order, no fused multiply-add).
typedef float Row8f __attribute__((vector_size(32)));
typedef int32_t Row8i __attribute__((vector_size(32)));

// Runs f() in code compiled for AVX2, f inlined into it, when `wide` (take
// it from CpuExecutor::uses_avx2() once, outside the loop); else as built.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <class F>
__attribute__((target("avx2"), flatten, noinline)) void run_avx2(const F& f) {
  f();
}
template <class F>
inline void run_rows(bool wide, const F& f) {
  if (wide) run_avx2(f);
  else f();
}
#else
template <class F>
inline void run_rows(bool, const F& f) {
  f();
}
#endif

struct Bricks {
  std::vector<std::array<int, 3>> coord;  // brick coordinates: voxel origin / 8
  Values phi;                              // kVoxels per brick
  std::unordered_map<uint64_t, int32_t> index;
  std::vector<uint64_t> inside;               // sorted keys of bricks wholly inside, not stored
  LargeVector<std::array<int32_t, 27>> nbr;   // [(dx+1)*9 + (dy+1)*3 + dz+1]: brick, kOutside or kInside

  std::size_t size() const { return coord.size(); }
  float* values(std::size_t b) { return phi.data() + b * kVoxels; }
  const float* values(std::size_t b) const { return phi.data() + b * kVoxels; }
  int32_t find(int bx, int by, int bz) const;  // brick, kOutside or kInside
  // Adds the bricks in `keys` (sorted, unique, not yet stored), filled with `fill`.
  void add(const std::vector<uint64_t>& keys, const std::vector<float>& fill_per_key);
  void link_index();  // builds index
  void link();        // builds index and nbr; call after the brick set changes
};

// A point on a surface with its outward normal and curvature (1 / radius of
// the osculating sphere; 0: a plane). Distances to it are taken to that
// sphere or plane where a voxel's foot point lies within a voxel of it, and
// to the point itself elsewhere.
struct Seed {
  Vec3f p, n;
  float k;
};
constexpr uint32_t kNoSeed = 0xffffffffu;
struct Seeds {
  LargeVector<uint32_t> id;  // kVoxels per brick: index into table, or kNoSeed
  LargeVector<Seed> table;
};

// Spheres of one radius around points, rasterised per brick from the points
// near it (brick-parallel, no locks). Positions are in index space (voxels).
//
// With `shape`, point i is instead the ellipsoid |G_i (x - c_i)| <= radius
// (G_i symmetric positive definite, dimensionless; the identity gives the
// sphere): a voxel's value is the first-order distance to its boundary,
// (|G d| - radius) |G d| / |G G d| with d = x - c_i (exact on spheres, and
// on an ellipsoid exact along its axes and, over a shell of 2 voxels, within
// 0.15 voxel of the true distance at axis ratios up to 2.3), its seed the
// boundary point c_i + d radius / |G d| with the normal along G G d and the
// curvature of the sphere through it about c_i; `deep` applies within the
// inscribed sphere (radius / the largest singular value of G_i).
struct Ellipsoid {
  Mat3f G;
  float inner = 1, outer = 1;  // 1 / the largest and 1 / the smallest eigenvalue of G
};
struct RasterParams {
  float radius = 0;  // voxels
  float reach = 0;   // exact distances for voxels with 0 <= phi < reach outside the spheres
  float deep = 0;    // voxels nearer than this to a centre are -inf (inside); <= radius
  bool closest = false;  // also give each exact voxel its closest point on the spheres as a seed
  const Ellipsoid* shape = nullptr;  // per point (ellipsoids); null: spheres
};
struct Raster {
  Bricks bricks;  // the bricks holding a finite value
  Seeds seeds;    // with closest
};
// The bricks come back unlinked (no index or nbr): link() them before use.
Raster rasterize(const Vec3f* index_positions, std::size_t n, const RasterParams& params);

// Anisotropic kernels after Yu & Turk 2013 ("Reconstructing surfaces of
// particle-based fluids using anisotropic kernels"), as ellipsoids for the
// rasteriser. Per particle i, over the neighbours j within `radius` (i
// itself included) with Yu & Turk's weights w_ij = 1 - (|x_i - x_j| / radius)^3:
//   the weighted mean m_i and covariance C_i = sum w_ij (x_j - m_i)(x_j - m_i)^T / sum w_ij;
//   the smoothed centre c_i = x_i + lambda (m_i - x_i - o_i), where o_i is
//   the weighted mean of the neighbours' own m_j - x_j (Yu & Turk have no
//   o_i, which pulls a body's surface in by a fifth of the radius times
//   lambda);
//   C_i = V diag(s1 >= s2 >= s3) V^T; with at least `min_neighbours` others
//   (their N_eps) the axes' stretch is t_k = s_k' / (s1' s2' s3')^(1/3) with
//   s_k' = max(s_k, s1 / max_ratio) (their k_r), so the ellipsoid keeps the
//   sphere's volume (where their k_s scales the kernel in the scene's
//   units); with fewer, t = 1, a sphere (their k_n, at the particle's size);
//   a one-sided neighbourhood (the surface of a body of liquid: the mean
//   lies inward, |(m_i - x_i) . v_3| about 0.2 radius on a lattice, against
//   0 in a sheet one particle thick) keeps t_3 = 1 across the surface, the
//   other two axes shrinking to keep the volume (blended over offsets of
//   0.05 to 0.15 radius), so a body's surface stays where spheres put it;
//   no axis is shorter than `min_axis` (a sheet thinner than the grid
//   carries tears); the final particle is the ellipsoid of semi-axes
//   t_k `core`, and what the
//   rasteriser gets is that ellipsoid grown by `grow` (the chain's erosion
//   takes it back), approximated by the ellipsoid of semi-axes
//   t_k core + grow: G_i = V diag(sphere / (t_k core + grow)) V^T, so
//   isotropic particles keep the sphere of radius `sphere` = core + grow.
struct AnisotropyParams {
  double radius = 0;       // neighbourhood, in the positions' units
  double lambda = 0;       // centre smoothing, 0..1
  double max_ratio = 4;    // k_r >= 1
  int min_neighbours = 0;  // N_eps
  double core = 0, grow = 0;  // the final particle's radius and the growth, in the positions' units
  double min_axis = 0;        // no final semi-axis shorter, in the positions' units
};
struct Ellipsoids {
  std::vector<Vec3f> centre;
  std::vector<Ellipsoid> shape;
  std::size_t anisotropic = 0;  // particles with enough neighbours to stretch
};
Ellipsoids anisotropy(const Vec3f* P, std::size_t n, const AnisotropyParams& params);

// Adds every brick within `rings` bricks of a stored one (inside or outside
// as the neighbour says), so a band grown from a thin shell has room; links.
void dilate(Bricks& bricks, int rings, Seeds* seeds);

// Closest-point propagation (a brushfire over the band): every voxel whose
// value is +-inf takes the seed of a 26-neighbour nearest to it, pass after
// pass out from the seeded voxels until nothing changes, as long as the
// distance stays within limit_in inside / limit_out outside. Signs are kept.
// Each pass looks only at the voxels next to one that changed in the pass
// before (bit masks per brick), and its changes are committed together, so
// the cost follows the front and the result does not depend on the thread
// count. The nearest of the 26 is found for a row of 8 voxels at once (in
// AVX2 where the CPU has it, with the bits of the portable code).
void propagate(Bricks& bricks, Seeds& seeds, float limit_in, float limit_out);

// Replaces +-inf by +-clamp (and clamps finite values to the same range).
void clamp(Bricks& bricks, float clamp);

// `iterations` passes of OpenVDB's level set Gaussian kernel (four 3-tap box
// filters per axis: weights 1 4 10 16 19 16 10 4 1 over 81), separable, on
// the stored bricks; missing neighbours read as +-clamp.
void gaussian(Bricks& bricks, int iterations, float clamp);
// One separable pass of a sampled, normalised Gaussian of this variance
// (voxels^2), truncated at 3 sigma or one brick.
void gaussian_variance(Bricks& bricks, float variance, float clamp);

// The field on a grid twice as fine, trilinear, values times `scale`: those
// of the eight fine bricks of every coarse brick that can hold a value with
// lo < value < hi (the coarse values they interpolate span it). Unlinked.
Bricks upsample(const Bricks& coarse, float scale, float lo, float hi);

// First-order seeds at the zero crossing: voxels with a 6-neighbour of the
// other sign (inside: phi < 0) get the plane seed p = x - phi grad / |grad|^2,
// n = grad / |grad|, and the distance |phi| / |grad|; every other voxel
// becomes +-inf.
Seeds crossing_seeds(Bricks& bricks);

// Bounds how far smoothing moved the surface inward: phi becomes the union
// of itself and `unsmoothed` (the same bricks' values before smoothing)
// eroded by max_shrink, phi = min(phi, unsmoothed + max_shrink), with the
// corner of the min rounded over `blend` voxels (a polynomial smooth
// minimum, which lies at most blend / 4 below the min), so the mesh gets
// no crease where the two meet. Voxels where either is +-inf take the min.
void bound_shrink(Bricks& bricks, const Values& unsmoothed, float max_shrink, float blend);

// Points sorted by cubic cells of size h, for queries within h.
class CellList {
 public:
  struct Range {
    uint32_t begin, end;  // into the sorted entries
  };
  CellList(const Vec3f* P, std::size_t n, double h);
  uint64_t key(Vec3f x) const;  // the cell holding x
  // The entries of the 27 cells around `cell` (every point within h of a
  // point in it).
  void ranges(uint64_t cell, Range out[27]) const;
  uint32_t point(uint32_t entry) const { return entries_[entry].second; }

 private:
  double inv_;
  std::vector<std::pair<uint64_t, uint32_t>> entries_;  // (cell, point), sorted
};

// For each of `candidates` (indices into P): 1 where fewer than
// `fewer_than` other particles lie within `radius` of it, else 0.
std::vector<uint8_t> isolated(const Vec3f* P, std::size_t n, const std::vector<uint32_t>& candidates, double radius,
                              int fewer_than);

// At each of the m points `at`, the average of V over the n points P
// within h, weighted by (1 - d^2 / h^2)^3; found[i] = 0 (and out[i] = 0)
// where none is that near.
void kernel_average(const Vec3f* P, const Vec3f* V, std::size_t n, const Vec3f* at, std::size_t m, double h,
                    Vec3f* out, uint8_t* found);

// The field at index-space position u, trilinear over the eight voxels
// around it; where one of them holds +-inf, the nearest voxel's value.
// Needs link().
float sample(const Bricks& bricks, Vec3f u);

}  // namespace eddy::band
