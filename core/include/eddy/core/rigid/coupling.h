#pragma once
// Rigid bodies coupled two ways with a particle solver (a liquid), stepped
// in the liquid's own steps (docs/architecture.md, "Coupling"):
//   before a liquid step   the bodies become colliders of the liquid, posed
//                          where they are, moving with their linear and
//                          angular velocity (body_collider);
//   the liquid steps       its boundary handling pushes the particles off the
//                          bodies' surfaces and measures, per collider, the
//                          impulse it gave them (SolverBase::reactions);
//   after it               each body takes the opposite impulse as a force
//                          and torque over the step and steps (SAP, in steps
//                          of at most RigidParams::time_step) against the
//                          scene's colliders and the other bodies.
// The liquid's momentum change besides gravity is the sum of its colliders'
// impulses; what it took from a body, the body lost: momentum is accounted
// for across the pair (tests/validation/coupling_test.cpp).
#include <vector>

#include "eddy/core/rigid/rigid.h"

namespace eddy {

// Body i as a collider of a particle solver at simulation time `time`: its
// shape, placed so that collider_pose(c, time) is the body's pose, moving
// at its velocity and angular velocity, with its friction.
Collider body_collider(const Bodies& bodies, std::size_t i, double time);

struct CouplingFrameStats {
  RigidFrameStats rigid;    // over the frame's body steps
  double max_force = 0;     // N, largest force of the liquid on one body in one step
  uint64_t lost = 0;        // reaction contributions the liquid could not attribute (0 in a sound setup)
};

class BodyCoupling final : public StepPartner {
 public:
  // Steps `bodies` with `liquid` (which must measure reactions) from now on,
  // until destroyed. `colliders` is the scene: the liquid meets it and the
  // bodies, the bodies meet it, the liquid's own walls (MPM's domain box,
  // SolverBase::own_walls) and each other.
  BodyCoupling(SolverBase& liquid, const RigidParams& p, const Bodies& bodies, std::vector<Collider> colliders);
  ~BodyCoupling() override;
  BodyCoupling(const BodyCoupling&) = delete;
  BodyCoupling& operator=(const BodyCoupling&) = delete;

  // A new scene (colliders may move from frame to frame).
  void set_colliders(std::vector<Collider> colliders);
  // Gives the liquid the scene and the bodies posed at `time` (before its
  // load(), which may look at its colliders).
  void place(double time);
  // The frame about to be stepped (named in errors), and its statistics reset.
  void begin_frame(int frame);
  const CouplingFrameStats& frame_stats() const { return stats_; }
  RigidSolver& rigid() { return rigid_; }
  const RigidSolver& rigid() const { return rigid_; }
  // The last step's impulses the liquid received: the scene's colliders
  // first, then one per body.
  const std::vector<ColliderImpulse>& last_reactions() const { return reactions_; }

  void before_step(double dt, double time) override;
  void after_step(double dt, double time) override;
  // The fastest point of a body's surface, m/s.
  double max_speed() const override;

 private:
  SolverBase& liquid_;
  RigidSolver rigid_;
  std::vector<Collider> scene_, all_;
  std::vector<ColliderImpulse> reactions_;
  std::vector<Vec3d> force_, torque_;
  CouplingFrameStats stats_;
  int frame_ = 0;
};

}  // namespace eddy
