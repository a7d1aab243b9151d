// The Projective Dynamics solver's step and frame driver (pd.h).
#include "eddy/core/pd/pd.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/frame_steps.h"
#include "eddy/core/rigid/bodies.h"

namespace eddy {

const ParamTable<PdParams>& pd_param_table() {
  static const ParamTable<PdParams> table = [] {
    ParamTable<PdParams> t("PDSolver");
    t.vector("gravity", &PdParams::gravity, "m/s^2", "Gravity.")
        .real("time_step", &PdParams::time_step, 1e-6, 0.1, "s",
              "Longest step; each frame takes equal steps of at most this. Changing it refactors the matrix.")
        .integer("iterations", &PdParams::iterations, 1, 10000, "",
                 "Local-global iterations per step: more make the material stiffer, up to what the step allows "
                 "(few leave it softer, never unstable).")
        .choice("method", &PdParams::method, kPdMethodNames,
                "cholesky: the global matrix factored once, one back-substitution per iteration (CPU); chebyshev: "
                "a Jacobi sweep per iteration with Chebyshev acceleration (Wang 2015), no factorisation; needs "
                "several times the iterations for the same result.")
        .real("chebyshev_rho", &PdParams::chebyshev_rho, 0.0, 0.9999, "",
              "Chebyshev: the estimated spectral radius of the Jacobi iteration (Wang 2015; 0.9 to 0.9999, higher "
              "for stiffer, finer meshes; too high oscillates).")
        .real("relaxation", &PdParams::relaxation, 0.1, 1.0, "",
              "Chebyshev: under-relaxation of each Jacobi sweep (Wang 2015: 0.9).")
        .real("damping", &PdParams::damping, 0.0, 1e4, "1/s",
              "Velocities decay as exp(-damping t), on top of implicit Euler's own damping.")
        .real("collision_margin", &PdParams::collision_margin, 0.0, 1.0, "m",
              "Nodes keep this far outside the colliders (a cloth's half thickness).")
        .real("pin_stiffness", &PdParams::pin_stiffness, 1.0, 1e12, "N/m",
              "Stiffness of each pin holding a node at its target.")
        .real("contact_weight", &PdParams::contact_weight, 0.01, 1e6, "",
              "Stiffness of a contact in units of its node's own (its mass / h^2 plus its elements' stiffness): "
              "higher penetrates less; lower lets nodes in contact follow their elements in fewer iterations.");
    return t;
  }();
  return table;
}

void validate(const PdParams& p) { pd_param_table().check(p); }

PdSolver::PdSolver(const PdParams& p, int threads) : Solver(p), exec_(std::make_unique<CpuExecutor>(threads)) {
  validate(p);
}

PdSolver::~PdSolver() = default;

void PdSolver::factor(double h) {
  constraints_.build(s_, params_.pin_stiffness);
  system_.build(constraints_, s_.mass, h, params_.method);
}

void PdSolver::load(const SoftBodies& s) {
  s_ = s;
  in_contact_.assign(s_.size(), -1);
  friction_.assign(s_.size(), 0.0);
  for (const SoftObject& ob : s_.objects)
    for (uint32_t i = ob.node_begin; i < ob.node_end; ++i) friction_[i] = ob.material.friction;
  system_ = PdSystem();
  max_speed_ = 0;
  for (const Vec3d& v : s_.v) max_speed_ = std::max(max_speed_, float(v.norm()));
}

void PdSolver::retune(const PdParams& p) {
  validate(p);
  const bool refactor = p.method != params_.method || p.pin_stiffness != params_.pin_stiffness;
  params_ = p;
  if (refactor) system_ = PdSystem();
}

std::size_t PdSolver::memory_bytes() const {
  const std::size_t n = s_.size();
  return n * (5 * sizeof(Vec3d) + sizeof(double) + 1) + s_.tets.size() * 16 + s_.tris.size() * 12 +
         system_.memory_bytes() + std::size_t(p_.size() + b_.size() + x_.size() * 4) * sizeof(double);
}

void PdSolver::find_contacts(float t, double h) {
  std::vector<PdContact> contacts;
  std::vector<uint32_t> near;  // nodes within a few steps' travel of a surface
  std::fill(in_contact_.begin(), in_contact_.end(), -1);
  const double margin = params_.collision_margin;
  bool missing = false;
  for (std::size_t i = 0; i < s_.size() && !colliders_.empty(); ++i) {
    if (s_.pinned[i]) continue;
    // Where the node is headed; a node further than it can go in a step
    // (plus the margin) from every surface makes no contact.
    const Vec3d y = y_.row(Eigen::Index(i)).transpose();
    const double travel = (y - s_.x[i]).norm() + h * s_.v[i].norm();
    PdContact best;
    double nearest = std::numeric_limits<double>::max();
    for (std::size_t k = 0; k < colliders_.size(); ++k) {
      const SdfSample d = collider_sdf(colliders_[k], to_vec3f(y), t);
      if (d.distance < nearest) {
        nearest = d.distance;
        best.normal = Vec3d(d.normal.x, d.normal.y, d.normal.z);
        best.offset = best.normal.dot(y) - d.distance + margin;  // the surface point's plane, raised by the margin
        best.collider = int32_t(k);
      }
    }
    if (nearest < 2 * margin + 4 * travel) near.push_back(uint32_t(i));
    if (nearest >= margin + travel) continue;
    best.node = uint32_t(i);
    in_contact_[i] = int32_t(contacts.size());
    contacts.push_back(best);
    missing = missing || !system_.has_slot(uint32_t(i));
  }
  // New slots (a refactorisation) only when a contact has none: then every
  // node near a surface gets one, so those arriving in the next steps find
  // theirs ready.
  if (missing) {
    std::vector<double> w(near.size());
    for (std::size_t k = 0; k < near.size(); ++k) w[k] = double(params_.contact_weight) * system_.base_diagonal(near[k]);
    system_.set_contact_slots(near, w);
  }
  system_.set_contacts(std::move(contacts));
}

int PdSolver::put_back(PdMatrix& x, float t) {
  int moved = 0;
  for (std::size_t i = 0; i < s_.size() && !colliders_.empty(); ++i) {
    if (s_.pinned[i] || in_contact_[i] >= 0) continue;
    for (const Collider& c : colliders_) {
      const Vec3d xi = x.row(Eigen::Index(i)).transpose();
      const SdfSample d = collider_sdf(c, to_vec3f(xi), t);
      if (d.distance < 0) {
        x.row(Eigen::Index(i)) -= d.distance * Eigen::RowVector3d(d.normal.x, d.normal.y, d.normal.z);
        ++moved;
      }
    }
  }
  return moved;
}

void PdSolver::take_step(float dt, float time, StageClock& clock, PdStepStats& st) {
  const double h = dt;
  if (!system_.ready() || system_.h() != h) factor(h);
  const std::size_t n = s_.size();
  const Vec3d g = to_vec3d(params_.gravity);
  const float t_end = float(time + h);

  // (x, v) => y: the nodes' inertial targets.
  y_.resize(Eigen::Index(n), 3);
  for (std::size_t i = 0; i < n; ++i) {
    Vec3d a = g;
    if (!fields_.empty())
      a += to_vec3d(fields_accel(fields_.data(), uint32_t(fields_.size()), to_vec3f(s_.x[i]), to_vec3f(s_.v[i])));
    y_.row(Eigen::Index(i)) = (s_.x[i] + h * s_.v[i] + h * h * a).transpose();
  }
  times_.inertia = clock.lap();
  find_contacts(t_end, h);
  times_.collide = clock.lap();

  // Local-global iterations from y.
  auto each = [this](uint32_t count, const std::function<void(uint32_t)>& f) { exec_->for_each(count, f); };
  double local_s = 0, global_s = 0;
  double change = 0;
  double omega = 1;
  PdMatrix x = y_;
  prev_ = x;
  const int delay = 2;  // plain Jacobi sweeps before the acceleration starts
  for (int it = 0; it < params_.iterations; ++it) {
    system_.local(x, p_, each);
    local_s += clock.lap();
    system_.rhs(y_, p_, x, b_);
    if (params_.method == PdMethod::Cholesky) {
      system_.solve(b_, next_);
    } else {
      system_.jacobi(b_, x, next_, each);
      // Wang 2015: x_{k+1} = omega (gamma (xhat - x_k) + x_k - x_{k-1}) + x_{k-1}.
      const double rho2 = double(params_.chebyshev_rho) * params_.chebyshev_rho;
      omega = it < delay ? 1.0 : it == delay ? 2.0 / (2.0 - rho2) : 4.0 / (4.0 - rho2 * omega);
      const double gamma = params_.relaxation;
      next_ = omega * (gamma * (next_ - x) + x - prev_) + prev_;
    }
    change = (next_ - x).rowwise().norm().maxCoeff();
    prev_.swap(x);
    x.swap(next_);
    global_s += clock.lap();
    if (probe_) probe_(it, x, y_);
  }
  times_.local = local_s;
  times_.global = global_s;
  put_back(x, t_end);

  // Velocities, friction against the colliders' surfaces, damping.
  const double decay = std::exp(-double(params_.damping) * h);
  const std::vector<PdContact>& contacts = system_.contacts();
  float vmax = 0;
  uint32_t bad = 0;
  int touching = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3d xi = x.row(Eigen::Index(i)).transpose();
    Vec3d v = (xi - s_.x[i]) / h;
    if (const int32_t k = in_contact_[i]; k >= 0) {
      const PdContact& c = contacts[std::size_t(k)];
      const double push = system_.contact_force(std::size_t(k), x);  // N, along the normal
      if (push > 0) {
        ++touching;
        // Coulomb: the tangential velocity relative to the surface loses at
        // most mu times the normal impulse over the mass; a contact's
        // friction is the mean of its two surfaces' (as the bodies').
        const Collider& col = colliders_[std::size_t(c.collider)];
        const double mu = 0.5 * (double(col.friction) + friction_[i]);
        const Vec3d cv = to_vec3d(collider_velocity(col, to_vec3f(xi), t_end));
        const Vec3d rel = v - cv;
        const double vn = rel.dot(c.normal);
        Vec3d vt = rel - vn * c.normal;
        const double vt_len = vt.norm(), dv = mu * push * h / s_.mass[i];
        vt *= vt_len > dv ? 1.0 - dv / vt_len : 0.0;
        v = cv + std::max(vn, 0.0) * c.normal + vt;
      }
    }
    v *= decay;
    s_.x[i] = xi;
    s_.v[i] = v;
    if (!xi.allFinite() || !v.allFinite()) ++bad;
    vmax = std::max(vmax, float(v.norm()));
  }
  times_.velocity = clock.lap();
  max_speed_ = vmax;
  st.iterations = params_.iterations;
  st.contacts = touching;
  st.last_change = change;
  st.max_speed = vmax;
  st.nonfinite = bad;
}

PdFrameStats pd_advance_frame(PdSolver& solver, double time, double frame_dt, int frame,
                              const std::function<void(int, int)>& progress) {
  FrameStepper steps(frame_dt, solver.params().time_step);
  StepChecks checks;
  checks.nonfinite_what = "position or velocity";
  checks.cfl_length = 1.0f;  // m: a node moving a metre in one step has blown up
  checks.cfl_unit = "m";
  checks.max_cfl = 10.0f;
  PdFrameStats f;
  f.steps = advance_frame_steps(solver, steps, time, frame, checks,
                                [&](int step, double, const PdStepStats& s, float) {
                                  f.max_contacts = std::max(f.max_contacts, s.contacts);
                                  f.last_change = std::max(f.last_change, s.last_change);
                                  f.max_speed = std::max(f.max_speed, s.max_speed);
                                  if (progress) progress(step, steps.equal_steps());
                                });
  return f;
}

}  // namespace eddy
