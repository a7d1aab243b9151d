// The rigid-body solver's step and frame driver (rigid.h).
#include "eddy/core/rigid/rigid.h"

#include <algorithm>
#include <cmath>

#include "eddy/core/frame_steps.h"

namespace eddy {

const ParamTable<RigidParams>& rigid_param_table() {
  static const ParamTable<RigidParams> table = [] {
    ParamTable<RigidParams> t("RigidBody");
    equal_step_fields(t)
        .real("contact_stiffness", &RigidParams::contact_stiffness, 1.0, 1e12, "N/m",
              "Stiffness k of each contact point (Kelvin-Voigt) between surfaces without their own (a body's "
              "contact_stiffness). Beyond what the step resolves, contact is as stiff as the step allows (near_rigid).")
        .real("dissipation_time", &RigidParams::dissipation_time, 0.0, 10.0, "s",
              "Dissipation time scale tau of the contact, the force -k (phi + tau dphi/dt), between surfaces without "
              "their own (a body's dissipation_time).")
        .real("friction_regularisation", &RigidParams::friction_regularisation, 1e-6, 1.0, "",
              "sigma of SAP's regularised friction: a body in stiction creeps at about sigma times the speed one "
              "step of its tangential load would give it (Castro et al. 2022: 1e-3).")
        .real("near_rigid", &RigidParams::near_rigid, 0.01, 100.0, "",
              "beta of SAP's near-rigid bound: contact compliance stays at or above beta^2 / (4 pi^2) times the "
              "contact's effective inverse mass, which keeps stiff contact well conditioned. An impact at speed v "
              "sinks about v h beta / (2 pi) into a contact (Castro et al. 2022 use 1; 0.4 here: piles of boxes "
              "and pebbles converge in fewer Newton iterations and sink 0.4 times as deep).")
        .real("contact_margin", &RigidParams::contact_margin, 0.0, 10.0, "m",
              "Contacts enter the problem this far before touching (plus the distance a step covers).")
        .real("tolerance", &RigidParams::tolerance, 1e-12, 1e-1, "",
              "SAP's relative tolerance on the momentum residual.")
        .integer("max_iterations", &RigidParams::max_iterations, 1, 10000, "",
                 "Most Newton iterations of SAP per step; a step that stops short is counted in the report.")
        .choice("friction_model", &RigidParams::friction_model, kSapModelNames,
                "sap: the cone projection of SAP, normal and friction together (a sliding body glides about "
                "mu |v_t| (h + tau) above the surface); lagged: the friction bound frozen at the normal impulse "
                "the step starts from, normal and friction projected apart (no gliding; the bound one step late).");
    return t;
  }();
  return table;
}

void validate(const RigidParams& p) { rigid_param_table().check(p); }

RigidSolver::RigidSolver(const RigidParams& p) : Solver(p) { validate(p); }

void RigidSolver::retune(const RigidParams& p) {
  validate(p);
  params_ = p;
}

void RigidSolver::load(const Bodies& bodies) {
  bodies_ = bodies;
  force_.clear();
  torque_.clear();
  max_speed_ = 0;
  for (std::size_t i = 0; i < bodies_.size(); ++i) max_speed_ = std::max(max_speed_, float(bodies_.v[i].norm()));
}

std::size_t RigidSolver::memory_bytes() const {
  const std::size_t n = bodies_.size();
  return n * (sizeof(BodyGeometry) + 9 * sizeof(double) + 4 * sizeof(Vec3d) + sizeof(Quatd) + 2 * sizeof(Vec3d)) +
         contacts_.capacity() * (sizeof(BodyContact) + sizeof(SapContact) + sizeof(Vec3d));
}

namespace {

// An orthonormal frame (t1, t2, n) with n as its last column.
Mat3d contact_frame(const Vec3d& n) {
  const Vec3d a = std::abs(n.x()) < 0.9 ? Vec3d::UnitX() : Vec3d::UnitY();
  const Vec3d t1 = n.cross(a).normalized();
  Mat3d f;
  f.col(0) = t1;
  f.col(1) = n.cross(t1);
  f.col(2) = n;
  return f;
}

}  // namespace

void RigidSolver::set_external_wrench(std::vector<Vec3d> force, std::vector<Vec3d> torque) {
  if ((!force.empty() && force.size() != bodies_.size()) || (!torque.empty() && torque.size() != bodies_.size()))
    throw Error("RigidSolver: an external wrench needs one force and torque per body (or none)");
  force_ = std::move(force);
  torque_ = std::move(torque);
}

void RigidSolver::take_step(float dt, float time, StageClock& clock, RigidStepStats& s) {
  const double h = dt;
  Bodies& B = bodies_;
  const std::size_t n = B.size();

  // (x, q) => contacts: within the margin plus what a step of the fastest
  // body's surface can close.
  double reach = 0;
  for (std::size_t i = 0; i < n; ++i) reach = std::max(reach, body_surface_speed(B, i));
  find_contacts(B, colliders_, time, params_.contact_margin + 2.0 * h * reach, contacts_);
  times_.detect = clock.lap();

  // (v, w) => (v*, w*): gravity, and the torque-free rotation in body axes.
  const Vec3d g = to_vec3d(params_.gravity);
  SapProblem& pb = problem_;
  pb.h = h;
  pb.mass = B.mass;
  pb.inertia.resize(n);
  pb.v_star.resize(Eigen::Index(6 * n));
  // Newton starts from the last step's velocities: a body at rest on its
  // contacts is at (or near) the answer already.
  pb.v_guess.resize(Eigen::Index(6 * n));
  w_end_.resize(n);
  w_mid_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Mat3d R = B.q[i].toRotationMatrix();
    pb.inertia[i] = R * B.inertia[i].asDiagonal() * R.transpose();
    w_end_[i] = free_rotation_step(B.inertia[i], R.transpose() * B.w[i], h, &w_mid_[i]);
    const Vec3d field =
        to_vec3d(fields_accel(fields_.data(), uint32_t(fields_.size()), to_vec3f(B.x[i]), to_vec3f(B.v[i])));
    pb.v_star.segment<3>(Eigen::Index(6 * i)) = B.v[i] + h * (g + field);
    pb.v_guess.segment<3>(Eigen::Index(6 * i)) = B.v[i];
    pb.v_guess.segment<3>(Eigen::Index(6 * i + 3)) = B.w[i];
    pb.v_star.segment<3>(Eigen::Index(6 * i + 3)) = R * w_end_[i];
    if (i < force_.size()) pb.v_star.segment<3>(Eigen::Index(6 * i)) += (h / B.mass[i]) * force_[i];
    if (i < torque_.size())
      pb.v_star.segment<3>(Eigen::Index(6 * i + 3)) += h * pb.inertia[i].ldlt().solve(torque_[i]);
  }
  times_.free = clock.lap();

  // (v*, contacts) => (v, w)
  pb.contacts.resize(contacts_.size());
  double penetration = 0;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const BodyContact& c = contacts_[k];
    SapContact& sc = pb.contacts[k];
    sc.a = c.a;
    sc.b = c.b;
    sc.frame = contact_frame(c.n);
    sc.ra = c.p - B.x[std::size_t(c.a)];
    sc.rb = c.b >= 0 ? Vec3d(c.p - B.x[std::size_t(c.b)]) : Vec3d::Zero();
    sc.bias = c.b >= 0 ? Vec3d::Zero() : Vec3d(-(sc.frame.transpose() * c.u));
    sc.phi0 = c.phi;
    // A contact's friction is the mean of its two surfaces'; its stiffness
    // and dissipation combine as contact_parameters says.
    const std::size_t a = std::size_t(c.a), b = std::size_t(c.b);
    const Collider* wall = c.b >= 0 ? nullptr : &colliders_[std::size_t(c.collider)];
    const double mu_b = wall ? double(wall->friction) : B.friction[b];
    const double k_b = wall ? double(wall->stiffness) : B.stiffness[b];
    const double tau_b = wall ? double(wall->dissipation) : B.dissipation[b];
    sc.mu = 0.5 * (B.friction[a] + mu_b);
    const ContactParameters kc = contact_parameters(B.stiffness[a], B.dissipation[a], k_b, tau_b,
                                                    params_.contact_stiffness, params_.dissipation_time);
    sc.stiffness = kc.stiffness;
    sc.tau = kc.tau;
    penetration = std::max(penetration, -c.phi);
  }
  SapParams sp;
  sp.sigma = params_.friction_regularisation;
  sp.beta = params_.near_rigid;
  sp.rel_tolerance = params_.tolerance;
  sp.max_iterations = params_.max_iterations;
  sp.model = params_.friction_model;
  sp.block_factorisation = block_factorisation_;
  sp.islands = islands_;
  sap_ = sap_solve(pb, sp, v_, &gamma_, &reg_);
  times_.solve = clock.lap();

  // (x, q, v, w) => (x + h v, q turned by h w). The contacts' (and an
  // external torque's) change of w adds to the free rotation's midpoint velocity, in body axes at the
  // step's start; the end velocity is carried into the new body axes.
  StateCheck check;
  for (std::size_t i = 0; i < n; ++i) {
    const Mat3d R = B.q[i].toRotationMatrix();
    // Change of w beyond the free rotation: the contacts' and the external torque's.
    const Vec3d dw = R.transpose() * v_.segment<3>(Eigen::Index(6 * i + 3)) - w_end_[i];
    B.v[i] = v_.segment<3>(Eigen::Index(6 * i));
    B.x[i] += h * B.v[i];
    B.q[i] = rotate_body(B.q[i], h * (w_mid_[i] + dw));
    B.w[i] = B.q[i] * (w_end_[i] + dw);
    check.add(B.x[i].allFinite() && B.v[i].allFinite() && B.w[i].allFinite() && B.q[i].coeffs().allFinite(),
              float(B.v[i].norm()));
  }
  times_.integrate = clock.lap();
  max_speed_ = check.max_speed;
  s.contacts = int(contacts_.size());
  s.iterations = sap_.iterations;
  s.converged = sap_.converged;
  s.penetration = penetration;
  check.report(s);
}

RigidFrameStats rigid_advance_frame(RigidSolver& solver, double time, double frame_dt, int frame,
                                    const std::function<void(int, int)>& progress) {
  // A body moving a kilometre in one step has blown up.
  return advance_equal_frame<RigidFrameStats>(solver, time, frame_dt, frame, "pose or velocity", 1000.0f, progress);
}

}  // namespace eddy
