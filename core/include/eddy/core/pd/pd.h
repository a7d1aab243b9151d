#pragma once
// The Projective Dynamics solver of soft bodies and cloth (system.h has the
// method). A step reads like it:
//
//   inertia   (x, v) => y = x + h v + h^2 (g + fields)
//   iterate   local: project every constraint at x (parallel)
//             global: solve (M/h^2 + G^T W G) x = M/h^2 y + G^T W p
//             (Cholesky back-substitution, or a Jacobi sweep with
//             Chebyshev acceleration)
//   contacts  before the iterations: each node headed within the margin of
//             a collider is held on its side of the surface's tangent
//             plane (a constraint of the step, weight contact_weight times
//             the node's diagonal; its force is the penalty's). The weight
//             sits on the matrix for every node near a surface (a contact
//             slot), touching or not, so contacts made and broken cost no
//             refactorisation; slots are handed out again only when a node
//             touches without one.
//   velocity  v = (x - x_t) / h, with Coulomb friction against the
//             colliders' surface velocity bounded by each contact's normal
//             impulse, and optional damping; nodes that went through a
//             surface the contacts missed are put back on it
//
// The matrix is factored when the solver loads its state or when the step,
// the method or the pins' stiffness changes, and numerically again when a
// point touches without a contact slot or contact_weight changes; animated
// gravity, iterations and damping take no refactorisation.
#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "eddy/core/param_table.h"
#include "eddy/core/pd/system.h"
#include "eddy/core/solver.h"

namespace eddy {

class CpuExecutor;

struct PdParams {
  Vec3f gravity{0.0f, -9.81f, 0.0f};  // m/s^2
  float time_step = 1.0f / 240.0f;    // s, the longest step; a frame takes equal steps of at most this
  int iterations = 10;                // local-global iterations per step
  PdMethod method = PdMethod::Cholesky;
  float chebyshev_rho = 0.9f;         // Chebyshev: the Jacobi iteration's estimated spectral radius
  float relaxation = 0.9f;            // Chebyshev: under-relaxation gamma of each Jacobi sweep
  float damping = 0.0f;               // 1/s, velocities decay as exp(-damping t) besides implicit Euler's own
  float collision_margin = 0.002f;    // m, the surfaces keep this far outside the colliders
  float pin_stiffness = 1e6f;         // N/m, weight of each pin
  float contact_weight = 1.0f;        // a contact's weight, in units of its point's nodes' diagonal (M/h^2 + stiffness)
};

const ParamTable<PdParams>& pd_param_table();
void validate(const PdParams& p);
// The iterations run on a device only with method chebyshev (Cholesky
// factors on the CPU): throws eddy::Error saying so otherwise.
void require_device_method(const PdParams& p);

struct PdStepStats {
  float dt = 0.0f;
  int iterations = 0;
  int contacts = 0;          // nodes in contact with a collider at the step's end
  double last_change = 0;    // m, largest node move in the last iteration
  float max_speed = 0.0f;    // m/s
  uint32_t nonfinite = 0;    // nodes with a non-finite state
};

struct PdStageTimes {
  double inertia = 0, local = 0, global = 0, collide = 0, velocity = 0;
};

class PdSolver final : public Solver<PdParams, PdStepStats, PdStageTimes> {
 public:
  // threads <= 0: every thread the machine has.
  PdSolver(const PdParams& p, int threads = 0);
  ~PdSolver() override;
  const char* backend() const override { return device_ ? "cuda" : "cpu"; }
  // Runs the Chebyshev iterations on a device (gpu::make_pd_iterations_cuda);
  // the rest of each step (contacts, friction, velocities) stays on the CPU.
  // Needs method chebyshev.
  void set_device_iterations(std::unique_ptr<PdDeviceIterations> d);
  // Takes the soft bodies as the state; builds the constraints and factors
  // the matrix.
  void load(const SoftBodies& s);
  const SoftBodies& state() const { return s_; }
  void store(SoftBodies& out) const { out = s_; }
  void set_colliders(const std::vector<Collider>& colliders) override { colliders_ = colliders; }
  void set_force_fields(const std::vector<ForceField>& fields) override { fields_ = fields; }
  // The colliders that attached nodes move with (SoftBodies::attach_to),
  // placed for the steps to come (animated ones each frame).
  void set_attach_colliders(const std::vector<Collider>& colliders) { attach_colliders_ = colliders; }
  void retune(const PdParams& p) override;
  // Two-way coupling with rigid bodies (core/rigid/coupling.h): the impulse
  // each collider gave the soft bodies over the last step (an object's
  // momentum change beyond gravity, fields and pins, shared among its
  // contacts by their normal force; with pins, the contacts' own impulses).
  bool measures_reactions() const override { return true; }
  void track_reactions(bool on) override { track_ = on; }
  void reactions(std::vector<ColliderImpulse>& out, uint64_t* lost = nullptr) const override {
    out = reactions_;
    out.resize(colliders_.size());
    if (lost) *lost = 0;
  }
  std::size_t size() const override { return s_.size(); }
  std::size_t memory_bytes() const override;
  PdStageTimes stage_times() const override { return times_; }
  const PdConstraints& constraints() const { return constraints_; }
  const PdSystem& system() const { return system_; }
  // Seconds the last factorisation took (0 for Chebyshev's diagonal).
  double factor_seconds() const { return system_.factor_seconds(); }
  // Called after each iteration of a step with the iteration's x and the
  // step's y (tests: monotone decrease, convergence).
  void set_iteration_probe(std::function<void(int, const PdMatrix& x, const PdMatrix& y)> f) { probe_ = std::move(f); }

 protected:
  void take_step(float dt, float time, StageClock& clock, PdStepStats& s) override;

 private:
  void factor(double h);
  // Contacts for the step, from the nodes' inertial targets y at time t.
  void find_contacts(float t, double h);
  // Points that ended inside a collider other than the one a contact holds them off, put back on it.
  int put_back(PdMatrix& x, float t);
  void move_proxy(uint32_t k, const Vec3d& d, PdMatrix& x) const;
  // Per object: the one collider its contacts (push > 0) touch, when it
  // touches just one and no pin holds it (its momentum change is then that
  // collider's impulse); -1 otherwise.
  std::vector<int64_t> sole_collider(const std::vector<double>& push) const;
  // Object o's momentum change over the step beyond gravity and fields (v_: the new velocities).
  Vec3d object_impulse(std::size_t o, double h) const;
  // Each contact's normal force (N) for friction, after the iterations
  // (v_: the step's new velocities).
  std::vector<double> contact_forces(const PdMatrix& x, double h) const;
  // Gives back the sideways momentum an object's contacts with one collider
  // took beyond Coulomb's cone (v_ after friction).
  void coulomb_bound(const std::vector<double>& push, double h);
  // The colliders' impulses on the soft bodies this step (track_reactions).
  void measure_reactions(const PdMatrix& x, const std::vector<double>& push,
                         const std::vector<Vec3d>& friction_impulse, double h);

  SoftBodies s_;
  std::unique_ptr<CpuExecutor> exec_;
  PdConstraints constraints_;
  PdSystem system_;
  std::vector<Collider> colliders_;
  std::vector<ForceField> fields_;
  std::vector<Collider> attach_colliders_;
  bool track_ = false;
  bool slots_stale_ = false;  // contact_weight changed: the slots are handed out again
  std::vector<ColliderImpulse> reactions_;
  std::vector<int32_t> pin_of_node_;  // per node: its pin constraint, -1 none
  PdMatrix x_, v_, y_, p_, b_, prev_, next_;  // x_, v_: the step's start
  struct ProxySeen {  // find_contacts: a point's nearest surface where it is headed
    double nearest = 0, travel = 0;
    PdContact contact;
  };
  std::vector<ProxySeen> proxies_seen_;
  std::vector<char> inside_, moved_node_;  // put_back: points found inside a collider, nodes moved
  std::vector<PdProxy> proxies_;     // the points that meet colliders (surface points on their nodes)
  std::vector<int32_t> in_contact_;  // per proxy: its contact in system_.contacts(), -1 none
  std::vector<double> friction_;     // per proxy: its object's Coulomb coefficient
  std::vector<uint32_t> proxy_object_;  // per proxy: its object
  std::vector<Vec3d> accel_;         // per node: gravity and fields this step
  PdStageTimes times_;
  std::function<void(int, const PdMatrix&, const PdMatrix&)> probe_;
  std::unique_ptr<PdDeviceIterations> device_;
  unsigned device_changes_ = PdDeviceIterations::kStructure;  // what the device has not seen yet
};

struct PdFrameStats {
  int steps = 0;
  int max_contacts = 0;
  double last_change = 0;  // m, largest over the frame's steps
  float max_speed = 0.0f;
  void add(const PdStepStats& s) {
    max_contacts = std::max(max_contacts, s.contacts);
    last_change = std::max(last_change, s.last_change);
    max_speed = std::max(max_speed, s.max_speed);
  }
};

// Advances one frame of frame_dt seconds from `time` in equal steps of at
// most time_step. Throws eddy::Error naming `frame` when the state turns
// non-finite.
PdFrameStats pd_advance_frame(PdSolver& solver, double time, double frame_dt, int frame,
                              const std::function<void(int step, int steps)>& progress = {});

}  // namespace eddy
