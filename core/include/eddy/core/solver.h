#pragma once
// What every particle solver's interface shares, whatever its method: its
// parameters, the colliders it meets, one step of dt seconds from a
// simulation time, its size and memory, the timings of its stages and the
// fastest particle of its state. A method's interface (PbfSolver,
// SphSolver, MpmSolver) derives from Solver<...> and adds what is its own
// (load/store, suggest_dt, ...); each backend implements that interface.
#include <chrono>
#include <cstddef>
#include <limits>
#include <vector>

#include "eddy/core/collider.h"

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

template <class Params, class StepStats, class StageTimes>
class Solver {
 public:
  using ParamsType = Params;
  using StageTimesType = StageTimes;
  virtual ~Solver() = default;
  // "cpu" or "cuda".
  virtual const char* backend() const = 0;
  const Params& params() const { return params_; }

  virtual void set_colliders(const std::vector<Collider>& colliders) = 0;
  // One step (or substep) of dt seconds; `time` is the simulation time at
  // its start (moving colliders are placed at it). An empty state takes no
  // work; otherwise the method's take_step runs its stages, timing them on
  // the clock it is given.
  StepStats step(float dt, float time) {
    StepStats s;
    s.dt = dt;
    if (size() == 0) return s;
    StageClock clock;
    take_step(dt, time, clock, s);
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
