#pragma once
// What every particle solver's interface shares, whatever its method: its
// parameters, the colliders it meets, one step of dt seconds from a
// simulation time, its size and memory, the timings of its stages and the
// fastest particle of its state. A method's interface (PbfSolver,
// SphSolver, MpmSolver) derives from Solver<...> and adds what is its own
// (load/store, suggest_dt, ...); each backend implements that interface.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/error.h"
#include "eddy/core/force_field.h"

namespace eddy {

// The step explicit viscosity allows over a length h: dt <= h^2 rho / (8 mu)
// (mu dynamic viscosity, Pa s; the diffusion number 1/8 of a 3D stencil).
// Without viscosity, no bound.
inline float viscous_dt_limit(float h, float density, float mu) {
  return mu > 0 ? 0.125f * h * h * density / mu : std::numeric_limits<float>::infinity();
}

// Times a step's stages one after another: each lap() is the seconds since
// the previous lap (the first: since the clock was made).
class StageClock {
 public:
  using Clock = std::chrono::steady_clock;
  double lap() {
    const Clock::time_point now = Clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  Clock::time_point last_ = Clock::now();
};

// The impulse one collider's surface gave a solver's particles over a step:
// `linear` (N s) and its moment about the world origin (N m s), summed in
// double. What the collider received is the opposite.
struct ColliderImpulse {
  double linear[3] = {0, 0, 0};
  double angular[3] = {0, 0, 0};
};

// Something stepped together with a solver, in the same steps (bodies coupled
// two ways with a liquid, core/rigid/coupling.h): called before each step
// (to place what the solver meets) and after it (to answer what the solver
// did), also when the solver's own state is empty.
class StepPartner {
 public:
  virtual ~StepPartner() = default;
  virtual void before_step(double dt, double time) = 0;
  virtual void after_step(double dt, double time) = 0;
  // The fastest any surface the partner places among the particles moves,
  // m/s: a solver choosing its own step keeps it within its CFL condition.
  virtual double max_speed() const { return 0.0; }
};

// What every solver offers whatever its parameters: the colliders it meets
// and, where the method supports it, the impulses they gave its particles
// (two-way coupling), and the partner stepped with it.
class SolverBase {
 public:
  virtual ~SolverBase() = default;
  virtual void set_colliders(const std::vector<Collider>& colliders) = 0;
  // Force fields applied besides gravity from the next step on (force_field.h).
  virtual void set_force_fields(const std::vector<ForceField>& fields) = 0;
  // Whether the method measures its colliders' impulses (reactions()).
  virtual bool measures_reactions() const { return false; }
  // With `on`, each step sums per collider the impulse its surface gave the
  // particles (the method's boundary handling: wall pressure, projection,
  // friction), read with reactions() after the step.
  virtual void track_reactions(bool on) { (void)on; }
  // The last step's impulse per collider (one entry per collider, in the
  // order given to set_colliders); `lost` counts contributions that could
  // not be attributed (a particle near more colliders than it keeps slots
  // for), 0 in a sound setup.
  virtual void reactions(std::vector<ColliderImpulse>& out, uint64_t* lost = nullptr) const {
    out.assign(0, ColliderImpulse{});
    if (lost) *lost = 0;
  }
  // Walls the method keeps its particles in by itself, besides its
  // colliders (MPM's domain box): bodies stepped with it meet them as
  // colliders (BodyCoupling). None by default.
  virtual std::vector<Collider> own_walls() const { return {}; }
  void set_partner(StepPartner* p) { partner_ = p; }
  StepPartner* partner() const { return partner_; }
  // Parameters that change with time (animated ones): called at the start
  // of every step with its simulation time, to give the solver its
  // parameters for that step (Solver::retune). Empty: none.
  void set_schedule(std::function<void(double time)> f) { schedule_ = std::move(f); }

 protected:
  StepPartner* partner_ = nullptr;
  std::function<void(double)> schedule_;
};

template <class Params, class StepStats, class StageTimes>
class Solver : public SolverBase {
 public:
  using ParamsType = Params;
  using StageTimesType = StageTimes;
  // "cpu" or "cuda".
  virtual const char* backend() const = 0;
  const Params& params() const { return params_; }
  // New parameters for the steps from now on, the state kept (animated
  // parameters, read each step through the schedule). A method that
  // derives constants from them derives them again; one that cannot take
  // new parameters while it runs throws eddy::Error saying so.
  virtual void retune(const Params& p) {
    (void)p;
    throw Error("this solver cannot change its parameters while it runs");
  }

  // One step (or substep) of dt seconds; `time` is the simulation time at
  // its start (moving colliders are placed at it). An empty state takes no
  // work; otherwise the method's take_step runs its stages, timing them on
  // the clock it is given. A partner steps around it either way.
  StepStats step(float dt, float time) {
    StepStats s;
    s.dt = dt;
    if (schedule_) schedule_(time);
    if (partner_) partner_->before_step(dt, time);
    if (size() > 0) {
      StageClock clock;
      take_step(dt, time, clock, s);
    }
    if (partner_) partner_->after_step(dt, time);
    return s;
  }
  // Particles in the state.
  virtual std::size_t size() const = 0;
  virtual std::size_t memory_bytes() const = 0;
  // Timings of the stages of the last step, seconds (for bench/).
  virtual StageTimes stage_times() const = 0;
  // Fastest particle of the current state, m/s.
  float max_speed() const { return max_speed_; }

 protected:
  explicit Solver(const Params& p) : params_(p) {}
  virtual void take_step(float dt, float time, StageClock& clock, StepStats& s) = 0;
  Params params_;
  float max_speed_ = 0.0f;
};

}  // namespace eddy
