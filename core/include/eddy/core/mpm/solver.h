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
// The material models are in mpm/materials.h, the sparse grid (binning,
// node blocks and the tables linking them) in mpm/sparse_grid.h, the
// boundary rules at the grid nodes in mpm/boundary.h.
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
#include "eddy/core/mpm/boundary.h"
#include "eddy/core/mpm/materials.h"
#include "eddy/core/mpm/mpm.h"
#include "eddy/core/mpm/sparse_grid.h"
#include "eddy/core/points.h"
#include "eddy/core/reduce_ops.h"
#include "eddy/core/solver_buffers.h"

namespace eddy {

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

// Quadratic B-spline weight of the node d (0, 1, 2) cells above the base
// cell, for fractional position f = x / dx - base in [0.5, 1.5).
EDDY_HD_INLINE float bspline(int d, float f) {
  if (d == 0) return 0.5f * (1.5f - f) * (1.5f - f);
  if (d == 1) return 0.75f - (f - 1.0f) * (f - 1.0f);
  return 0.5f * (f - 0.5f) * (f - 0.5f);
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

}  // namespace mpm

template <class Exec>
class MpmSolverT final : public SolverOn<Exec, MpmSolver> {
  EDDY_SOLVER_ON(MpmSolver);

 public:
  MpmSolverT(const MpmParams& p, Exec ex) : Base(p, std::move(ex)) { validate(p); }

  std::size_t dropped() const override { return dropped_; }
  // Two-way coupling: a collider's impulse on the material is the momentum
  // its boundary rule changes at the grid nodes it holds, m_i (v_after -
  // v_before), each node's moment taken at its position.
  bool measures_reactions() const override { return true; }
  void track_reactions(bool on) override { reactions_.enable(on); }
  void reactions(std::vector<ColliderImpulse>& out, uint64_t* lost) const override {
    reactions_.sum(ex_, gx_, ncoll_, out, lost);
  }
  float dx() const override { return c_.dx; }
  float particle_volume() const override { return c_.volume; }
  float wave_speed() const override { return wave_speed_; }

  MpmGridTotals grid_totals() const override {
    const float dx = c_.dx;
    const mpm::BlockPacking pack = bins_.pack();
    const uint64_t* nbk = bins_.nb_keys();
    const float* gm = gm_.data();
    const Vec3f* gv = gv_.data();
    return ex_.reduce(
        bins_.node_blocks() * 64, MpmGridTotals{},
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

  // Animated parameters: the constants and wave speeds follow (at the loaded
  // radius and materials), the particles and their deformation stay.
  void retune(const MpmParams& p) override {
    validate(p);
    if (p.transfer != params_.transfer)
      throw Error("MPM: the transfer cannot change while the solver runs (it is not animatable)");
    params_ = p;
    if (radius_ > 0.0f) {
      c_ = mpm_constants(params_, radius_);
      wave_speeds();
    }
  }

  // The wave speed of the materials present (the step's bound), and snow's.
  void wave_speeds() {
    wave_speed_ = 0.0f;
    for (int m = 0; m < kMpmMaterialCount; ++m) {
      if (!present_[m]) continue;
      const MpmMaterialParams& mp = params_.materials[m];
      const float stiff = m == int(MpmMaterial::Water) ? mp.bulk_modulus : c_.lambda[m] + 2.0f * c_.mu[m];
      wave_speed_ = std::max(wave_speed_, std::sqrt(stiff / mp.density));
    }
    snow_ = present_[int(MpmMaterial::Snow)];
    water_ = present_[int(MpmMaterial::Water)];
    snow_wave_ = snow_ ? std::sqrt((c_.lambda[2] + 2.0f * c_.mu[2]) / params_.materials[2].density) : 0.0f;
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
    // A particle with no state of its own starts at rest: a source's new
    // particles join a stored state with zeros in F, C and Jp, and no
    // deformation can reach det F <= 0 or Jp <= 0 (with F = 0 a jelly would
    // have no stress at all and fold into a sheet).
    for (uint32_t i = 0; i < n_; ++i) {
      if (!(determinant(F[i]) > 0.0f)) {
        F[i] = mat3_identity();
        C[i] = mat3_zero();
      }
      if (!(jp[i] > 0.0f)) jp[i] = 1.0f;
    }
    for (const char* name : {"material", "J", "Jp", "F0", "F1", "F2", "C0", "C1", "C2"}) pts.remove(name);

    for (bool& p : present_) p = false;
    for (int32_t m : mat) present_[m] = true;
    wave_speeds();

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
    bins_.resize(n_);
    tmp_mat_.resize(n_);
    tmp3_.resize(n_);
    tmpf_.resize(n_);
    tmpi_.resize(n_);
    steps_ = 0;
    // Bin once now: the grid this state needs is checked before it is allocated.
    if (n_) {
      bin();
      check_grid_size(bins_.particle_blocks() * 8ull);
    }
  }

  void store(Points& out, bool state) const override {
    store_particles(ex_, out, n_, radius_, x_, v_, carried_);
    store_attribute(ex_, out, "material", mat_);
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
      store_attribute(ex_, out, "Jp", jp_);
    }
  }

  // The grid: node arrays and the node block tables.
  std::size_t grid_bytes() const override {
    return (gm_.size() + gw_.size()) * 4 + (gv_.size() + gv_old_.size()) * sizeof(Vec3f) + bins_.table_bytes();
  }
  std::size_t memory_bytes() const override {
    const std::size_t particles = (x_.size() + v_.size() + tmp3_.size()) * sizeof(Vec3f) +
                                  (F_.size() + C_.size() + tmp_mat_.size()) * sizeof(Mat3f) + p2g_.size() * sizeof(mpm::P2gRecord) +
                                  (jp_.size() + tmpf_.size() + mat_.size() + tmpi_.size()) * 4;
    const std::size_t bins = bins_.bin_bytes();
    return particles + bins + carried_.bytes() + grid_bytes();
  }

  float suggest_dt() const override {
    float c = wave_speed_;
    if (snow_) c = std::max(c, snow_wave_ * std::sqrt(hardening_max_));
    float dt = params_.max_dt;
    // A partner's surfaces on the grid (bodies) count as the material does.
    const float v = std::max(max_speed_, this->partner() ? float(this->partner()->max_speed()) : 0.0f);
    dt = std::min(dt, params_.cfl * c_.dx / (c + v));
    if (water_) dt = std::min(dt, viscous_dt_limit(c_.dx, params_.materials[0].density, c_.viscosity));
    return dt;
  }

  void take_step(float dt, float time, StageClock& clock, MpmStepStats& s) override {
    bin();
    if (params_.reorder_interval > 0 && steps_ % params_.reorder_interval == 0) reorder();
    ++steps_;
    build_node_blocks();
    s.grid_blocks = bins_.node_blocks();
    times_.sort = clock.lap();
    compute_affine(dt);
    times_.stress = clock.lap();
    p2g();
    times_.p2g = clock.lap();
    grid_update(dt, time + dt);
    times_.grid = clock.lap();
    g2p(dt, time + dt);
    const MpmMotionStats m = motion_stats();
    times_.g2p = clock.lap();
    s.max_speed = std::sqrt(m.speed2_max);
    s.nonfinite = m.nonfinite;
    max_speed_ = s.max_speed;
    hardening_max_ = std::max(1.0f, m.hardening_max);
  }

  // ---- stages (public: nvcc's extended lambdas need public enclosing functions)
  static constexpr uint32_t kNone = mpm::SparseGrid<Exec>::kNone;

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

  // The sparse grid of the current positions.
  void bin() { bins_.bin(ex_, x_.data(), n_, c_.inv_dx, c_.dx); }

  // Its node blocks (refused before they are allocated when they would not
  // fit, see check_grid_size) and the node arrays.
  void build_node_blocks() {
    bins_.build_node_blocks(ex_, [this](uint64_t node_blocks) { check_grid_size(node_blocks); });
    const size_t nodes = size_t(bins_.node_blocks()) * 64;
    grow_buffer(gm_, nodes);
    grow_buffer(gv_, nodes);
    if (ncoll_) grow_buffer(gw_, nodes);
    if (params_.transfer == MpmTransfer::Flip) grow_buffer(gv_old_, nodes);
  }

  // Physical reorder of every particle array into the sorted order, so that
  // the particles of a cell sit together in memory.
  void reorder() {
    const uint32_t* order = bins_.order();
    permute_into(ex_, x_, tmp3_, order, n_);
    permute_into(ex_, v_, tmp3_, order, n_);
    permute_into(ex_, F_, tmp_mat_, order, n_);
    permute_into(ex_, C_, tmp_mat_, order, n_);
    permute_into(ex_, jp_, tmpf_, order, n_);
    permute_into(ex_, mat_, tmpi_, order, n_);
    carried_.permute(ex_, order, n_);
    bins_.sorted_in_place(ex_, n_);
  }

  void check_grid_size(uint64_t node_blocks) const {
    const double bytes = double(node_blocks) * 64.0 * node_bytes();
    const double limit = params_.max_grid_bytes > 0 ? params_.max_grid_bytes : 0.5 * physical_memory_bytes();
    if (bytes > limit) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "MPM: dx = %g m needs up to %.3g GB of grid for these particles (%u occupied blocks), over the "
                    "limit of %.3g GB; use a coarser dx (more particles per cell)",
                    double(c_.dx), bytes / 1e9, bins_.particle_blocks(), limit / 1e9);
      throw Error(buf);
    }
  }
  double node_bytes() const {
    return (ncoll_ ? 8.0 : 4.0) + sizeof(Vec3f) * (params_.transfer == MpmTransfer::Flip ? 2 : 1);
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
    const uint32_t* order = bins_.order();
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
    const mpm::BlockPacking pack = bins_.pack();
    const mpm::P2gRecord* rec = p2g_.data();
    const uint32_t* cs = bins_.cell_start();
    const uint32_t* pbs = bins_.pb_start();
    const uint64_t* nbk = bins_.nb_keys();
    const uint32_t* nb_pb = bins_.nb_pb();
    float* gm = gm_.data();
    Vec3f* gv = gv_.data();
    float* gw = ncoll_ ? gw_.data() : nullptr;
    ex_.for_each(bins_.node_blocks() * 64, [=] EDDY_HD(uint32_t q) {
      const uint32_t nb = q >> 6;
      const Int3 blk = pack.unpack(nbk[nb]);
      const int l = int(q & 63);
      const Int3 g{blk.x * 4 + (l & 3), blk.y * 4 + ((l >> 2) & 3), blk.z * 4 + ((l >> 4) & 3)};
      const Vec3f gi = vec3(float(g.x), float(g.y), float(g.z));  // in cells
      float m = 0.0f, ws = 0.0f;
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
              ws += w;
              mv += w * (r.momentum + r.affine * (gi - r.xs));
            }
          }
      gm[q] = m;
      gv[q] = mv;
      if (gw) gw[q] = ws;
    });
  }

  void grid_update(float dt, float t_end) {
    const MpmConstants c = c_;
    const mpm::BlockPacking pack = bins_.pack();
    const uint64_t* nbk = bins_.nb_keys();
    const float* gm = gm_.data();
    Vec3f* gv = gv_.data();
    Vec3f* gv_old = params_.transfer == MpmTransfer::Flip ? gv_old_.data() : nullptr;
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = ncoll_;
    const float* gw = gw_.data();
    const float fill = c.volume * c.inv_dx * c.inv_dx * c.inv_dx;  // a particle's share of a cell
    const ForceField* fields = fields_.data();
    const uint32_t nf = nfields_;
    const uint32_t nodes = bins_.node_blocks() * 64;
    if (reactions_.on()) {
      reactions_.reset(ex_, nodes);
      grow_buffer(gx_, nodes);
    }
    const ReactionView rv = reactions_.view();
    Vec3f* gx = rv.on() ? gx_.data() : nullptr;
    ex_.for_each(nodes, [=] EDDY_HD(uint32_t q) {
      const float m = gm[q];
      if (!(m > 0.0f)) {
        gv[q] = vec3(0.0f);
        if (gv_old) gv_old[q] = vec3(0.0f);
        return;
      }
      Vec3f v = gv[q] / m;
      if (gv_old) gv_old[q] = v;
      const Int3 blk = pack.unpack(nbk[q >> 6]);
      const int l = int(q & 63);
      const Vec3f xi =
          vec3(float(blk.x * 4 + (l & 3)), float(blk.y * 4 + ((l >> 2) & 3)), float(blk.z * 4 + ((l >> 4) & 3))) *
          c.dx;
      v += (c.gravity + fields_accel(fields, nf, xi, v)) * dt;
      if (gx) gx[q] = xi;
      for (uint32_t k = 0; k < ncoll; ++k) {
        const Vec3f before = v;
        v = mpm::collider_rule(c.boundary, cols[k], xi, t_end, c.inv_dx, gw[q] * fill, v);
        if (gx && (v.x != before.x || v.y != before.y || v.z != before.z)) rv.add(q, int32_t(k), (v - before) * m);
      }
      v = mpm::domain_rule(c.boundary, xi, c.domain_lo, c.domain_hi, c.dx, c.domain_friction, v);
      gv[q] = v;
    });
  }

  void g2p(float dt, float t_end) {
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = ncoll_;
    const MpmConstants c = c_;
    const mpm::BlockPacking pack = bins_.pack();
    const uint64_t* pbk = bins_.pb_keys();
    const uint32_t* pb_nb = bins_.pb_nb();
    const uint32_t* pb_of = bins_.pb_of();
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
      // Advect, kept out of the colliders and inside the domain. The grid's
      // rule stops material moving into a solid, but the kernel's smear can
      // carry a particle a little past a surface, and nothing there brings
      // it back (outside a container it would fall away): it is put back on
      // the surface, its velocity left to the grid, as the domain's box does.
      const float eps = 1e-3f * c.dx;
      Vec3f xn = push_out_of_colliders(cols, ncoll, xp + vp * dt, t_end, 0.0f, eps,
                                       [](uint32_t, const SdfSample&, Vec3f) {});
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
  MpmConstants c_;
  float radius_ = 0;
  std::size_t dropped_ = 0;
  float wave_speed_ = 0, snow_wave_ = 0, hardening_max_ = 1;
  bool snow_ = false, water_ = false;
  bool present_[kMpmMaterialCount] = {};  // materials among the loaded particles
  uint64_t steps_ = 0;
  // Particles.
  Vec<Vec3f> x_, v_, tmp3_;
  Vec<Mat3f> F_, C_, tmp_mat_;
  Vec<mpm::P2gRecord> p2g_;
  Vec<float> jp_, tmpf_;
  Vec<int32_t> mat_, tmpi_;
  // Binning.
  mpm::SparseGrid<Exec> bins_;
  // Grid.
  Vec<float> gm_;
  Vec<Vec3f> gv_, gv_old_;
  Vec<float> gw_;  // sum_p w_ip, the material's volume fraction at a node over V_p / dx^3 (with colliders)
  Vec<Vec3f> gx_;  // node positions, kept only while reactions are measured
};

}  // namespace eddy
