#pragma once
// The MLS-MPM step, written once over an executor (see cpu_executor.h for
// the contract). Included only by the files that instantiate it:
// core/src/mpm/mpm_cpu.cpp (TBB) and gpu/src/mpm_cuda.cu (CUDA).
//
// One substep (Hu et al. 2018, Algorithm 1, with quadratic B-splines and
// D_p = dx^2 / 4 I):
//   stress   A_p = m_p C_p - dt V_p (4 / dx^2) tau_p, tau the Kirchhoff stress
//   bin      particles sorted by (4x4x4 block, cell); the blocks holding
//            particles and the node blocks their stencils reach
//   P2G      each node gathers m_i = sum_p w_ip m_p and
//            (mv)_i = sum_p w_ip (m_p v_p + A_p (x_i - x_p)) from the 27 cells
//            whose particles reach it: a gather, so no atomics and results
//            that do not depend on the thread count
//   grid     v_i = (mv)_i / m_i + dt g, then colliders and domain walls
//   G2P      v_p = sum_i w_ip v_i, C_p = (4 / dx^2) sum_i w_ip v_i (x_i - x_p)^T,
//            F_p <- (I + dt C_p) F_p, plasticity, x_p += dt v_p
//
// Sparse grid: only node blocks within reach of a particle exist. A node
// block N gathers from the particle blocks N - {0,1}^3, and a particle block
// P scatters to (and G2P reads from) the node blocks P + {0,1}^3; two small
// tables per step hold those links, so no hash map is needed.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/core/mat3.h"
#include "eddy/core/mpm/mpm.h"
#include "eddy/core/points.h"
#include "eddy/core/reduce_ops.h"
#include "eddy/core/solver_buffers.h"

namespace eddy {

// Constants derived once from the parameters, captured by value in every loop.
struct MpmConstants {
  float dx = 0, inv_dx = 0;
  float volume = 0;                  // V_p, m^3
  float mass[kMpmMaterialCount] = {};
  float mu[kMpmMaterialCount] = {}, lambda[kMpmMaterialCount] = {};
  float bulk = 0;                    // water K
  float viscosity = 0;               // water, Pa s
  float theta_c = 0, theta_s = 0, hardening = 0;  // snow
  float sand_alpha = 0;              // Drucker-Prager cone: sqrt(2/3) 2 sin(phi) / (3 - sin(phi))
  int transfer = 0;                  // MpmTransfer
  float flip = 0;
  int boundary = 0;                  // MpmBoundary
  float domain_friction = 0;
  Vec3f domain_lo{0, 0, 0}, domain_hi{0, 0, 0};
  Vec3f gravity{0, 0, 0};
};

MpmConstants mpm_constants(const MpmParams& p, float radius);

// Integer cell / block coordinates.
struct Int3 {
  int32_t x, y, z;
};
struct Int3Bounds {
  Int3 lo, hi;
};
struct Int3BoundsOp {
  EDDY_HD_INLINE Int3Bounds operator()(const Int3Bounds& a, const Int3Bounds& b) const {
    return {{a.lo.x < b.lo.x ? a.lo.x : b.lo.x, a.lo.y < b.lo.y ? a.lo.y : b.lo.y, a.lo.z < b.lo.z ? a.lo.z : b.lo.z},
            {a.hi.x > b.hi.x ? a.hi.x : b.hi.x, a.hi.y > b.hi.y ? a.hi.y : b.hi.y, a.hi.z > b.hi.z ? a.hi.z : b.hi.z}};
  }
};

struct MpmGridTotalsOp {
  EDDY_HD_INLINE MpmGridTotals operator()(const MpmGridTotals& a, const MpmGridTotals& b) const {
    return {a.mass + b.mass, a.momentum + b.momentum, a.angular_momentum + b.angular_momentum};
  }
};

struct MpmMotionStats {
  float speed2_max;
  float hardening_max;  // snow: the largest exp(xi (1 - J_p)) in use
  uint32_t nonfinite;
};
struct MpmMotionOp {
  EDDY_HD_INLINE MpmMotionStats operator()(const MpmMotionStats& a, const MpmMotionStats& b) const {
    return {fmaxf(a.speed2_max, b.speed2_max), fmaxf(a.hardening_max, b.hardening_max), a.nonfinite + b.nonfinite};
  }
};

namespace mpm {

// Packs relative block coordinates into a key: x in the high bits.
struct BlockPacking {
  int32_t shift_y = 0, shift_x = 0;  // bits of z, bits of y + z
  Int3 origin{0, 0, 0};              // block coordinates of key 0
  EDDY_HD_INLINE uint64_t pack(Int3 b) const {
    return (uint64_t(uint32_t(b.x - origin.x)) << shift_x) | (uint64_t(uint32_t(b.y - origin.y)) << shift_y) |
           uint64_t(uint32_t(b.z - origin.z));
  }
  EDDY_HD_INLINE Int3 unpack(uint64_t k) const {
    const uint64_t my = (uint64_t(1) << (shift_x - shift_y)) - 1, mz = (uint64_t(1) << shift_y) - 1;
    return {int32_t(k >> shift_x) + origin.x, int32_t((k >> shift_y) & my) + origin.y, int32_t(k & mz) + origin.z};
  }
  // The key of block b + o for o in {0,1}^3 (bit 0: x, bit 1: y, bit 2: z).
  EDDY_HD_INLINE uint64_t offset(uint64_t k, int o, int sign) const {
    const uint64_t d = (uint64_t(o & 1) << shift_x) + (uint64_t((o >> 1) & 1) << shift_y) + uint64_t((o >> 2) & 1);
    return sign > 0 ? k + d : k - d;
  }
};

EDDY_HD_INLINE int32_t floor_div4(int32_t c) { return c >> 2; }  // arithmetic shift: floor
EDDY_HD_INLINE int local_index(int32_t cx, int32_t cy, int32_t cz) { return (cx & 3) | ((cy & 3) << 2) | ((cz & 3) << 4); }

EDDY_HD_INLINE Int3 base_cell(Vec3f x, float inv_dx) {
  return {int32_t(floorf(x.x * inv_dx - 0.5f)), int32_t(floorf(x.y * inv_dx - 0.5f)),
          int32_t(floorf(x.z * inv_dx - 0.5f))};
}

// Quadratic B-spline weight of the node d (0, 1, 2) cells above the base
// cell, for fractional position f = x / dx - base in [0.5, 1.5).
EDDY_HD_INLINE float bspline(int d, float f) {
  if (d == 0) return 0.5f * (1.5f - f) * (1.5f - f);
  if (d == 1) return 0.75f - (f - 1.0f) * (f - 1.0f);
  return 0.5f * (f - 0.5f) * (f - 0.5f);
}

// First index in the sorted keys[lo, hi) that is >= k.
EDDY_HD_INLINE uint32_t lower_bound(const uint64_t* keys, uint32_t lo, uint32_t hi, uint64_t k) {
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
EDDY_HD_INLINE uint32_t find_key(const uint64_t* keys, uint32_t n, uint64_t k) {
  const uint32_t i = lower_bound(keys, 0, n, k);
  return i < n && keys[i] == k ? i : 0xffffffffu;
}

// What P2G reads of one particle: position in cells, mass, momentum, and
// the affine matrix A_p times dx (so A_p (x_i - x_p) = (A_p dx)(x_i - x_p) / dx).
struct P2gRecord {
  Vec3f xs;
  float mass;
  Vec3f momentum;
  Mat3f affine;
};
static_assert(sizeof(P2gRecord) == 64, "one cache line per particle");

// Kirchhoff stress tau = P F^T of a particle (C: its velocity gradient).
EDDY_HD_INLINE Mat3f kirchhoff_stress(const MpmConstants& c, int material, const Mat3f& F, const Mat3f& C, float jp) {
  const float J = determinant(F);
  if (material == int(MpmMaterial::Water))
    return mat3_scalar(c.bulk * J * (J - 1.0f)) + (C + transpose(C)) * (c.viscosity * J);
  if (material == int(MpmMaterial::Sand)) {
    // Hencky strain: tau = U (2 mu eps + lambda tr(eps)) U^T, eps = log(s).
    const Svd3 d = svd3(F);
    const Vec3f eps = vec3(logf(fmaxf(fabsf(d.s.x), 1e-4f)), logf(fmaxf(fabsf(d.s.y), 1e-4f)),
                           logf(fmaxf(fabsf(d.s.z), 1e-4f)));
    const float mu = c.mu[3], la = c.lambda[3];
    const float tr = eps.x + eps.y + eps.z;
    const Vec3f t = eps * (2.0f * mu) + vec3(la * tr);
    return d.U * mat3_diag(t) * transpose(d.U);
  }
  // Fixed corotated: 2 mu (F - R) F^T + lambda J (J - 1) I, R = U V^T.
  float mu = c.mu[material], la = c.lambda[material];
  if (material == int(MpmMaterial::Snow)) {
    const float h = expf(c.hardening * (1.0f - jp));
    mu *= h;
    la *= h;
  }
  const Svd3 d = svd3(F);
  const Mat3f R = d.U * transpose(d.V);
  return (F - R) * transpose(F) * (2.0f * mu) + mat3_scalar(la * J * (J - 1.0f));
}

// Plasticity after F <- (I + dt C) F: water keeps only J, snow clamps its
// singular values, sand projects onto the Drucker-Prager cone.
EDDY_HD_INLINE void plasticity(const MpmConstants& c, int material, Mat3f& F, float& jp) {
  if (material == int(MpmMaterial::Water)) {
    const float J = determinant(F);
    F = mat3_scalar(cbrtf(J));
    return;
  }
  if (material == int(MpmMaterial::Snow)) {
    const Svd3 d = svd3(F);
    const Vec3f s = vec3(fminf(fmaxf(d.s.x, 1.0f - c.theta_c), 1.0f + c.theta_s),
                         fminf(fmaxf(d.s.y, 1.0f - c.theta_c), 1.0f + c.theta_s),
                         fminf(fmaxf(d.s.z, 1.0f - c.theta_c), 1.0f + c.theta_s));
    jp *= (d.s.x * d.s.y * d.s.z) / (s.x * s.y * s.z);
    F = usv(d.U, s, d.V);
    return;
  }
  if (material == int(MpmMaterial::Sand)) {
    // Klar et al. 2016, section 7.3.1.
    const Svd3 d = svd3(F);
    Vec3f eps = vec3(logf(fmaxf(fabsf(d.s.x), 1e-4f)), logf(fmaxf(fabsf(d.s.y), 1e-4f)),
                     logf(fmaxf(fabsf(d.s.z), 1e-4f)));
    const float tr = eps.x + eps.y + eps.z;
    const Vec3f dev = eps - vec3(tr / 3.0f);
    const float dev_norm = length(dev);
    Vec3f s;
    if (tr >= 0.0f || dev_norm < 1e-12f) {
      s = vec3(1.0f);  // expansion: no cohesion holds it, the stress-free tip
      if (tr < 0.0f) s = vec3(expf(eps.x), expf(eps.y), expf(eps.z));  // pure compression: elastic
    } else {
      const float mu = c.mu[3], la = c.lambda[3];
      const float dgamma = dev_norm + (3.0f * la + 2.0f * mu) / (2.0f * mu) * tr * c.sand_alpha;
      if (dgamma <= 0.0f) return;  // inside the cone: elastic
      eps = eps - dev * (dgamma / dev_norm);
      s = vec3(expf(eps.x), expf(eps.y), expf(eps.z));
    }
    F = usv(d.U, s, d.V);
  }
}

// The boundary rule on a node's velocity relative to a wall with unit
// normal n (into the material) moving at vw.
EDDY_HD_INLINE Vec3f wall_velocity(int rule, Vec3f v, Vec3f n, Vec3f vw, float friction) {
  if (rule == int(MpmBoundary::Sticky)) return vw;
  Vec3f rel = v - vw;
  const float vn = dot(rel, n);
  if (rule == int(MpmBoundary::Slip)) return v - n * vn;
  if (vn >= 0.0f) return v;  // separating
  Vec3f vt = rel - n * vn;
  const float lt = length(vt);
  if (friction > 0.0f) vt = lt + friction * vn > 0.0f ? vt * (1.0f + friction * vn / lt) : vec3(0.0f);
  return vw + vt;
}

}  // namespace mpm

template <class Exec>
class MpmSolverT final : public MpmSolver {
 public:
  template <class T>
  using Vec = typename Exec::template Vector<T>;
  using Clock = std::chrono::steady_clock;

  MpmSolverT(const MpmParams& p, Exec ex) : MpmSolver(p), ex_(std::move(ex)) { validate(p); }

  const char* backend() const override { return Exec::backend_name; }
  std::size_t size() const override { return n_; }
  std::size_t dropped() const override { return dropped_; }
  float dx() const override { return c_.dx; }
  float particle_volume() const override { return c_.volume; }
  float wave_speed() const override { return wave_speed_; }
  MpmStageTimes stage_times() const override { return times_; }

  MpmGridTotals grid_totals() const override {
    const float dx = c_.dx;
    const mpm::BlockPacking pack = pack_;
    const uint64_t* nbk = nb_keys_.data();
    const float* gm = gm_.data();
    const Vec3f* gv = gv_.data();
    return ex_.reduce(
        nnb_ * 64, MpmGridTotals{},
        [=] EDDY_HD(uint32_t q) {
          const Int3 blk = pack.unpack(nbk[q >> 6]);
          const int l = int(q & 63);
          const Vec3f xi = vec3(float(blk.x * 4 + (l & 3)), float(blk.y * 4 + ((l >> 2) & 3)),
                                float(blk.z * 4 + ((l >> 4) & 3))) * dx;
          const Vec3f p = gv[q] * gm[q];
          return MpmGridTotals{gm[q], p, cross(xi, p)};
        },
        MpmGridTotalsOp{});
  }

  void load(const Points& in, MpmMaterial default_material) override {
    if (!(in.radius > 0.0f)) throw Error("MPM: particles have no radius (points.radius must be > 0)");
    if (in.size() > 0x7ffffff0u) throw Error("MPM: too many particles for 32-bit indices");
    c_ = mpm_constants(params_, in.radius);
    radius_ = in.radius;
    // Materials: the attribute, or one for all; ids are checked here.
    std::vector<int32_t> mat(in.size(), int32_t(default_material));
    if (const Points::Attribute* a = in.find("material")) {
      if (a->type != AttribType::Int) throw Error("MPM: attribute 'material' must be an int (0 water, 1 jelly, 2 snow, 3 sand)");
      const int32_t* m = in.get_int("material");
      for (std::size_t i = 0; i < in.size(); ++i) {
        if (m[i] < 0 || m[i] >= kMpmMaterialCount)
          throw Error("MPM: particle " + std::to_string(i) + " has material " + std::to_string(m[i]) +
                      "; valid ids are 0 water, 1 jelly, 2 snow, 3 sand");
        mat[i] = m[i];
      }
    }
    // Particles outside the domain are dropped.
    Points pts = in;
    std::vector<uint8_t> keep(pts.size(), 1);
    dropped_ = 0;
    const Vec3f lo = c_.domain_lo, hi = c_.domain_hi;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const Vec3f x = pts.P()[i];
      if (!(x.x > lo.x && x.y > lo.y && x.z > lo.z && x.x < hi.x && x.y < hi.y && x.z < hi.z)) {
        keep[i] = 0;
        ++dropped_;
      }
    }
    if (dropped_) {
      pts.filter(keep);
      std::size_t k = 0;
      for (std::size_t i = 0; i < keep.size(); ++i)
        if (keep[i]) mat[k++] = mat[i];
      mat.resize(k);
    }
    n_ = uint32_t(pts.size());
    // A state written by store(out, true) resumes exactly: F, C, J_p.
    std::vector<Mat3f> F(n_, mat3_identity()), C(n_, mat3_zero());
    std::vector<float> jp(n_, 1.0f);
    read_rows(pts, "F", F);
    read_rows(pts, "C", C);
    if (const Points::Attribute* a = pts.find("Jp"); a && a->type == AttribType::Float)
      std::copy(pts.get_float("Jp"), pts.get_float("Jp") + n_, jp.begin());
    for (const char* name : {"material", "J", "Jp", "F0", "F1", "F2", "C0", "C1", "C2"}) pts.remove(name);

    // The wave speed of the materials present.
    bool present[kMpmMaterialCount] = {};
    for (int32_t m : mat) present[m] = true;
    wave_speed_ = 0.0f;
    for (int m = 0; m < kMpmMaterialCount; ++m) {
      if (!present[m]) continue;
      const MpmMaterialParams& mp = params_.materials[m];
      const float stiff = m == int(MpmMaterial::Water) ? mp.bulk_modulus : c_.lambda[m] + 2.0f * c_.mu[m];
      wave_speed_ = std::max(wave_speed_, std::sqrt(stiff / mp.density));
    }
    snow_ = present[int(MpmMaterial::Snow)];
    water_ = present[int(MpmMaterial::Water)];
    snow_wave_ = snow_ ? std::sqrt((c_.lambda[2] + 2.0f * c_.mu[2]) / params_.materials[2].density) : 0.0f;

    ex_.upload(x_, pts.P(), n_);
    ex_.upload(v_, pts.v(), n_);
    ex_.upload(mat_, mat.data(), n_);
    ex_.upload(F_, F.data(), n_);
    ex_.upload(C_, C.data(), n_);
    ex_.upload(jp_, jp.data(), n_);
    carried_.load(ex_, pts, {});
    max_speed_ = 0.0f;
    for (uint32_t i = 0; i < n_; ++i) max_speed_ = std::max(max_speed_, length(pts.v()[i]));
    hardening_max_ = 1.0f;
    for (uint32_t i = 0; i < n_; ++i)
      if (mat[i] == int(MpmMaterial::Snow))
        hardening_max_ = std::max(hardening_max_, std::exp(c_.hardening * (1.0f - jp[i])));
    p2g_.resize(n_);
    keys_.resize(n_);
    order_.resize(n_);
    pb_of_.resize(n_);
    flags_.resize(n_ + 1);
    tmp_mat_.resize(n_);
    tmp3_.resize(n_);
    tmpf_.resize(n_);
    tmpi_.resize(n_);
    steps_ = 0;
    // Bin once now: the grid this state needs is checked before it is allocated.
    if (n_) {
      bin();
      check_grid_size(npb_ * 8ull);
    }
  }

  void set_colliders(const std::vector<Collider>& cs) override {
    colliders_.upload(ex_, cs);
    ncoll_ = colliders_.size();
  }

  void store(Points& out, bool state) const override {
    out = Points(n_);
    out.radius = radius_;
    ex_.download(x_, out.P(), n_);
    ex_.download(v_, out.v(), n_);
    carried_.store(ex_, out);
    out.add("material", AttribType::Int);
    ex_.download(mat_, out.get_int("material"), n_);
    std::vector<Mat3f> F(n_);
    ex_.download(F_, F.data(), n_);
    out.add("J", AttribType::Float);
    float* J = out.get_float("J");
    for (uint32_t i = 0; i < n_; ++i) J[i] = determinant(F[i]);
    if (state) {
      write_rows(out, "F", F);
      std::vector<Mat3f> C(n_);
      ex_.download(C_, C.data(), n_);
      write_rows(out, "C", C);
      out.add("Jp", AttribType::Float);
      ex_.download(jp_, out.get_float("Jp"), n_);
    }
  }

  // The grid: node arrays and the node block tables.
  std::size_t grid_bytes() const override {
    return gm_.size() * 4 + (gv_.size() + gv_old_.size()) * sizeof(Vec3f) + (nb_keys_.size() + cand_.size()) * 8 +
           (nb_pb_.size() + pb_nb_.size() + cand_idx_.size()) * 4;
  }
  std::size_t memory_bytes() const override {
    const std::size_t particles = (x_.size() + v_.size() + tmp3_.size()) * sizeof(Vec3f) +
                                  (F_.size() + C_.size() + tmp_mat_.size()) * sizeof(Mat3f) + p2g_.size() * sizeof(mpm::P2gRecord) +
                                  (jp_.size() + tmpf_.size() + mat_.size() + tmpi_.size()) * 4;
    const std::size_t bins = keys_.size() * 8 + pb_keys_.size() * 8 +
                             (order_.size() + pb_of_.size() + flags_.size() + pb_start_.size() + cell_start_.size()) * 4;
    return particles + bins + carried_.bytes() + grid_bytes();
  }

  float suggest_dt() const override {
    float c = wave_speed_;
    if (snow_) c = std::max(c, snow_wave_ * std::sqrt(hardening_max_));
    float dt = params_.max_dt;
    dt = std::min(dt, params_.cfl * c_.dx / (c + max_speed_));
    if (water_ && c_.viscosity > 0)
      dt = std::min(dt, 0.125f * params_.materials[0].density * c_.dx * c_.dx / c_.viscosity);
    return dt;
  }

  MpmStepStats step(float dt, float time) override {
    MpmStepStats s;
    s.dt = dt;
    if (n_ == 0) return s;
    const auto t0 = Clock::now();
    bin();
    if (params_.reorder_interval > 0 && steps_ % params_.reorder_interval == 0) reorder();
    ++steps_;
    build_node_blocks();
    s.grid_blocks = nnb_;
    const auto t1 = Clock::now();
    compute_affine(dt);
    const auto t1b = Clock::now();
    p2g();
    const auto t2 = Clock::now();
    grid_update(dt, time + dt);
    const auto t3 = Clock::now();
    g2p(dt);
    const MpmMotionStats m = motion_stats();
    const auto t4 = Clock::now();
    times_.sort = std::chrono::duration<double>(t1 - t0).count();
    times_.stress = std::chrono::duration<double>(t1b - t1).count();
    times_.p2g = std::chrono::duration<double>(t2 - t1b).count();
    times_.grid = std::chrono::duration<double>(t3 - t2).count();
    times_.g2p = std::chrono::duration<double>(t4 - t3).count();
    s.max_speed = std::sqrt(m.speed2_max);
    s.nonfinite = m.nonfinite;
    max_speed_ = s.max_speed;
    hardening_max_ = std::max(1.0f, m.hardening_max);
    return s;
  }

  // ---- stages (public: nvcc's extended lambdas need public enclosing functions)
  static constexpr uint32_t kNone = 0xffffffffu;

  // A matrix attribute as three vec3 attributes, its rows: F0, F1, F2.
  static void read_rows(const Points& pts, const char* name, std::vector<Mat3f>& m) {
    const std::string r[3] = {std::string(name) + "0", std::string(name) + "1", std::string(name) + "2"};
    for (const auto& n : r) {
      const Points::Attribute* a = pts.find(n);
      if (!a || a->type != AttribType::Vec3) return;
    }
    const Vec3f *r0 = pts.get_vec3(r[0]), *r1 = pts.get_vec3(r[1]), *r2 = pts.get_vec3(r[2]);
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = {r0[i], r1[i], r2[i]};
  }
  static void write_rows(Points& out, const char* name, const std::vector<Mat3f>& m) {
    Vec3f* rows[3];
    for (int k = 0; k < 3; ++k) {
      const std::string n = std::string(name) + char('0' + k);
      out.add(n, AttribType::Vec3);
      rows[k] = out.get_vec3(n);
    }
    for (std::size_t i = 0; i < m.size(); ++i) {
      rows[0][i] = m[i].r0;
      rows[1][i] = m[i].r1;
      rows[2][i] = m[i].r2;
    }
  }

  // x => keys_ (block, cell), order_ (sorted position -> particle), the
  // particle blocks (pb_keys_, pb_start_), cell ranges (cell_start_) and
  // each particle's block (pb_of_).
  void bin() {
    const Vec3f* x = x_.data();
    const float inv_dx = c_.inv_dx;
    const Int3Bounds bb = ex_.reduce(
        n_, Int3Bounds{{INT32_MAX, INT32_MAX, INT32_MAX}, {INT32_MIN, INT32_MIN, INT32_MIN}},
        [=] EDDY_HD(uint32_t i) {
          const Int3 b = mpm::base_cell(x[i], inv_dx);
          const Int3 k{mpm::floor_div4(b.x), mpm::floor_div4(b.y), mpm::floor_div4(b.z)};
          return Int3Bounds{k, k};
        },
        Int3BoundsOp{});
    // Room for the node blocks one above the highest particle block.
    auto bits = [](int32_t extent) {
      int b = 1;
      while ((int64_t(1) << b) < int64_t(extent) + 2) ++b;
      return b;
    };
    const int bx = bits(bb.hi.x - bb.lo.x), by = bits(bb.hi.y - bb.lo.y), bz = bits(bb.hi.z - bb.lo.z);
    if (bx + by + bz > 57)
      throw Error("MPM: the particles span too many grid blocks for dx = " + std::to_string(c_.dx) +
                  " m (a coarser dx or a smaller domain is needed)");
    pack_.origin = bb.lo;
    key_bits_ = bx + by + bz;
    pack_.shift_y = bz;
    pack_.shift_x = by + bz;
    const mpm::BlockPacking pack = pack_;
    uint64_t* keys = keys_.data();
    uint32_t* order = order_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const Int3 b = mpm::base_cell(x[i], inv_dx);
      const Int3 k{mpm::floor_div4(b.x), mpm::floor_div4(b.y), mpm::floor_div4(b.z)};
      keys[i] = (pack.pack(k) << 6) | uint64_t(mpm::local_index(b.x, b.y, b.z));
      order[i] = i;
    });
    ex_.sort_by_key(keys, order, n_, bx + by + bz + 6);
    // Particle blocks: where the block part of the sorted keys changes.
    uint32_t* flags = flags_.data();
    const uint32_t n = n_;
    ex_.for_each(n, [=] EDDY_HD(uint32_t s) { flags[s] = (s == 0 || (keys[s] >> 6) != (keys[s - 1] >> 6)) ? 1u : 0u; });
    // flags -> block index of each sorted position (inclusive scan - 1).
    npb_ = ex_.exclusive_scan(flags, flags, n);
    pb_keys_.resize(npb_);
    pb_start_.resize(npb_ + 1);
    cell_start_.resize(size_t(npb_) * 64);
    uint64_t* pbk = pb_keys_.data();
    uint32_t* pbs = pb_start_.data();
    uint32_t* pb_of = pb_of_.data();
    const uint32_t npb = npb_;
    ex_.for_each(n, [=] EDDY_HD(uint32_t s) {
      const bool first = s == 0 || (keys[s] >> 6) != (keys[s - 1] >> 6);
      const uint32_t b = first ? flags[s] : flags[s] - 1;
      if (first) {
        pbk[b] = keys[s] >> 6;
        pbs[b] = s;
      }
      if (s == n - 1) pbs[npb] = n;
      pb_of[order[s]] = b;
    });
    uint32_t* cs = cell_start_.data();
    ex_.for_each(npb * 64, [=] EDDY_HD(uint32_t q) {
      const uint32_t b = q >> 6;
      cs[q] = mpm::lower_bound(keys, pbs[b], pbs[b + 1], (pbk[b] << 6) | uint64_t(q & 63));
    });
  }

  // Physical reorder of every particle array into the sorted order, so that
  // the particles of a cell sit together in memory.
  void reorder() {
    const uint32_t* order = order_.data();
    permute_into(ex_, x_, tmp3_, order, n_);
    permute_into(ex_, v_, tmp3_, order, n_);
    permute_into(ex_, F_, tmp_mat_, order, n_);
    permute_into(ex_, C_, tmp_mat_, order, n_);
    permute_into(ex_, jp_, tmpf_, order, n_);
    permute_into(ex_, mat_, tmpi_, order, n_);
    carried_.permute(ex_, order, n_);
    // Now sorted position s holds particle s.
    uint32_t* ord = order_.data();
    uint32_t* pb_of = pb_of_.data();
    uint32_t* flags = flags_.data();
    const uint64_t* keys = keys_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t s) {
      ord[s] = s;
      const bool first = s == 0 || (keys[s] >> 6) != (keys[s - 1] >> 6);
      pb_of[s] = first ? flags[s] : flags[s] - 1;
    });
  }

  void check_grid_size(uint64_t node_blocks) const {
    const double bytes = double(node_blocks) * 64.0 * node_bytes();
    const double limit = params_.max_grid_bytes > 0 ? params_.max_grid_bytes : 0.5 * physical_memory_bytes();
    if (bytes > limit) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "MPM: dx = %g m needs up to %.3g GB of grid for these particles (%u occupied blocks), over the "
                    "limit of %.3g GB; use a coarser dx (more particles per cell)",
                    double(c_.dx), bytes / 1e9, npb_, limit / 1e9);
      throw Error(buf);
    }
  }
  double node_bytes() const {
    return 4.0 + sizeof(Vec3f) * (params_.transfer == MpmTransfer::Flip ? 2 : 1);
  }

  // Node blocks: the particle blocks shifted by {0,1}^3, deduplicated; and
  // the tables linking the two lists.
  void build_node_blocks() {
    const uint32_t nc = npb_ * 8;
    cand_.resize(nc);
    cand_idx_.resize(nc + 1);
    uint64_t* cand = cand_.data();
    uint32_t* idx = cand_idx_.data();
    const uint64_t* pbk = pb_keys_.data();
    const mpm::BlockPacking pack = pack_;
    ex_.for_each(nc, [=] EDDY_HD(uint32_t q) {
      cand[q] = pack.offset(pbk[q >> 3], int(q & 7), +1);
      idx[q] = q;
    });
    ex_.sort_by_key(cand, idx, nc, key_bits_);
    uint32_t* flags = idx;  // the sort's values are not needed: reuse as flags
    ex_.for_each(nc, [=] EDDY_HD(uint32_t q) { flags[q] = (q == 0 || cand[q] != cand[q - 1]) ? 1u : 0u; });
    nnb_ = ex_.exclusive_scan(flags, flags, nc);
    check_grid_size(nnb_);
    nb_keys_.resize(nnb_);
    uint64_t* nbk = nb_keys_.data();
    ex_.for_each(nc, [=] EDDY_HD(uint32_t q) {
      if (q == 0 || cand[q] != cand[q - 1]) nbk[flags[q]] = cand[q];
    });
    nb_pb_.resize(size_t(nnb_) * 8);
    pb_nb_.resize(size_t(npb_) * 8);
    uint32_t* nb_pb = nb_pb_.data();
    uint32_t* pb_nb = pb_nb_.data();
    const uint32_t npb = npb_, nnb = nnb_;
    ex_.for_each(nnb * 8, [=] EDDY_HD(uint32_t q) {
      // The particle block N - o, if N - o stays inside the packing's range.
      const Int3 nbc = pack.unpack(nbk[q >> 3]);
      const int o = int(q & 7);
      const Int3 pc{nbc.x - (o & 1), nbc.y - ((o >> 1) & 1), nbc.z - ((o >> 2) & 1)};
      const bool inside = pc.x >= pack.origin.x && pc.y >= pack.origin.y && pc.z >= pack.origin.z;
      nb_pb[q] = inside ? mpm::find_key(pbk, npb, pack.pack(pc)) : kNone;
    });
    ex_.for_each(npb * 8, [=] EDDY_HD(uint32_t q) {
      pb_nb[q] = mpm::find_key(nbk, nnb, pack.offset(pbk[q >> 3], int(q & 7), +1));
    });
    const size_t nodes = size_t(nnb_) * 64;
    gm_.resize(nodes);
    gv_.resize(nodes);
    if (params_.transfer == MpmTransfer::Flip) gv_old_.resize(nodes);
  }

  // A_p = m C_p (APIC) - dt V (4 / dx^2) tau_p, packed with what P2G
  // reads of each particle, in the binned order: P2G then streams through
  // one 64-byte record per particle instead of gathering from six arrays.
  void compute_affine(float dt) {
    const MpmConstants c = c_;
    const Vec3f* x = x_.data();
    const Vec3f* v = v_.data();
    const Mat3f* F = F_.data();
    const Mat3f* C = C_.data();
    const float* jp = jp_.data();
    const int32_t* mat = mat_.data();
    const uint32_t* order = order_.data();
    mpm::P2gRecord* rec = p2g_.data();
    const float k = -dt * c.volume * 4.0f * c.inv_dx * c.inv_dx;
    const bool apic = c.transfer == int(MpmTransfer::Apic);
    ex_.for_each(n_, [=] EDDY_HD(uint32_t s) {
      const uint32_t p = order[s];
      const int m = mat[p];
      Mat3f a = mpm::kirchhoff_stress(c, m, F[p], C[p], jp[p]) * k;
      if (apic) a += C[p] * c.mass[m];
      rec[s] = {x[p] * c.inv_dx, c.mass[m], v[p] * c.mass[m], a * c.dx};
    });
  }

  void p2g() {
    const mpm::BlockPacking pack = pack_;
    const mpm::P2gRecord* rec = p2g_.data();
    const uint32_t* cs = cell_start_.data();
    const uint32_t* pbs = pb_start_.data();
    const uint64_t* nbk = nb_keys_.data();
    const uint32_t* nb_pb = nb_pb_.data();
    float* gm = gm_.data();
    Vec3f* gv = gv_.data();
    ex_.for_each(nnb_ * 64, [=] EDDY_HD(uint32_t q) {
      const uint32_t nb = q >> 6;
      const Int3 blk = pack.unpack(nbk[nb]);
      const int l = int(q & 63);
      const Int3 g{blk.x * 4 + (l & 3), blk.y * 4 + ((l >> 2) & 3), blk.z * 4 + ((l >> 4) & 3)};
      const Vec3f gi = vec3(float(g.x), float(g.y), float(g.z));  // in cells
      float m = 0.0f;
      Vec3f mv = vec3(0.0f);
      for (int dz = 0; dz < 3; ++dz)
        for (int dy = 0; dy < 3; ++dy)
          for (int dx = 0; dx < 3; ++dx) {
            const int32_t cx = g.x - dx, cy = g.y - dy, cz = g.z - dz;
            const int o = (blk.x - mpm::floor_div4(cx)) | ((blk.y - mpm::floor_div4(cy)) << 1) |
                          ((blk.z - mpm::floor_div4(cz)) << 2);
            const uint32_t pb = nb_pb[nb * 8 + uint32_t(o)];
            if (pb == kNone) continue;
            const uint32_t cell = pb * 64 + uint32_t(mpm::local_index(cx, cy, cz));
            const uint32_t lo = cs[cell], hi = (cell & 63) == 63 ? pbs[pb + 1] : cs[cell + 1];
            const Vec3f base = vec3(float(cx), float(cy), float(cz));
            for (uint32_t s = lo; s < hi; ++s) {
              const mpm::P2gRecord& r = rec[s];
              const Vec3f fx = r.xs - base;
              const float w = mpm::bspline(dx, fx.x) * mpm::bspline(dy, fx.y) * mpm::bspline(dz, fx.z);
              m += w * r.mass;
              mv += w * (r.momentum + r.affine * (gi - r.xs));
            }
          }
      gm[q] = m;
      gv[q] = mv;
    });
  }

  void grid_update(float dt, float t_end) {
    const MpmConstants c = c_;
    const mpm::BlockPacking pack = pack_;
    const uint64_t* nbk = nb_keys_.data();
    const float* gm = gm_.data();
    Vec3f* gv = gv_.data();
    Vec3f* gv_old = params_.transfer == MpmTransfer::Flip ? gv_old_.data() : nullptr;
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = ncoll_;
    ex_.for_each(nnb_ * 64, [=] EDDY_HD(uint32_t q) {
      const float m = gm[q];
      if (!(m > 0.0f)) {
        gv[q] = vec3(0.0f);
        if (gv_old) gv_old[q] = vec3(0.0f);
        return;
      }
      Vec3f v = gv[q] / m;
      if (gv_old) gv_old[q] = v;
      v += c.gravity * dt;
      const Int3 blk = pack.unpack(nbk[q >> 6]);
      const int l = int(q & 63);
      const Vec3f xi =
          vec3(float(blk.x * 4 + (l & 3)), float(blk.y * 4 + ((l >> 2) & 3)), float(blk.z * 4 + ((l >> 4) & 3))) *
          c.dx;
      for (uint32_t k = 0; k < ncoll; ++k) {
        const SdfSample sd = collider_sdf(cols[k], xi, t_end);
        if (sd.distance < 0.0f) v = mpm::wall_velocity(c.boundary, v, sd.normal, cols[k].velocity, cols[k].friction);
      }
      // Domain walls: the nodes within a cell of a face.
      const float xa[3] = {xi.x, xi.y, xi.z}, lo[3] = {c.domain_lo.x, c.domain_lo.y, c.domain_lo.z},
                  hi[3] = {c.domain_hi.x, c.domain_hi.y, c.domain_hi.z};
      for (int a = 0; a < 3; ++a) {
        Vec3f n = vec3(0.0f);
        if (xa[a] < lo[a] + c.dx) at(n, a) = 1.0f;
        else if (xa[a] > hi[a] - c.dx) at(n, a) = -1.0f;
        else continue;
        v = mpm::wall_velocity(c.boundary, v, n, vec3(0.0f), c.domain_friction);
      }
      gv[q] = v;
    });
  }

  void g2p(float dt) {
    const MpmConstants c = c_;
    const mpm::BlockPacking pack = pack_;
    const uint64_t* pbk = pb_keys_.data();
    const uint32_t* pb_nb = pb_nb_.data();
    const uint32_t* pb_of = pb_of_.data();
    const Vec3f* gv = gv_.data();
    const Vec3f* gv_old = params_.transfer == MpmTransfer::Flip ? gv_old_.data() : nullptr;
    Vec3f* x = x_.data();
    Vec3f* v = v_.data();
    Mat3f* C = C_.data();
    Mat3f* F = F_.data();
    float* jp = jp_.data();
    const int32_t* mat = mat_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t p) {
      const Vec3f xp = x[p];
      const Int3 base = mpm::base_cell(xp, c.inv_dx);
      const Int3 blk = pack.unpack(pbk[pb_of[p]]);
      const uint32_t* links = pb_nb + size_t(pb_of[p]) * 8;
      const Vec3f fx = xp * c.inv_dx - vec3(float(base.x), float(base.y), float(base.z));
      Vec3f vpic = vec3(0.0f), dflip = vec3(0.0f);
      Mat3f B = mat3_zero();
      for (int dz = 0; dz < 3; ++dz)
        for (int dy = 0; dy < 3; ++dy)
          for (int dx = 0; dx < 3; ++dx) {
            const int32_t gx = base.x + dx, gy = base.y + dy, gz = base.z + dz;
            const int o = (mpm::floor_div4(gx) - blk.x) | ((mpm::floor_div4(gy) - blk.y) << 1) |
                          ((mpm::floor_div4(gz) - blk.z) << 2);
            const uint32_t node = links[o] * 64 + uint32_t(mpm::local_index(gx, gy, gz));
            const float w = mpm::bspline(dx, fx.x) * mpm::bspline(dy, fx.y) * mpm::bspline(dz, fx.z);
            const Vec3f vi = gv[node];
            const Vec3f dpos = (vec3(float(dx), float(dy), float(dz)) - fx) * c.dx;
            vpic += w * vi;
            B += outer(vi * w, dpos);
            if (gv_old) dflip += w * (vi - gv_old[node]);
          }
      const Mat3f Cp = B * (4.0f * c.inv_dx * c.inv_dx);
      Vec3f vp = vpic;
      if (gv_old) vp = (v[p] + dflip) * c.flip + vpic * (1.0f - c.flip);
      const int m = mat[p];
      Mat3f Fp = (mat3_identity() + Cp * dt) * F[p];
      float j = jp[p];
      mpm::plasticity(c, m, Fp, j);
      F[p] = Fp;
      jp[p] = j;
      C[p] = Cp;
      v[p] = vp;
      // Advect, kept inside the domain.
      Vec3f xn = xp + vp * dt;
      const float eps = 1e-3f * c.dx;
      xn = vmin(vmax(xn, c.domain_lo + vec3(eps)), c.domain_hi - vec3(eps));
      x[p] = xn;
    });
  }

  MpmMotionStats motion_stats() const {
    const Vec3f* x = x_.data();
    const Vec3f* v = v_.data();
    const Mat3f* F = F_.data();
    const float* jp = jp_.data();
    const int32_t* mat = mat_.data();
    const float xi = c_.hardening;
    return ex_.reduce(
        n_, MpmMotionStats{0.0f, 1.0f, 0u},
        [=] EDDY_HD(uint32_t i) {
          const bool ok = is_finite(x[i]) && is_finite(v[i]) && is_finite(F[i]);
          const float h = mat[i] == int(MpmMaterial::Snow) ? expf(xi * (1.0f - jp[i])) : 1.0f;
          return MpmMotionStats{ok ? length2(v[i]) : 0.0f, ok ? h : 1.0f, ok ? 0u : 1u};
        },
        MpmMotionOp{});
  }

 private:
  Exec ex_;
  MpmConstants c_;
  float radius_ = 0;
  uint32_t n_ = 0;
  std::size_t dropped_ = 0;
  float wave_speed_ = 0, snow_wave_ = 0, hardening_max_ = 1;
  bool snow_ = false, water_ = false;
  uint64_t steps_ = 0;
  // Particles.
  Vec<Vec3f> x_, v_, tmp3_;
  Vec<Mat3f> F_, C_, tmp_mat_;
  Vec<mpm::P2gRecord> p2g_;
  Vec<float> jp_, tmpf_;
  Vec<int32_t> mat_, tmpi_;
  CarriedAttributes<Exec> carried_;
  // Binning.
  mpm::BlockPacking pack_;
  Vec<uint64_t> keys_, pb_keys_, cand_, nb_keys_;
  Vec<uint32_t> order_, pb_of_, flags_, pb_start_, cell_start_, cand_idx_, nb_pb_, pb_nb_;
  uint32_t npb_ = 0, nnb_ = 0;
  int key_bits_ = 0;
  // Grid.
  Vec<float> gm_;
  Vec<Vec3f> gv_, gv_old_;
  DeviceColliders<Exec> colliders_;
  uint32_t ncoll_ = 0;
  MpmStageTimes times_;
};

}  // namespace eddy
