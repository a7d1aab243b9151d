#pragma once
// Position based fluids (Macklin & Mueller 2013), the interface every backend
// implements. The step itself is written once, in pbf/solver.h, over an
// executor; core/src/pbf/pbf_cpu.cpp instantiates it on TBB, gpu/ on CUDA.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/kernels.h"
#include "eddy/core/param_table.h"
#include "eddy/core/points.h"
#include "eddy/core/solver.h"

namespace eddy {

struct PbfParams {
  float rest_density = 1000.0f;     // kg/m^3, water
  float kernel_scale = 2.0f;        // support radius h = kernel_scale * particle spacing (2 r)
  // Cubic spline by default: measured on the Martin & Moyce dam break
  // (tests/validation), it tracks the experiment within 5 % where poly6 with
  // spiky gradients runs 16 % ahead (its s_corr is four times stronger at the
  // nearest-neighbour distance, pushing the surface out).
  KernelPair kernel = KernelPair::CubicSpline;
  Vec3f gravity{0.0f, -9.81f, 0.0f};  // m/s^2

  // Jacobi iterations: a fixed count (min = max), or until the mean density
  // error (compression, in %) is below the target, between min and max.
  int min_iterations = 2;
  int max_iterations = 20;
  float max_density_error = 0.5f;  // %, mean over the particles

  // Relaxation epsilon of the lambda denominator (M&M eq. 11), as a fraction
  // of the constraint-gradient norm sum |grad C|^2 of a particle with a full
  // neighbourhood, so it means the same at every resolution.
  float epsilon = 0.01f;

  // Tensile correction s_corr = -k (W(r) / W(dq))^n (M&M eq. 13); k is in
  // units of the lambda of a 100 % density violation of a full
  // neighbourhood, so it is dimensionless and resolution independent.
  float scorr_k = 0.1f;
  float scorr_n = 4.0f;
  float scorr_dq = 0.3f;  // |dq| as a fraction of h

  float xsph = 0.01f;        // XSPH viscosity c (M&M eq. 17), in SPH-normalised form
  float vorticity = 0.0f;    // vorticity confinement epsilon (M&M eq. 16), m/s
  bool wall_density = true;  // colliders add the density of a rest-density half-space beyond them
  int reorder_interval = 10; // Z-order reordering of all attributes every this many steps (0: never)
  float max_cfl = 20.0f;     // abort when max speed * dt exceeds this many particle diameters
};

// The user-facing parameters: names, ranges, units, docs (see param_table.h).
const ParamTable<PbfParams>& pbf_param_table();
// Checks the table's ranges and that max_iterations >= min_iterations;
// throws eddy::Error naming the parameter.
void validate(const PbfParams& p);

struct PbfStepStats {
  float dt = 0.0f;                   // s, the step taken
  int iterations = 0;                // corrections applied
  float mean_density_error = 0.0f;   // %, final, compression only
  float max_density_error = 0.0f;    // %, final
  float max_speed = 0.0f;            // m/s after the step
  uint32_t nonfinite = 0;            // particles with NaN/inf position or velocity
  uint32_t neighbor_pairs = 0;       // directed pairs found this step
};

// Timings of the stages of the last step, seconds (for bench/).
struct PbfStageTimes {
  double predict = 0, neighbors = 0, solve = 0, velocity = 0;
};

class PbfSolver : public Solver<PbfParams, PbfStepStats, PbfStageTimes> {
 public:
  // Takes the particles as the state: P, v and every other attribute (carried
  // through the Z-order reordering). points.radius must be > 0.
  virtual void load(const Points& points) = 0;
  // Writes the state back: every loaded attribute plus `density` (kg/m^3).
  virtual void store(Points& out) const = 0;
  // Mass of one particle (kg), from the rest density and the lattice.
  virtual float particle_mass() const = 0;
  // Radius of the loaded particles, m.
  virtual float particle_radius() const = 0;

 protected:
  using Solver::Solver;
};

std::unique_ptr<PbfSolver> make_pbf_solver_cpu(const PbfParams& p, int threads = 0);

// How a frame is cut into substeps: at least `min_substeps`, more when the
// fastest particle would otherwise travel more than `cfl` particle diameters
// in one substep (the CFL condition, from the speed at the frame's start plus
// what gravity adds over the frame), at most `max_substeps`. cfl = 0 keeps
// min_substeps always.
struct SubstepPolicy {
  int min_substeps = 2;
  int max_substeps = 16;
  float cfl = 0.5f;
};
// The substep count for one frame.
int pbf_substeps(const SubstepPolicy& policy, float max_speed, float gravity, double frame_dt, float particle_radius);

// Progress of a frame: substep (1-based) of substeps, iterations of that substep.
using SubstepProgress = std::function<void(int substep, int substeps, const PbfStepStats&)>;

struct PbfFrameStats {
  int substeps = 0;                // substeps taken
  float mean_iterations = 0;
  float mean_density_error = 0;  // %, mean over the substeps
  float max_density_error = 0;   // %, max over the substeps
  float max_speed = 0;           // m/s, max over the substeps
  float max_cfl = 0;             // max speed * dt / particle diameter
};

// Advances one frame of frame_dt seconds in equal substeps (pbf_substeps),
// starting at simulation time `time`. Throws eddy::Error naming `frame` when
// the simulation becomes unstable (non-finite values, or a speed beyond the
// max_cfl bound).
PbfFrameStats pbf_advance_frame(PbfSolver& solver, double time, double frame_dt, const SubstepPolicy& policy,
                                int frame, float particle_radius, const SubstepProgress& progress = {});

}  // namespace eddy
