#pragma once
// The rigid-body solver: bodies falling, tumbling and stacking under
// gravity, in frictional contact with each other and with colliders, one
// SAP problem per step (sap.h). A step reads like the method:
//
//   detect     (x, q) => contacts within the margin          (contact.h)
//   free       (v, w) => (v*, w*): gravity, torque-free rotation
//              by the implicit midpoint rule (bodies.h)
//   solve      (v*, contacts) => (v, w): SAP's convex problem
//   integrate  (x, q, v, w) => (x + h v, q turned by h w)
//
// Positions move with the step's end velocities (symplectic Euler, as SAP's
// compliant contact assumes: penetration is predicted at the step's end).
#include <functional>
#include <vector>

#include <algorithm>

#include "eddy/core/param_table.h"
#include "eddy/core/rigid/bodies.h"
#include "eddy/core/rigid/contact.h"
#include "eddy/core/rigid/sap.h"
#include "eddy/core/solver.h"

namespace eddy {

struct RigidParams {
  Vec3f gravity{0.0f, -9.81f, 0.0f};  // m/s^2
  float time_step = 1e-3f;            // s, the longest step; a frame takes equal steps of at most this
  float contact_stiffness = 1e8f;     // N/m, k of each contact point (beyond what the step resolves: near-rigid)
  float dissipation_time = 0.02f;     // s, tau of the Kelvin-Voigt contact
  float friction_regularisation = 1e-3f;  // sigma: stiction creeps at about sigma times the free speed
  float near_rigid = 0.4f;            // beta: contact no stiffer than the step resolves (Castro et al.: 1)
  float contact_margin = 0.005f;      // m, contacts are made this far before touching
  float tolerance = 1e-6f;            // SAP's relative tolerance on the momentum residual
  int max_iterations = 100;           // SAP's Newton iterations per step
  SapModel friction_model = SapModel::Sap;  // sap, or lagged (sap.h)
};

const ParamTable<RigidParams>& rigid_param_table();
// Checks the table's ranges; throws eddy::Error naming the parameter.
void validate(const RigidParams& p);

struct RigidStepStats {
  float dt = 0.0f;           // s
  int contacts = 0;          // contact points in the problem
  int iterations = 0;        // SAP Newton iterations
  bool converged = true;     // SAP met its tolerance
  double penetration = 0;    // m, deepest at the step's start
  float max_speed = 0.0f;    // m/s, fastest body's centre of mass after the step
  uint32_t nonfinite = 0;    // bodies with a non-finite state
};

struct RigidStageTimes {
  double detect = 0, free = 0, solve = 0, integrate = 0;
};

class RigidSolver final : public Solver<RigidParams, RigidStepStats, RigidStageTimes> {
 public:
  explicit RigidSolver(const RigidParams& p);
  const char* backend() const override { return "cpu"; }
  // Takes the bodies as the state.
  void load(const Bodies& bodies);
  const Bodies& bodies() const { return bodies_; }
  void store(Bodies& out) const { out = bodies_; }
  void set_colliders(const std::vector<Collider>& colliders) override { colliders_ = colliders; }
  // Fields act on each body at its centre of mass, with its velocity there.
  void set_force_fields(const std::vector<ForceField>& fields) override { fields_ = fields; }
  // Animated parameters: every step reads its parameters afresh.
  void retune(const RigidParams& p) override;
  // Forces (N, world) and torques (N m, about each centre of mass, world
  // axes) on the bodies over the following steps, besides gravity and
  // contact (a liquid's push in a coupled step); empty vectors: none.
  void set_external_wrench(std::vector<Vec3d> force, std::vector<Vec3d> torque);
  std::size_t size() const override { return bodies_.size(); }
  std::size_t memory_bytes() const override;
  RigidStageTimes stage_times() const override { return times_; }
  // The last step's contacts, their impulses (N s, contact frame t1, t2, n)
  // and regularisation.
  const std::vector<BodyContact>& contacts() const { return contacts_; }
  const std::vector<Vec3d>& impulses() const { return gamma_; }
  const std::vector<SapRegularisation>& regularisation() const { return reg_; }
  const SapStats& sap_stats() const { return sap_; }
  // SAP's linear systems by the 6x6-block Cholesky (the default) or by
  // Eigen's scalar LDLT, the reference (SapParams::block_factorisation).
  void set_block_factorisation(bool on) { block_factorisation_ = on; }
  // Each island of bodies in contact solved apart (the default), or all
  // bodies in one problem, the reference (SapParams::islands).
  void set_islands(bool on) { islands_ = on; }

 protected:
  void take_step(float dt, float time, StageClock& clock, RigidStepStats& s) override;

 private:
  Bodies bodies_;
  std::vector<Collider> colliders_;
  std::vector<ForceField> fields_;
  std::vector<BodyContact> contacts_;
  std::vector<Vec3d> gamma_;
  std::vector<SapRegularisation> reg_;
  SapStats sap_;
  SapProblem problem_;
  std::vector<Vec3d> w_end_, w_mid_;
  std::vector<Vec3d> force_, torque_;  // external wrench per body (set_external_wrench)
  Eigen::VectorXd v_;
  RigidStageTimes times_;
  bool block_factorisation_ = true;
  bool islands_ = true;
};

struct RigidFrameStats {
  int steps = 0;
  int max_contacts = 0;
  int max_iterations = 0;      // SAP iterations, most in one step
  int unconverged = 0;         // steps where SAP stopped short of its tolerance
  double penetration = 0;      // m, deepest over the frame
  float max_speed = 0.0f;      // m/s
  void add(const RigidStepStats& s) {
    max_contacts = std::max(max_contacts, s.contacts);
    max_iterations = std::max(max_iterations, s.iterations);
    unconverged += s.converged ? 0 : 1;
    penetration = std::max(penetration, s.penetration);
    max_speed = std::max(max_speed, s.max_speed);
  }
};

// Advances one frame of frame_dt seconds from simulation time `time` in
// equal steps of at most time_step, calling progress(step, steps) after
// each. Throws eddy::Error naming `frame` when a body's state turns
// non-finite.
RigidFrameStats rigid_advance_frame(RigidSolver& solver, double time, double frame_dt, int frame,
                                    const std::function<void(int step, int steps)>& progress = {});

}  // namespace eddy
