#pragma once
// The built-in node library, registered by the plug-in entry point in plugin.cpp.
#include <string>
#include <vector>

#include "eddy/graph/node.h"
#include "eddy/graph/registry.h"
#include "eddy/graph/value.h"
#include "eddy/graph/volumes_value.h"

namespace eddy::library {

// "a, b c" -> {"a", "b", "c"}: attribute lists in parameters.
std::vector<std::string> split_names(const std::string& s);
// The check shared by every writer: a path, and a frame token when several
// frames are cooked (or each frame would overwrite the last).
void check_output_pattern(const std::string& path, const CheckContext& c, const char* example);

// The solver nodes (solver_nodes.cpp). The particles a stateful solver
// continues from: its own output at frame - 1, or at the start frame its
// input with an `id` added when missing; throws when they have no radius.
std::shared_ptr<const Points> solver_start(const CookContext& ctx);
// Every collider linked into the `colliders` input.
std::vector<Collider> input_colliders(const CookContext& ctx);
// A hash of every parameter: a change restarts the simulation.
uint64_t params_signature(const CookContext& ctx);

// What every stateful solver node shares: the solver object is kept between
// frames, made anew when the parameters change or a frame does not continue
// from its last output, and dropped when a frame fails or is cancelled (its
// state would be mid-step).
template <class Solver>
class SolverNode : public Node {
 public:
  void cook(CookContext& ctx) final {
    try {
      cook_frame(ctx);
    } catch (...) {
      solver_.reset();
      last_.reset();
      throw;
    }
  }

 protected:
  virtual void cook_frame(CookContext& ctx) = 0;
  // True when the solver must be made anew to continue from `from`.
  bool must_restart(const CookContext& ctx, const std::shared_ptr<const Points>& from) {
    const uint64_t sig = params_signature(ctx);
    const bool fresh = !solver_ || sig != params_sig_ || from != last_;
    params_sig_ = sig;
    return fresh;
  }
  // Outputs the frame's particles, remembered as the state the next frame continues from.
  void output_particles(CookContext& ctx, const std::shared_ptr<Points>& out) {
    last_ = out;
    ctx.output_shared<Points>("particles", out);
  }

  std::unique_ptr<Solver> solver_;

 private:
  std::shared_ptr<const Points> last_;
  uint64_t params_sig_ = 0;
};

void register_emitters(Registry& r);
void register_colliders(Registry& r);
void register_pbf(Registry& r);
void register_sph(Registry& r);
void register_mpm(Registry& r);
void register_points(Registry& r);
void register_io(Registry& r);
void register_surfacing(Registry& r);
void register_files(Registry& r);

}  // namespace eddy::library
