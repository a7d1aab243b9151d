#include "eddy/core/rigid/coupling.h"

#include <algorithm>

#include "eddy/core/error.h"
#include "eddy/core/rigid/contact.h"

namespace eddy {

namespace {
Vec3d to_d(const double* a) { return Vec3d(a[0], a[1], a[2]); }
}  // namespace

Collider body_collider(const Bodies& B, std::size_t i, double time) {
  const BodyGeometry& g = B.geometry[i];
  Collider c;
  switch (g.shape) {
    case BodyShape::Box:
      c.type = ShapeType::Box;
      c.size = to_vec3f(g.half);
      break;
    case BodyShape::Sphere:
      c.type = ShapeType::Sphere;
      c.size = vec3(float(g.radius), 0.0f, 0.0f);
      break;
    case BodyShape::Capsule:
      c.type = ShapeType::Capsule;
      c.size = vec3(float(g.radius), float(g.half_height), 0.0f);
      break;
    case BodyShape::Mesh: c = g.mesh->grid; break;  // its samples, owned by the shape
  }
  const Mat3d R = B.q[i].toRotationMatrix();
  const Mat3f Rf = {{float(R(0, 0)), float(R(0, 1)), float(R(0, 2))},
                    {float(R(1, 0)), float(R(1, 1)), float(R(1, 2))},
                    {float(R(2, 0)), float(R(2, 1)), float(R(2, 2))}};
  set_motion(c, to_vec3f(B.x[i]), Rf, to_vec3f(B.v[i]), to_vec3f(B.w[i]), time);
  c.friction = float(B.friction[i]);
  c.body = 1;
  return c;
}

BodyCoupling::BodyCoupling(SolverBase& liquid, const RigidParams& p, const Bodies& bodies,
                           std::vector<Collider> colliders)
    : liquid_(liquid), rigid_(p) {
  if (!liquid.measures_reactions())
    throw Error("two-way coupling with bodies: this solver does not measure the forces on its colliders");
  rigid_.load(bodies);
  set_colliders(std::move(colliders));
  liquid_.track_reactions(true);
  liquid_.set_partner(this);
}

BodyCoupling::~BodyCoupling() {
  liquid_.set_partner(nullptr);
  liquid_.track_reactions(false);
}

void BodyCoupling::set_colliders(std::vector<Collider> colliders) {
  scene_ = std::move(colliders);
  std::vector<Collider> walls = scene_;
  for (const Collider& c : liquid_.own_walls()) walls.push_back(c);
  rigid_.set_colliders(walls);
}

void BodyCoupling::place(double time) {
  const Bodies& B = rigid_.bodies();
  all_ = scene_;
  for (std::size_t i = 0; i < B.size(); ++i) all_.push_back(body_collider(B, i, time));
  liquid_.set_colliders(all_);
}

void BodyCoupling::begin_frame(int frame) {
  frame_ = frame;
  stats_ = CouplingFrameStats{};
}

void BodyCoupling::before_step(double, double time) { place(time); }

double BodyCoupling::max_speed() const {
  const Bodies& B = rigid_.bodies();
  double v = 0;
  for (std::size_t i = 0; i < B.size(); ++i) v = std::max(v, body_surface_speed(B, i));
  return v;
}

void BodyCoupling::after_step(double dt, double time) {
  uint64_t lost = 0;
  liquid_.reactions(reactions_, &lost);
  stats_.lost += lost;
  const Bodies& B = rigid_.bodies();
  const std::size_t n = B.size(), first = scene_.size();
  force_.assign(n, Vec3d::Zero());
  torque_.assign(n, Vec3d::Zero());
  for (std::size_t i = 0; i < n && first + i < reactions_.size(); ++i) {
    const ColliderImpulse& r = reactions_[first + i];
    const Vec3d J = to_d(r.linear);
    // The moment about the body's centre where the liquid met it (the
    // collider's pose at the step's end), not about the origin.
    const Vec3d c = B.x[i] + B.v[i] * dt;
    const Vec3d L = to_d(r.angular) - c.cross(J);
    force_[i] = -J / dt;
    torque_[i] = -L / dt;
    stats_.max_force = std::max(stats_.max_force, force_[i].norm());
  }
  rigid_.set_external_wrench(force_, torque_);
  const RigidFrameStats s = rigid_advance_frame(rigid_, time, dt, frame_);
  RigidFrameStats& f = stats_.rigid;
  f.steps += s.steps;
  f.max_contacts = std::max(f.max_contacts, s.max_contacts);
  f.max_iterations = std::max(f.max_iterations, s.max_iterations);
  f.unconverged += s.unconverged;
  f.penetration = std::max(f.penetration, s.penetration);
  f.max_speed = std::max(f.max_speed, s.max_speed);
}

}  // namespace eddy
