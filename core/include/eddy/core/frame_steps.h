#pragma once
// How the adaptive solvers (SPH, MPM) split a frame into steps: equal steps
// of at most fixed_dt when it is > 0, otherwise the step the state suggests,
// shortened so the frame ends on a full step rather than a sliver.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "eddy/core/error.h"

namespace eddy {

class FrameStepper {
 public:
  FrameStepper(double frame_dt, float fixed_dt) : frame_dt_(frame_dt) {
    if (fixed_dt > 0) equal_steps_ = std::max(1, int(std::ceil(frame_dt / double(fixed_dt) - 1e-6)));
  }
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

// The error a frame driver throws when the simulation goes unstable:
// "simulation became unstable at frame F (<where>): <what>".
template <class... Parts>
Error unstable_error(int frame, const std::string& where, const Parts&... what) {
  std::ostringstream m;
  m << "simulation became unstable at frame " << frame << " (" << where << "): ";
  (m << ... << what);
  return Error(m.str());
}

}  // namespace eddy
