#pragma once
// What every particle solver's interface shares, whatever its method: its
// parameters, the colliders it meets, one step of dt seconds from a
// simulation time, its size and memory, the timings of its stages and the
// fastest particle of its state. A method's interface (PbfSolver,
// SphSolver, MpmSolver) derives from Solver<...> and adds what is its own
// (load/store, suggest_dt, ...); each backend implements that interface.
#include <cstddef>
#include <vector>

#include "eddy/core/collider.h"

namespace eddy {

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
  // its start (moving colliders are placed at it).
  virtual StepStats step(float dt, float time) = 0;
  // Particles in the state.
  virtual std::size_t size() const = 0;
  virtual std::size_t memory_bytes() const = 0;
  // Timings of the stages of the last step, seconds (for bench/).
  virtual StageTimes stage_times() const = 0;
  // Fastest particle of the current state, m/s.
  float max_speed() const { return max_speed_; }

 protected:
  explicit Solver(const Params& p) : params_(p) {}
  Params params_;
  float max_speed_ = 0.0f;
};

}  // namespace eddy
