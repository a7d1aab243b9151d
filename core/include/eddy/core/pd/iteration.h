#pragma once
// The local-global iteration's passes on the executor template (DESIGN.md's
// executor: CpuExecutor here, CudaExecutor in gpu/src/pd_cuda.cu), over the
// system's arrays as plain pointers (PdView): the same code on the host and
// the device, without Eigen.
//
//   pd_local   every constraint's projection at x into p (its rows):
//              triangles and tetrahedra four to a thread in lanes (AVX2 on
//              the CPU through for_each_simd), the other constraints one each;
//   pd_rhs     b = M/h^2 y + G^T W p + the contact slots' terms, per node;
//   pd_sweep   one Jacobi sweep with b computed in the same pass, under-
//              relaxed and Chebyshev-accelerated (Wang 2015), per node.
//
// Each node's and each constraint's result is written by one thread and
// summed in a fixed order, so results do not depend on the thread count.
#include <stddef.h>
#include <stdint.h>

#include "eddy/core/hd.h"
#include "eddy/core/pd/projection.h"
#include "eddy/core/reduce_ops.h"

namespace eddy {

enum class PdKind : uint8_t { Tet, Tri, Bend, Spring, Pin };

struct PdConstraint {
  PdKind kind = PdKind::Pin;
  uint32_t row = 0;  // first of its rows (3 for a tetrahedron, 2 for a triangle, else 1)
  double weight = 0;          // Tet, Tri: w_s + w_v
  double volume_share = 0;    // Tet, Tri: w_v / (w_s + w_v)
  double lo = 1, hi = 1;      // strain limits; Bend, Spring: the rest length
  double target[3] = {0, 0, 0};  // Pin
};

// A contact slot as the passes read it: its point (a proxy, up to four
// nodes by fixed weights), its weight, and this step's contact plane if it
// touches (n . x >= offset); a slot without a contact holds its point where
// it is.
struct PdSlot {
  int32_t node[4] = {0, 0, 0, 0};
  double w[4] = {1, 0, 0, 0};
  int32_t count = 1;
  double weight = 0;
  int32_t touching = 0;
  double normal[3] = {0, 1, 0};
  double offset = 0;
};

struct PdNodeSlot {
  uint32_t slot;
  int32_t place;  // the node's place among the slot's nodes
};

// The system's arrays (host or device pointers). Positions and the other
// per-node or per-row arrays are row-major n x 3 (x[3 i + k]).
struct PdView {
  uint32_t nodes = 0, constraints = 0, rows = 0, tris = 0, tets = 0, others = 0, slots = 0;
  const PdConstraint* c = nullptr;
  const uint32_t* tri_ids = nullptr;    // the constraints of kind Tri
  const uint32_t* tet_ids = nullptr;    // of kind Tet
  const uint32_t* other_ids = nullptr;  // the rest
  const uint32_t* row_start = nullptr;  // G, CSR over rows
  const int32_t* row_node = nullptr;
  const double* row_coef = nullptr;
  const int* gtw_start = nullptr;  // G^T W, CSR over nodes
  const int* gtw_col = nullptr;
  const double* gtw_val = nullptr;
  const int* a_start = nullptr;  // the global matrix with its contact slots, CSR over nodes
  const int* a_col = nullptr;
  const double* a_val = nullptr;
  const double* diag = nullptr;
  const double* mass_h2 = nullptr;  // m_i / h^2
  const uint32_t* node_slot_start = nullptr;  // each node's slots, CSR over nodes
  const PdNodeSlot* node_slot = nullptr;
  const PdSlot* slot = nullptr;
};

constexpr int kPdTriLanes = 4;
constexpr int kPdTetLanes = 4;

// Row r of G x.
EDDY_HD_INLINE void pd_row(const PdView& v, uint32_t r, const double* x, double* out) {
  out[0] = out[1] = out[2] = 0;
  for (uint32_t e = v.row_start[r]; e < v.row_start[r + 1]; ++e) {
    const double w = v.row_coef[e];
    const double* xn = x + 3 * int64_t(v.row_node[e]);
    for (int k = 0; k < 3; ++k) out[k] += w * xn[k];
  }
}

// Constraint k's projection at x into its rows of p; returns its energy,
// w/2 |G_k x - P_k|^2.
EDDY_HD_INLINE double pd_project_one(const PdView& v, uint32_t k, const double* x, double* p) {
  const PdConstraint c = v.c[k];
  switch (c.kind) {
    case PdKind::Tet:
    case PdKind::Tri: {
      const int K = c.kind == PdKind::Tet ? 3 : 2;
      double F[9], P[9], col[3];
      for (int j = 0; j < K; ++j) {
        pd_row(v, c.row + uint32_t(j), x, col);
        for (int i = 0; i < 3; ++i) F[K * i + j] = col[i];
      }
      const double e = K == 3 ? pd::element_projection<3>(F, c.lo, c.hi, c.volume_share, P)
                              : pd::element_projection<2>(F, c.lo, c.hi, c.volume_share, P);
      for (int j = 0; j < K; ++j)
        for (int i = 0; i < 3; ++i) p[3 * int64_t(c.row + uint32_t(j)) + i] = P[K * i + j];
      return c.weight * e;
    }
    case PdKind::Bend:
    case PdKind::Spring: {
      double d[3];
      pd_row(v, c.row, x, d);
      const double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      const double f = len > 1e-300 ? c.lo / len : 0.0;
      double e = 0;
      for (int i = 0; i < 3; ++i) {
        const double t = f * d[i];
        p[3 * int64_t(c.row) + i] = t;
        e += (d[i] - t) * (d[i] - t);
      }
      return 0.5 * c.weight * e;
    }
    case PdKind::Pin: {
      double d[3];
      pd_row(v, c.row, x, d);
      double e = 0;
      for (int i = 0; i < 3; ++i) {
        p[3 * int64_t(c.row) + i] = c.target[i];
        e += (d[i] - c.target[i]) * (d[i] - c.target[i]);
      }
      return 0.5 * c.weight * e;
    }
  }
  return 0;
}

// Four tetrahedra's projections (from batch's first): their F^T F
// diagonalised in lanes, the rest of each one by one (the same bits as
// pd_project_one).
EDDY_HD_INLINE void pd_project_tets(const PdView& v, uint32_t first, const double* x, double* p) {
  const uint32_t n = v.tets - first < uint32_t(kPdTetLanes) ? v.tets - first : uint32_t(kPdTetLanes);
  double F[kPdTetLanes][9], C[9][kPdTetLanes], V[9][kPdTetLanes], l[3][kPdTetLanes];
  for (uint32_t k = 0; k < uint32_t(kPdTetLanes); ++k) {
    const PdConstraint& c = v.c[v.tet_ids[first + (k < n ? k : n - 1)]];  // a short batch repeats its last
    double col[3], g[9];
    for (int j = 0; j < 3; ++j) {
      pd_row(v, c.row + uint32_t(j), x, col);
      for (int i = 0; i < 3; ++i) F[k][3 * i + j] = col[i];
    }
    pd::gram3(F[k], g);
    for (int i = 0; i < 9; ++i) C[i][k] = g[i];
  }
  pd::sym3_eigen_lanes<kPdTetLanes>(C, V, l);
  for (uint32_t k = 0; k < n; ++k) {
    const PdConstraint& c = v.c[v.tet_ids[first + k]];
    double Vk[9], U[9], sigma[3], P[9];
    for (int i = 0; i < 9; ++i) Vk[i] = V[i][k];
    pd::svd_from_v<3>(F[k], Vk, U, sigma);
    pd::element_projection_svd<3>(U, sigma, Vk, c.lo, c.hi, c.volume_share, P);
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) p[3 * int64_t(c.row + uint32_t(j)) + i] = P[3 * i + j];
  }
}

// The local step: every constraint projected at x into p.
template <class Exec>
void pd_local(const Exec& ex, const PdView& v, const double* x, double* p) {
  const uint32_t nb = (v.tris + kPdTriLanes - 1) / kPdTriLanes, nt = (v.tets + kPdTetLanes - 1) / kPdTetLanes;
  ex.for_each_simd(nb + nt + v.others, [=] EDDY_HD(uint32_t job) {
    if (job >= nb + nt) {
      pd_project_one(v, v.other_ids[job - nb - nt], x, p);
      return;
    }
    if (job >= nb) {
      pd_project_tets(v, (job - nb) * kPdTetLanes, x, p);
      return;
    }
    const uint32_t first = job * kPdTriLanes;
    const uint32_t n = v.tris - first < uint32_t(kPdTriLanes) ? v.tris - first : uint32_t(kPdTriLanes);
    pd::TriLanes<kPdTriLanes> t;
    for (uint32_t l = 0; l < uint32_t(kPdTriLanes); ++l) {
      const PdConstraint& c = v.c[v.tri_ids[first + (l < n ? l : n - 1)]];  // a short batch repeats its last
      for (uint32_t j = 0; j < 2; ++j) {  // pd_row, for a triangle's rows of three entries
        const uint32_t e = v.row_start[c.row + j];
        const double* x0 = x + 3 * int64_t(v.row_node[e]);
        const double* x1 = x + 3 * int64_t(v.row_node[e + 1]);
        const double* x2 = x + 3 * int64_t(v.row_node[e + 2]);
        for (int k = 0; k < 3; ++k)
          t.f[3 * j + uint32_t(k)][l] = v.row_coef[e] * x0[k] + v.row_coef[e + 1] * x1[k] + v.row_coef[e + 2] * x2[k];
      }
      t.lo[l] = c.lo, t.hi[l] = c.hi, t.share[l] = c.volume_share;
    }
    pd::triangle_lanes<kPdTriLanes>(t);
    for (uint32_t l = 0; l < n; ++l) {
      const uint32_t k = v.tri_ids[first + l];
      if (!t.ok[l]) {
        pd_project_one(v, k, x, p);  // the general path
        continue;
      }
      double* pr = p + 3 * int64_t(v.c[k].row);
      for (int i = 0; i < 6; ++i) pr[i] = t.p[i][l];
    }
  });
}

// Slot s's projection at x: its point, moved onto its contact's side of the
// plane if it touches.
EDDY_HD_INLINE void pd_slot_point(const PdSlot& s, const double* x, double* q) {
  q[0] = q[1] = q[2] = 0;
  for (int a = 0; a < s.count; ++a)
    for (int k = 0; k < 3; ++k) q[k] += s.w[a] * x[3 * int64_t(s.node[a]) + k];
  if (s.touching) {
    const double gap = s.offset - (s.normal[0] * q[0] + s.normal[1] * q[1] + s.normal[2] * q[2]);
    if (gap > 0)
      for (int k = 0; k < 3; ++k) q[k] += gap * s.normal[k];
  }
}

// Row i of the right-hand side M/h^2 y + G^T W p + sum over the node's
// slots of w g_i q (q the slot's projection at x).
EDDY_HD_INLINE void pd_rhs_row(const PdView& v, uint32_t i, const double* y, const double* p, const double* x,
                               double* out) {
  for (int k = 0; k < 3; ++k) out[k] = v.mass_h2[i] * y[3 * int64_t(i) + k];
  for (int e = v.gtw_start[i]; e < v.gtw_start[i + 1]; ++e) {
    const double w = v.gtw_val[e];
    const double* pr = p + 3 * int64_t(v.gtw_col[e]);
    for (int k = 0; k < 3; ++k) out[k] += w * pr[k];
  }
  for (uint32_t e = v.node_slot_start[i]; e < v.node_slot_start[i + 1]; ++e) {
    const PdNodeSlot ns = v.node_slot[e];
    const PdSlot& s = v.slot[ns.slot];
    double q[3];
    pd_slot_point(s, x, q);
    const double w = s.weight * s.w[ns.place];
    for (int k = 0; k < 3; ++k) out[k] += w * q[k];
  }
}

template <class Exec>
void pd_rhs(const Exec& ex, const PdView& v, const double* y, const double* p, const double* x, double* b) {
  ex.for_each(v.nodes, [=] EDDY_HD(uint32_t i) { pd_rhs_row(v, i, y, p, x, b + 3 * int64_t(i)); });
}

// One Jacobi sweep, xhat = D^-1 (b - (A - D) x) with b the right-hand side
// of (y, p, x), under-relaxed by gamma and accelerated by omega:
//   out = omega (gamma (xhat - x) + x - prev) + prev
// (omega = gamma = 1: the plain sweep).
template <class Exec>
void pd_sweep(const Exec& ex, const PdView& v, const double* y, const double* p, const double* x, const double* prev,
              double omega, double gamma, double* out) {
  ex.for_each(v.nodes, [=] EDDY_HD(uint32_t i) {
    double s[3];
    pd_rhs_row(v, i, y, p, x, s);
    for (int e = v.a_start[i]; e < v.a_start[i + 1]; ++e) {
      const int j = v.a_col[e];
      if (j == int(i)) continue;
      const double a = v.a_val[e];
      for (int k = 0; k < 3; ++k) s[k] -= a * x[3 * int64_t(j) + k];
    }
    for (int k = 0; k < 3; ++k) {
      const double xi = x[3 * int64_t(i) + k], pv = prev[3 * int64_t(i) + k];
      const double hat = s[k] / v.diag[i];
      out[3 * int64_t(i) + k] = omega * (gamma * (hat - xi) + xi - pv) + pv;
    }
  });
}

// Chebyshev's omega for iteration `it` (Wang 2015): plain sweeps before
// `delay`, then omega_{k+1} = 4 / (4 - rho^2 omega_k).
EDDY_HD_INLINE double pd_chebyshev_omega(int it, int delay, double rho, double omega) {
  const double rho2 = rho * rho;
  return it < delay ? 1.0 : it == delay ? 2.0 / (2.0 - rho2) : 4.0 / (4.0 - rho2 * omega);
}

// The largest squared move of a node between a and b.
template <class Exec>
double pd_max_move2(const Exec& ex, uint32_t nodes, const double* a, const double* b) {
  return ex.reduce(
      nodes, 0.0,
      [=] EDDY_HD(uint32_t i) {
        double d2 = 0;
        for (int k = 0; k < 3; ++k) d2 += (a[3 * int64_t(i) + k] - b[3 * int64_t(i) + k]) * (a[3 * int64_t(i) + k] - b[3 * int64_t(i) + k]);
        return d2;
      },
      MaxOp{});
}

// The Chebyshev iterations of a step on a device (gpu/src/pd_cuda.cu): the
// system's arrays copied once and again when they change, the iterations
// run there, the positions brought back.
class PdDeviceIterations {
 public:
  virtual ~PdDeviceIterations() = default;
  // What changed since the last load (bits).
  static constexpr unsigned kStructure = 1;    // everything (a new system)
  static constexpr unsigned kMatrix = 2;       // the contact slots and the matrix's values
  static constexpr unsigned kContacts = 4;     // the slots' contact planes
  static constexpr unsigned kTargets = 8;      // the constraints' pin targets
  virtual void load(const PdView& host, unsigned changed) = 0;
  // `iterations` Chebyshev iterations from x = y (rho, gamma, delay as in
  // PdSolver); x (n x 3) receives the result. Returns the last iteration's
  // largest node move.
  virtual double iterate(const double* y, int iterations, double rho, double gamma, int delay, double* x) = 0;
};

// PdDeviceIterations on an executor: the arrays in its vectors (the GPU's
// memory for CudaExecutor, gpu/src/pd_cuda.cu; host copies for
// CpuExecutor, which tests the copying on the CPU against PdSolver's own
// iterations).
template <class Exec>
class PdIterationsOn final : public PdDeviceIterations {
 public:
  explicit PdIterationsOn(Exec ex = Exec()) : ex_(static_cast<Exec&&>(ex)) {}

  void load(const PdView& h, unsigned changed) override {
    const uint32_t n = h.nodes;
    if (changed & kStructure) {
      ex_.upload(tri_ids_, h.tri_ids, h.tris);
      ex_.upload(tet_ids_, h.tet_ids, h.tets);
      ex_.upload(other_ids_, h.other_ids, h.others);
      ex_.upload(row_start_, h.row_start, h.rows + 1);
      ex_.upload(row_node_, h.row_node, h.row_start[h.rows]);
      ex_.upload(row_coef_, h.row_coef, h.row_start[h.rows]);
      ex_.upload(gtw_start_, h.gtw_start, n + 1);
      ex_.upload(gtw_col_, h.gtw_col, size_t(h.gtw_start[n]));
      ex_.upload(gtw_val_, h.gtw_val, size_t(h.gtw_start[n]));
      ex_.upload(a_start_, h.a_start, n + 1);
      ex_.upload(a_col_, h.a_col, size_t(h.a_start[n]));
      ex_.upload(mass_h2_, h.mass_h2, n);
    }
    if (changed & (kStructure | kTargets)) ex_.upload(c_, h.c, h.constraints);
    if (changed & (kStructure | kMatrix)) {
      ex_.upload(a_val_, h.a_val, size_t(h.a_start[n]));
      ex_.upload(diag_, h.diag, n);
      ex_.upload(node_slot_start_, h.node_slot_start, n + 1);
      ex_.upload(node_slot_, h.node_slot, h.node_slot_start[n]);
    }
    if (changed & (kStructure | kMatrix | kContacts)) ex_.upload(slots_, h.slot, h.slots);
    view_ = h;
    view_.c = c_.data();
    view_.tri_ids = tri_ids_.data();
    view_.tet_ids = tet_ids_.data();
    view_.other_ids = other_ids_.data();
    view_.row_start = row_start_.data();
    view_.row_node = row_node_.data();
    view_.row_coef = row_coef_.data();
    view_.gtw_start = gtw_start_.data();
    view_.gtw_col = gtw_col_.data();
    view_.gtw_val = gtw_val_.data();
    view_.a_start = a_start_.data();
    view_.a_col = a_col_.data();
    view_.a_val = a_val_.data();
    view_.diag = diag_.data();
    view_.mass_h2 = mass_h2_.data();
    view_.node_slot_start = node_slot_start_.data();
    view_.node_slot = node_slot_.data();
    view_.slot = slots_.data();
  }

  double iterate(const double* y, int iterations, double rho, double gamma, int delay, double* x) override {
    const size_t n3 = 3 * size_t(view_.nodes);
    ex_.upload(y_, y, n3);
    ex_.upload(buf_[0], y, n3);  // x
    ex_.upload(buf_[1], y, n3);  // the iterate before
    buf_[2].resize(n3);          // the next
    p_.resize(3 * size_t(view_.rows));
    int cur = 0, prev = 1, next = 2;
    double omega = 1, change2 = 0;
    for (int it = 0; it < iterations; ++it) {
      pd_local(ex_, view_, buf_[cur].data(), p_.data());
      omega = pd_chebyshev_omega(it, delay, rho, omega);
      pd_sweep(ex_, view_, y_.data(), p_.data(), buf_[cur].data(), buf_[prev].data(), omega, gamma, buf_[next].data());
      if (it + 1 == iterations) change2 = pd_max_move2(ex_, view_.nodes, buf_[next].data(), buf_[cur].data());
      const int old = prev;
      prev = cur;
      cur = next;
      next = old;
    }
    ex_.download(buf_[cur], x, n3);
    return sqrt(change2);
  }

 private:
  template <class T>
  using Vector = typename Exec::template Vector<T>;
  Exec ex_;
  PdView view_;
  Vector<PdConstraint> c_;
  Vector<uint32_t> tri_ids_, tet_ids_, other_ids_, row_start_, node_slot_start_;
  Vector<int32_t> row_node_;
  Vector<int> gtw_start_, gtw_col_, a_start_, a_col_;
  Vector<double> row_coef_, gtw_val_, a_val_, diag_, mass_h2_;
  Vector<PdNodeSlot> node_slot_;
  Vector<PdSlot> slots_;
  Vector<double> y_, p_, buf_[3];
};

}  // namespace eddy
