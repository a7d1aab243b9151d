// The Projective Dynamics solver's step and frame driver (pd.h).
#include "eddy/core/pd/pd.h"

#include <cstring>

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
    equal_step_fields(t, " Changing it refactors the matrix.")
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
              "The surfaces keep this far outside the colliders (a cloth's half thickness).")
        .real("pin_stiffness", &PdParams::pin_stiffness, 1.0, 1e12, "N/m",
              "Stiffness of each pin holding a node at its target.")
        .real("contact_weight", &PdParams::contact_weight, 0.01, 1e6, "",
              "Stiffness of a contact in units of its point's own (its nodes' mass / h^2 plus their elements' "
              "stiffness): higher penetrates less; lower lets points in contact follow their elements in fewer "
              "iterations.");
    return t;
  }();
  return table;
}

void validate(const PdParams& p) { pd_param_table().check(p); }

PdSolver::PdSolver(const PdParams& p, int threads) : Solver(p), exec_(std::make_unique<CpuExecutor>(threads)) {
  validate(p);
}

PdSolver::~PdSolver() = default;

void require_device_method(const PdParams& p) {
  if (p.method != PdMethod::Chebyshev)
    throw Error("method: the iterations run on a device only with method chebyshev (cholesky factors on the CPU)");
}

void PdSolver::set_device_iterations(std::unique_ptr<PdDeviceIterations> d) {
  if (d) require_device_method(params_);
  device_ = std::move(d);
  device_changes_ = PdDeviceIterations::kStructure;
}

void PdSolver::factor(double h) {
  constraints_.build(s_, params_.pin_stiffness);
  system_.build(constraints_, s_.mass, proxies_, h, params_.method);
  device_changes_ |= PdDeviceIterations::kStructure;
  pin_of_node_.assign(s_.size(), -1);
  const std::vector<PdConstraint>& c = constraints_.constraints();
  for (std::size_t k = 0; k < c.size(); ++k)
    if (c[k].kind == PdKind::Pin) pin_of_node_[constraints_.row_node(c[k].row)] = int32_t(k);
}

namespace {
// Whether b's constraints and masses are a's: the same elements, rest
// shape, masses, pins (and where unattached pins hold), surface points and
// materials. Positions, velocities and contact slots may differ.
bool same_structure(const SoftBodies& a, const SoftBodies& b) {
  if (a.objects.size() != b.objects.size()) return false;
  for (std::size_t o = 0; o < a.objects.size(); ++o) {
    const SoftObject &x = a.objects[o], &y = b.objects[o];
    if (std::memcmp(&x.material, &y.material, sizeof x.material) != 0 || x.cloth != y.cloth ||
        x.node_begin != y.node_begin || x.node_end != y.node_end || x.tet_begin != y.tet_begin ||
        x.tet_end != y.tet_end || x.tri_begin != y.tri_begin || x.tri_end != y.tri_end ||
        x.surface_point_begin != y.surface_point_begin || x.surface_point_end != y.surface_point_end)
      return false;
  }
  if (a.rest != b.rest || a.mass != b.mass || a.pinned != b.pinned || a.touches != b.touches || a.tets != b.tets ||
      a.tris != b.tris || a.attach != b.attach || a.embed_node != b.embed_node || a.embed_weight != b.embed_weight)
    return false;
  for (std::size_t i = 0; i < a.pinned.size(); ++i)
    if (a.pinned[i] && (a.attach.empty() || a.attach[i] < 0) && a.pin_target[i] != b.pin_target[i]) return false;
  return true;
}
}  // namespace

void PdSolver::load(const SoftBodies& s) {
  // A frame loaded from the one before keeps the factored system: factoring
  // anew would give the same factors (and the state's contact slots are the
  // system's own).
  const bool keep = system_.ready() && same_structure(s_, s);
  s_ = s;
  // The points that meet colliders: the nodes that touch themselves, and
  // every surface point on its nodes (those held entirely by pins left out).
  proxies_.clear();
  friction_.clear();
  proxy_object_.clear();
  for (std::size_t o = 0; o < s_.objects.size(); ++o) {
    const SoftObject& ob = s_.objects[o];
    for (uint32_t i = ob.node_begin; i < ob.node_end; ++i)
      if (s_.touches[i] && !s_.pinned[i]) {
        PdProxy p;
        p.node[0] = int32_t(i);
        proxies_.push_back(p);
        friction_.push_back(ob.material.friction);
        proxy_object_.push_back(uint32_t(o));
      }
    for (uint32_t k = ob.surface_point_begin; k < ob.surface_point_end; ++k) {
      PdProxy p;
      p.count = 0;
      bool free = false;
      for (int a = 0; a < 4; ++a) {
        const double w = s_.embed_weight[k][std::size_t(a)];
        if (w == 0) continue;
        p.node[std::size_t(p.count)] = s_.embed_node[k][std::size_t(a)];
        p.w[std::size_t(p.count)] = w;
        ++p.count;
        free = free || !s_.pinned[std::size_t(s_.embed_node[k][std::size_t(a)])];
      }
      if (p.count == 0 || !free) continue;
      proxies_.push_back(p);
      friction_.push_back(ob.material.friction);
      proxy_object_.push_back(uint32_t(o));
    }
  }
  in_contact_.assign(proxies_.size(), -1);
  if (!keep) system_ = PdSystem();
  max_speed_ = 0;
  for (const Vec3d& v : s_.v) max_speed_ = std::max(max_speed_, float(v.norm()));
}

void PdSolver::retune(const PdParams& p) {
  validate(p);
  if (device_) require_device_method(p);
  const bool refactor = p.method != params_.method || p.pin_stiffness != params_.pin_stiffness;
  slots_stale_ = slots_stale_ || p.contact_weight != params_.contact_weight;
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
  std::vector<uint32_t> near;  // proxies within a few steps' travel of a surface
  std::fill(in_contact_.begin(), in_contact_.end(), -1);
  const double margin = params_.collision_margin;
  bool missing = false;
  if (colliders_.empty()) proxies_seen_.clear();
  else {
    // Each point's nearest surface where it is headed, in parallel; then
    // the contacts in the points' order.
    proxies_seen_.resize(proxies_.size());
    exec_->for_each(uint32_t(proxies_.size()), [&](uint32_t k) {
      const Vec3d y = system_.proxy_point(k, y_), x = system_.proxy_point(k, x_), v = system_.proxy_point(k, v_);
      ProxySeen& seen = proxies_seen_[k];
      // A point further than it can go in a step (plus the margin) from every surface makes no contact.
      seen.travel = (y - x).norm() + h * v.norm();
      seen.nearest = std::numeric_limits<double>::max();
      for (std::size_t c = 0; c < colliders_.size(); ++c) {
        const SdfSample d = collider_sdf(colliders_[c], to_vec3f(y), t);
        if (d.distance < seen.nearest) {
          seen.nearest = d.distance;
          seen.contact.normal = Vec3d(d.normal.x, d.normal.y, d.normal.z);
          seen.contact.offset = seen.contact.normal.dot(y) - d.distance + margin;  // the surface point's plane, raised by the margin
          seen.contact.collider = int32_t(c);
        }
      }
    });
  }
  for (uint32_t k = 0; k < proxies_seen_.size(); ++k) {
    const ProxySeen& seen = proxies_seen_[k];
    if (seen.nearest < 2 * margin + 4 * seen.travel) near.push_back(k);
    if (seen.nearest >= margin + seen.travel) continue;
    PdContact best = seen.contact;
    best.proxy = k;
    in_contact_[k] = int32_t(contacts.size());
    contacts.push_back(best);
    missing = missing || !system_.has_slot(k);
  }
  // New slots (a refactorisation) only when a contact has none: then every
  // point near a surface gets one, so those arriving in the next steps find
  // theirs ready. A slot's weight: contact_weight times its nodes' diagonal,
  // weighted as the point rides on them.
  if (missing || slots_stale_) {
    slots_stale_ = false;
    std::vector<double> w(near.size());
    for (std::size_t k = 0; k < near.size(); ++k) {
      const PdProxy& p = proxies_[near[k]];
      double d = 0, sum = 0;
      for (int a = 0; a < p.count; ++a) {
        d += std::abs(p.w[std::size_t(a)]) * system_.base_diagonal(std::size_t(p.node[std::size_t(a)]));
        sum += std::abs(p.w[std::size_t(a)]);
      }
      w[k] = double(params_.contact_weight) * d / sum;
    }
    system_.set_contact_slots(near, w);
    device_changes_ |= PdDeviceIterations::kMatrix;
  }
  system_.set_contacts(std::move(contacts));
}

// Moves proxy k by d, spread over its free nodes so that the point moves by
// d (each node by w_a d / sum of the free nodes' w^2).
void PdSolver::move_proxy(uint32_t k, const Vec3d& d, PdMatrix& x) const {
  const PdProxy& p = proxies_[k];
  double w2 = 0;
  for (int a = 0; a < p.count; ++a)
    if (!s_.pinned[std::size_t(p.node[std::size_t(a)])]) w2 += p.w[std::size_t(a)] * p.w[std::size_t(a)];
  if (w2 <= 0) return;
  for (int a = 0; a < p.count; ++a)
    if (!s_.pinned[std::size_t(p.node[std::size_t(a)])])
      x.row(p.node[std::size_t(a)]) += (p.w[std::size_t(a)] / w2) * d.transpose();
}

int PdSolver::put_back(PdMatrix& x, float t) {
  // (a point held off one collider may have been pushed into another)
  int moved = 0;
  if (colliders_.empty()) return 0;
  const std::vector<PdContact>& contacts = system_.contacts();
  auto held = [&](uint32_t k) { return in_contact_[k] >= 0 ? contacts[std::size_t(in_contact_[k])].collider : -1; };
  // Which points are inside another collider as x stands, in parallel.
  // In order then, a point is put back where it was found inside, or where
  // a point before it moved one of its nodes (proxies may share nodes):
  // any other would find itself outside, as before.
  inside_.assign(proxies_.size(), 0);
  exec_->for_each(uint32_t(proxies_.size()), [&](uint32_t k) {
    const Vec3f p = to_vec3f(system_.proxy_point(k, x));
    for (std::size_t c = 0; c < colliders_.size(); ++c)
      if (int32_t(c) != held(k) && collider_sdf(colliders_[c], p, t).distance < 0) inside_[k] = 1;
  });
  moved_node_.assign(s_.size(), 0);
  for (uint32_t k = 0; k < proxies_.size(); ++k) {
    const PdProxy& pr = proxies_[k];
    bool check = inside_[k] != 0;
    for (int a = 0; a < pr.count && !check; ++a) check = moved_node_[std::size_t(pr.node[std::size_t(a)])] != 0;
    if (!check) continue;
    for (std::size_t c = 0; c < colliders_.size(); ++c) {
      if (int32_t(c) == held(k)) continue;
      const SdfSample d = collider_sdf(colliders_[c], to_vec3f(system_.proxy_point(k, x)), t);
      if (d.distance < 0) {
        move_proxy(k, -double(d.distance) * Vec3d(d.normal.x, d.normal.y, d.normal.z), x);
        for (int a = 0; a < pr.count; ++a) moved_node_[std::size_t(pr.node[std::size_t(a)])] = 1;
        ++moved;
      }
    }
  }
  return moved;
}

std::vector<int64_t> PdSolver::sole_collider(const std::vector<double>& push) const {
  const std::vector<PdContact>& contacts = system_.contacts();
  std::vector<int64_t> sole(s_.objects.size(), -1);  // -1: none yet; -2: several
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    if (!(push[k] > 0)) continue;
    int64_t& g = sole[proxy_object_[contacts[k].proxy]];
    g = g == -1 || g == contacts[k].collider ? contacts[k].collider : -2;
  }
  for (std::size_t o = 0; o < s_.objects.size(); ++o)
    for (uint32_t i = s_.objects[o].node_begin; i < s_.objects[o].node_end && sole[o] >= 0; ++i)
      if (s_.pinned[i]) sole[o] = -1;
  for (int64_t& g : sole) g = std::max<int64_t>(g, -1);
  return sole;
}

Vec3d PdSolver::object_impulse(std::size_t o, double h) const {
  const SoftObject& ob = s_.objects[o];
  Vec3d J = Vec3d::Zero();
  for (uint32_t i = ob.node_begin; i < ob.node_end; ++i)
    J += s_.mass[i] * (v_.row(Eigen::Index(i)).transpose() - s_.v[i] - h * accel_[i]);
  return J;
}

std::vector<double> PdSolver::contact_forces(const PdMatrix& x, double h) const {
  // The penalty's force at the last iterate, w (p - x) . n, runs ahead of
  // the converged one when the iterations stop short (a cube at rest on a
  // floor after 10 iterations: 1.6 times its weight). What the contacts of
  // an object touching one collider (and held by no pin) gave it is its
  // momentum change beyond the step's gravity and fields (its elements'
  // forces sum to zero): along their normal, the penalties are scaled down
  // to that, never up. Other objects keep their penalties as they are.
  const std::vector<PdContact>& contacts = system_.contacts();
  std::vector<double> push(contacts.size());
  for (std::size_t k = 0; k < contacts.size(); ++k) push[k] = std::max(0.0, system_.contact_force(k, x));
  const std::vector<int64_t> sole = sole_collider(push);
  std::vector<Vec3d> normal(s_.objects.size(), Vec3d::Zero());
  std::vector<double> scale(s_.objects.size(), 0.0);  // first the total push, then the scale
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    const uint32_t o = proxy_object_[contacts[k].proxy];
    normal[o] += push[k] * contacts[k].normal;
    scale[o] += push[k];
  }
  for (std::size_t o = 0; o < s_.objects.size(); ++o)
    scale[o] = sole[o] >= 0 && scale[o] > 0
                   ? std::clamp(object_impulse(o, h).dot(normal[o].normalized()) / (h * scale[o]), 0.0, 1.0)
                   : 1.0;
  for (std::size_t k = 0; k < contacts.size(); ++k) push[k] *= scale[proxy_object_[contacts[k].proxy]];
  return push;
}

void PdSolver::coulomb_bound(const std::vector<double>& push, double h) {
  // The contacts' weights sit on the matrix in all three directions, so
  // iterations that stop short also hold contact points back sideways (the
  // matrix pulls each towards its last iterate); with friction slowing the
  // points that touch, the body behind them loses momentum to it. An object
  // touching one collider (held by no pin) may take no more sideways impulse
  // from it than mu times the normal one: its momentum change beyond
  // gravity and fields is checked against the cone, and what exceeds it
  // given back to all its nodes alike.
  const std::vector<PdContact>& contacts = system_.contacts();
  const std::vector<int64_t> sole = sole_collider(push);
  std::vector<Vec3d> normal(s_.objects.size(), Vec3d::Zero());
  std::vector<double> mu(s_.objects.size(), 0.0);
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    if (!(push[k] > 0)) continue;
    const uint32_t o = proxy_object_[contacts[k].proxy];
    normal[o] += push[k] * contacts[k].normal;
    mu[o] = 0.5 * (double(colliders_[std::size_t(contacts[k].collider)].friction) + friction_[contacts[k].proxy]);
  }
  for (std::size_t o = 0; o < s_.objects.size(); ++o) {
    if (sole[o] < 0) continue;
    const SoftObject& ob = s_.objects[o];
    const Vec3d J = object_impulse(o, h), n = normal[o].normalized();
    const double jn = std::max(0.0, J.dot(n));
    const Vec3d jt = J - J.dot(n) * n;
    const double jt_len = jt.norm();
    if (jt_len <= mu[o] * jn) continue;
    double mass = 0;
    for (uint32_t i = ob.node_begin; i < ob.node_end; ++i) mass += s_.mass[i];
    const Vec3d back = -(1.0 - mu[o] * jn / jt_len) * jt / mass;
    for (uint32_t i = ob.node_begin; i < ob.node_end; ++i) v_.row(Eigen::Index(i)) += back.transpose();
  }
}

void PdSolver::measure_reactions(const PdMatrix& x, const std::vector<double>& push,
                                 const std::vector<Vec3d>& friction_impulse, double h) {
  // An object touching one collider (held by no pin) took from it exactly
  // its momentum change beyond gravity and fields, shared among its
  // contacts by their normal force; other objects' contacts give their own
  // impulses, the normal force's over the step and friction's.
  const std::vector<PdContact>& contacts = system_.contacts();
  reactions_.assign(colliders_.size(), ColliderImpulse{});
  const std::vector<int64_t> sole = sole_collider(push);
  std::vector<Vec3d> J(s_.objects.size(), Vec3d::Zero());
  std::vector<double> total(s_.objects.size(), 0.0);
  for (std::size_t o = 0; o < s_.objects.size(); ++o)
    if (sole[o] >= 0) J[o] = object_impulse(o, h);
  for (std::size_t k = 0; k < contacts.size(); ++k) total[proxy_object_[contacts[k].proxy]] += push[k];
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    if (!(push[k] > 0)) continue;
    const uint32_t o = proxy_object_[contacts[k].proxy];
    const Vec3d j = sole[o] >= 0 ? Vec3d(J[o] * (push[k] / total[o]))
                                 : Vec3d(push[k] * h * contacts[k].normal + friction_impulse[k]);
    const Vec3d r = system_.proxy_point(contacts[k].proxy, x);
    const Vec3d m = r.cross(j);
    ColliderImpulse& out = reactions_[std::size_t(contacts[k].collider)];
    for (int a = 0; a < 3; ++a) out.linear[a] += j(a), out.angular[a] += m(a);
  }
}

void PdSolver::take_step(float dt, float time, StageClock& clock, PdStepStats& st) {
  const double h = dt;
  if (!system_.ready() || system_.h() != h) {
    factor(h);
    // The slots the state holds: a solver loaded mid-simulation steps as the one that stored it.
    if (!s_.contact_slots.empty() && !slots_stale_) {
      if (s_.contact_slot_weights.size() != s_.contact_slots.size())
        throw Error("PdSolver: the state's contact slots and their weights differ in number");
      for (uint32_t k : s_.contact_slots)
        if (k >= proxies_.size())
          throw Error("PdSolver: the state names contact slot point " + std::to_string(k) + " of " +
                      std::to_string(proxies_.size()));
      system_.set_contact_slots(s_.contact_slots, s_.contact_slot_weights);
      device_changes_ |= PdDeviceIterations::kMatrix;
    }
  }
  const std::size_t n = s_.size();
  const Vec3d g = to_vec3d(params_.gravity);
  const float t_end = float(time + h);

  // (x, v) => y: the nodes' inertial targets.
  x_.resize(Eigen::Index(n), 3);
  v_.resize(Eigen::Index(n), 3);
  y_.resize(Eigen::Index(n), 3);
  accel_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Vec3d& a = accel_[i];
    a = g;
    if (!fields_.empty())
      a += to_vec3d(fields_accel(fields_.data(), uint32_t(fields_.size()), to_vec3f(s_.x[i]), to_vec3f(s_.v[i])));
    x_.row(Eigen::Index(i)) = s_.x[i].transpose();
    v_.row(Eigen::Index(i)) = s_.v[i].transpose();
    y_.row(Eigen::Index(i)) = (s_.x[i] + h * s_.v[i] + h * h * a).transpose();
  }
  // Attached nodes' targets: where their collider takes them by the step's end.
  for (std::size_t i = 0; i < n; ++i) {
    const int32_t a = s_.attach.empty() ? -1 : s_.attach[i];
    if (a < 0 || pin_of_node_[i] < 0) continue;
    if (std::size_t(a) >= attach_colliders_.size())
      throw Error("PdSolver: node " + std::to_string(i) + " is attached to collider " + std::to_string(a) +
                  ", but only " + std::to_string(attach_colliders_.size()) + " are linked to attach to");
    const ColliderPose pose = collider_pose(attach_colliders_[std::size_t(a)], t_end);
    const Vec3f p = pose.center + pose.rotation * to_vec3f(s_.attach_local[i]);
    s_.pin_target[i] = to_vec3d(p);
    for (int k = 0; k < 3; ++k) constraints_.constraints()[std::size_t(pin_of_node_[i])].target[k] = s_.pin_target[i](k);
    device_changes_ |= PdDeviceIterations::kTargets;
  }
  times_.inertia = clock.lap();
  find_contacts(t_end, h);
  s_.contact_slots = system_.slot_proxies();
  s_.contact_slot_weights = system_.slot_weights();
  times_.collide = clock.lap();

  // Local-global iterations from y (iteration.h's passes, here or on the device).
  double local_s = 0, global_s = 0;
  double change = 0;
  PdMatrix x = y_;
  const int delay = 2;  // plain Jacobi sweeps before the acceleration starts
  const double rho = params_.chebyshev_rho, gamma = params_.relaxation;
  if (device_) {
    device_->load(system_.view(), device_changes_ | PdDeviceIterations::kContacts);
    device_changes_ = 0;
    change = device_->iterate(y_.data(), params_.iterations, rho, gamma, delay, x.data());
    global_s = clock.lap();
  } else {
    const PdView view = system_.view();
    const uint32_t nodes = uint32_t(n);
    p_.resize(Eigen::Index(constraints_.rows()), 3);
    next_.resize(Eigen::Index(n), 3);
    b_.resize(Eigen::Index(n), 3);
    prev_ = x;
    double omega = 1;
    for (int it = 0; it < params_.iterations; ++it) {
      pd_local(*exec_, view, x.data(), p_.data());
      local_s += clock.lap();
      if (params_.method == PdMethod::Cholesky) {
        pd_rhs(*exec_, view, y_.data(), p_.data(), x.data(), b_.data());
        system_.solve(b_, next_);
      } else {
        // Wang 2015: x_{k+1} = omega (gamma (xhat - x_k) + x_k - x_{k-1}) + x_{k-1}.
        omega = pd_chebyshev_omega(it, delay, rho, omega);
        pd_sweep(*exec_, view, y_.data(), p_.data(), x.data(), prev_.data(), omega, gamma, next_.data());
      }
      if (it + 1 == params_.iterations) change = std::sqrt(pd_max_move2(*exec_, nodes, next_.data(), x.data()));
      prev_.swap(x);
      x.swap(next_);
      global_s += clock.lap();
      if (probe_) probe_(it, x, y_);
    }
  }
  times_.local = local_s;
  times_.global = global_s;
  put_back(x, t_end);

  // Velocities; then friction against the colliders' surfaces at each
  // contact (in order: contacts sharing nodes see each other's change).
  for (std::size_t i = 0; i < n; ++i) v_.row(Eigen::Index(i)) = (x.row(Eigen::Index(i)) - x_.row(Eigen::Index(i))) / h;
  const std::vector<PdContact>& contacts = system_.contacts();
  const std::vector<double> push = contact_forces(x, h);
  std::vector<Vec3d> friction_impulse(contacts.size(), Vec3d::Zero());
  int touching = 0;
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    const PdContact& c = contacts[k];
    if (!(push[k] > 0)) continue;
    ++touching;
    // The point's mass as an impulse there moves it: 1 / sum w_a^2 / m_a
    // over its free nodes.
    const PdProxy& pr = proxies_[c.proxy];
    double inv_mass = 0;
    for (int a = 0; a < pr.count; ++a) {
      const std::size_t i = std::size_t(pr.node[std::size_t(a)]);
      if (!s_.pinned[i]) inv_mass += pr.w[std::size_t(a)] * pr.w[std::size_t(a)] / s_.mass[i];
    }
    if (inv_mass <= 0) continue;
    // Coulomb: the tangential velocity relative to the surface loses at most
    // mu times the normal impulse (push h) over the point's mass; a contact's
    // friction is the mean of its two surfaces' (as the bodies').
    const Collider& col = colliders_[std::size_t(c.collider)];
    const double mu = 0.5 * (double(col.friction) + friction_[c.proxy]);
    const Vec3d xp = system_.proxy_point(c.proxy, x), vp = system_.proxy_point(c.proxy, v_);
    const Vec3d cv = to_vec3d(collider_velocity(col, to_vec3f(xp), t_end));
    const Vec3d rel = vp - cv;
    const double vn = rel.dot(c.normal);
    Vec3d vt = rel - vn * c.normal;
    const double vt_len = vt.norm(), dv = mu * push[k] * h * inv_mass;
    vt *= vt_len > dv ? 1.0 - dv / vt_len : 0.0;
    const Vec3d change_p = cv + std::max(vn, 0.0) * c.normal + vt - vp;
    friction_impulse[k] = change_p / inv_mass;
    for (int a = 0; a < pr.count; ++a) {
      const std::size_t i = std::size_t(pr.node[std::size_t(a)]);
      if (!s_.pinned[i])
        v_.row(Eigen::Index(i)) += (pr.w[std::size_t(a)] / (s_.mass[i] * inv_mass)) * change_p.transpose();
    }
  }
  coulomb_bound(push, h);
  if (track_) measure_reactions(x, push, friction_impulse, h);
  // Damping; the state.
  const double decay = std::exp(-double(params_.damping) * h);
  StateCheck check;
  for (std::size_t i = 0; i < n; ++i) {
    s_.x[i] = x.row(Eigen::Index(i)).transpose();
    s_.v[i] = decay * v_.row(Eigen::Index(i)).transpose();
    check.add(s_.x[i].allFinite() && s_.v[i].allFinite(), float(s_.v[i].norm()));
  }
  times_.velocity = clock.lap();
  max_speed_ = check.max_speed;
  st.iterations = params_.iterations;
  st.contacts = touching;
  st.last_change = change;
  check.report(st);
}

PdFrameStats pd_advance_frame(PdSolver& solver, double time, double frame_dt, int frame,
                              const std::function<void(int, int)>& progress) {
  // A node moving ten metres in one step has blown up.
  return advance_equal_frame<PdFrameStats>(solver, time, frame_dt, frame, "position or velocity", 10.0f, progress);
}

}  // namespace eddy
