#pragma once
// The frame-stepping skeleton every solver shares: how a frame is cut into
// steps (FrameStepper), and the driver that takes them, checking each for a
// blow-up (advance_frame_steps). A method's `*_advance_frame` is this driver
// plus its own statistics.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>

#include "eddy/core/error.h"

namespace eddy {

// Equal steps of at most fixed_dt when it is > 0, otherwise the step the
// state suggests, shortened so the frame ends on a full step rather than a
// sliver.
class FrameStepper {
 public:
  FrameStepper(double frame_dt, float fixed_dt) : frame_dt_(frame_dt) {
    if (fixed_dt > 0) equal_steps_ = std::max(1, int(std::ceil(frame_dt / double(fixed_dt) - 1e-6)));
  }
  // Exactly `steps` equal steps (PBF's substeps).
  static FrameStepper equal(double frame_dt, int steps) {
    FrameStepper s(frame_dt, 0.0f);
    s.equal_steps_ = std::max(1, steps);
    return s;
  }
  // The number of equal steps; 0 when adaptive.
  int equal_steps() const { return equal_steps_; }
  bool more() const { return done_ < frame_dt_ * (1 - 1e-9); }
  // The next step's length given the state's suggestion.
  double next(double suggested) const {
    if (equal_steps_) return frame_dt_ / equal_steps_;
    const double left = frame_dt_ - done_;
    if (suggested >= left) return left;
    if (suggested > 0.5 * left) return 0.5 * left;  // two even steps, not a step and a sliver
    return suggested;
  }
  // True when dt is the frame's last step (it may be shorter than min_dt).
  bool last(double dt) const { return dt >= frame_dt_ - done_; }
  void advance(double dt) { done_ += dt; }
  double done() const { return done_; }
  double fraction() const { return done_ / frame_dt_; }

 private:
  double frame_dt_;
  int equal_steps_ = 0;
  double done_ = 0;
};

// What a step reports of the state it leaves, for the driver's checks: the
// fastest speed and how many items (nodes, bodies) hold a non-finite value.
struct StateCheck {
  float max_speed = 0.0f;
  uint32_t nonfinite = 0;
  void add(bool finite, float speed) {
    if (!finite) ++nonfinite;
    max_speed = std::max(max_speed, speed);
  }
  // Into a step's stats (their max_speed and nonfinite).
  template <class StepStats>
  void report(StepStats& s) const {
    s.max_speed = max_speed;
    s.nonfinite = nonfinite;
  }
};

// The error a frame driver throws when the simulation goes unstable:
// "simulation became unstable at frame F (<where>): <what>".
template <class... Parts>
Error unstable_error(int frame, const std::string& where, const Parts&... what) {
  std::ostringstream m;
  m << "simulation became unstable at frame " << frame << " (" << where << "): ";
  (m << ... << what);
  return Error(m.str());
}

// How a method's driver words and bounds its checks.
struct StepChecks {
  const char* step_name = "step";  // names a step in errors: "step 3", "substep 2 of 4"
  float cfl_length = 1.0f;         // m: max speed x dt is measured in these (a particle diameter, a cell)
  const char* cfl_unit = "diameters";
  float max_cfl = 20.0f;           // beyond this many cfl_length per step the simulation has blown up
  double min_dt = 0.0;             // an adaptive step below this (but the frame's last) is refused; 0: none
  const char* nonfinite_what = "position or velocity";
  const char* cfl_hint = "";       // what to do, after the CFL error
};

// Takes the steps of one frame from simulation time `time`: each of
// steps.next(solver.suggest_dt()) seconds (solvers without suggest_dt take
// equal steps), refused below min_dt, then checked for non-finite values
// (stats.nonfinite) and a speed beyond max_cfl (stats.max_speed). Throws
// unstable_error naming `frame` and the step. After each good step calls
// on_step(step, dt, stats, cfl); returns the steps taken.
template <class Solver, class OnStep>
int advance_frame_steps(Solver& solver, FrameStepper& steps, double time, int frame, const StepChecks& c,
                        OnStep&& on_step) {
  int step = 0;
  while (steps.more()) {
    double suggested = 0.0;
    if constexpr (requires { solver.suggest_dt(); }) suggested = solver.suggest_dt();
    const double dt = steps.next(suggested);
    ++step;
    std::string where = std::string(c.step_name) + " " + std::to_string(step);
    if (steps.equal_steps()) where += " of " + std::to_string(steps.equal_steps());
    if (c.min_dt > 0 && !(dt >= c.min_dt) && !steps.last(dt))
      throw unstable_error(frame, where, "the time step fell to ", dt, " s, below min_dt = ", c.min_dt,
                           " s (max speed ", solver.max_speed(), " m/s)");
    const auto st = solver.step(float(dt), float(time + steps.done()));
    steps.advance(dt);
    if (st.nonfinite > 0)
      throw unstable_error(frame, where, st.nonfinite, " particle(s) with a non-finite ", c.nonfinite_what);
    const float cfl = st.max_speed * float(dt) / c.cfl_length;
    if (cfl > c.max_cfl)
      throw unstable_error(frame, where, "max speed ", st.max_speed, " m/s moves particles ", cfl, " ", c.cfl_unit,
                           " per ", c.step_name, ", beyond the CFL bound max_cfl = ", c.max_cfl, c.cfl_hint);
    on_step(step, dt, st, cfl);
  }
  return step;
}

// The driver of a solver that takes equal steps of at most its
// params().time_step (rigid bodies, soft bodies): a step that moves
// something more than max_move metres has blown up. After each step calls
// on_step(stats) and progress(step, steps); returns the steps taken.
template <class Solver, class OnStep>
int advance_equal_steps(Solver& solver, double time, double frame_dt, int frame, const char* nonfinite_what,
                        float max_move, OnStep&& on_step, const std::function<void(int, int)>& progress) {
  FrameStepper steps(frame_dt, solver.params().time_step);
  StepChecks checks;
  checks.nonfinite_what = nonfinite_what;
  checks.cfl_length = 1.0f;
  checks.cfl_unit = "m";
  checks.max_cfl = max_move;
  return advance_frame_steps(solver, steps, time, frame, checks, [&](int step, double, const auto& s, float) {
    on_step(s);
    if (progress) progress(step, steps.equal_steps());
  });
}

// The same, gathering each step's stats into a FrameStats (its add(step
// stats) keeps the frame's extremes; `steps` counts the steps).
template <class FrameStats, class Solver>
FrameStats advance_equal_frame(Solver& solver, double time, double frame_dt, int frame, const char* nonfinite_what,
                               float max_move, const std::function<void(int, int)>& progress) {
  FrameStats f;
  f.steps = advance_equal_steps(solver, time, frame_dt, frame, nonfinite_what, max_move,
                                [&](const auto& s) { f.add(s); }, progress);
  return f;
}

}  // namespace eddy
