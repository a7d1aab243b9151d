#pragma once
// Smoothed particle hydrodynamics: weakly compressible SPH (WCSPH, Tait
// equation of state) and divergence-free SPH (DFSPH, Bender & Koschier 2015,
// 2017), the interface every backend implements. The step is written once,
// in sph/solver.h, over an executor; core/src/sph/sph_cpu.cpp instantiates it on
// TBB, gpu/ on CUDA.
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

// The solver's detail values on its particles (Points::detail): the speed
// it expects the scene to reach (m/s), and the region its boundary samples
// cover (lo x, y, z, hi x, y, z; m).
inline constexpr const char* kSphExpectedSpeed = "sph.expected_speed";
inline constexpr const char* kSphDomain = "sph.boundary_region";

enum class SphMethod : int32_t { Wcsph = 0, Dfsph = 1 };
enum class SphWalls : int32_t {
  BoundaryParticles = 0,  // Akinci et al. 2012: sampled collider surfaces add density and pressure
  SpringDamper = 1        // a penalty layer one particle radius thick against each collider SDF
};
enum class SurfaceTension : int32_t {
  None = 0,
  Akinci2013 = 1,  // cohesion + curvature (Akinci et al. 2013): robust, the default when enabled
  ColorField = 2   // Mueller et al. 2003: sigma kappa n where |grad c| passes a threshold
};
inline constexpr EnumName<SphMethod> kSphMethodNames[] = {{SphMethod::Wcsph, "wcsph"}, {SphMethod::Dfsph, "dfsph"}};
inline constexpr EnumName<SphWalls> kSphWallsNames[] = {{SphWalls::BoundaryParticles, "boundary_particles"},
                                                        {SphWalls::SpringDamper, "spring_damper"}};
inline constexpr EnumName<SurfaceTension> kSurfaceTensionNames[] = {{SurfaceTension::None, "none"},
                                                                    {SurfaceTension::Akinci2013, "akinci2013"},
                                                                    {SurfaceTension::ColorField, "color_field"}};

struct SphParams {
  SphMethod method = SphMethod::Wcsph;
  float rest_density = 1000.0f;       // kg/m^3, water
  float kernel_scale = 2.0f;          // support radius h = kernel_scale * particle spacing (2 r)
  // Density and gradient kernels. The cubic spline by default: measured on
  // a column settling in a tank (tests/validation), poly6 density with spiky
  // gradients under the Tait equation let the column boil (densities down
  // to 0.6 rho0, 1 m/s within half a second) where the cubic spline settles.
  KernelPair kernel = KernelPair::CubicSpline;
  Vec3f gravity{0.0f, -9.81f, 0.0f};  // m/s^2

  // WCSPH: p = B ((rho / rho0)^gamma - 1), B = rho0 c0^2 / gamma (Tait, as in
  // Becker & Teschner 2007). c0 = 0 picks ten times the expected speed, so
  // density varies by about (v / c0)^2 = 1 %.
  float speed_of_sound = 0.0f;  // m/s, c0; 0: 10 x expected_speed
  float expected_speed = 0.0f;  // m/s, the largest speed the scene should reach; 0: estimated at load
  float gamma = 7.0f;
  bool clamp_negative_pressure = true;  // p >= 0: no tensile instability at the free surface

  // DFSPH: the density solver iterates until the mean compression is below
  // max_density_error, the divergence solver until the mean rate of
  // compression times dt is below max_divergence_error (both in % of rho0).
  float max_density_error = 0.05f;     // %
  float max_divergence_error = 0.1f;   // %
  int min_iterations = 2;             // the density solver's fewest iterations a step
  int min_divergence_iterations = 1;  // the divergence solver's (1: Bender & Koschier 2017, as SPlisHSPlasH)
  int max_iterations = 100;           // both solvers' most
  bool divergence_solver = true;
  bool warm_start = true;

  // Viscosity: mu with the Laplacian of Mueller et al. 2003's viscosity
  // kernel. Water is 0.001 Pa s; graphics scenes use 0.01-1 for calmer or
  // thicker liquids. XSPH (Monaghan 1989) blends velocities after the step.
  float viscosity = 0.001f;  // Pa s
  float xsph = 0.0f;         // 0..1

  // Walls.
  SphWalls walls = SphWalls::BoundaryParticles;
  float boundary_spacing = 0.5f;  // boundary particle spacing, in particle spacings
  float wall_stiffness = 1.0f;    // spring k = wall_stiffness (c0 / r)^2, 1/s^2
  float wall_damping = 0.5f;      // damping ratio zeta = c / (2 sqrt(k)); damps motion into the wall only

  // Surface tension.
  SurfaceTension surface_tension = SurfaceTension::None;
  float tension = 0.0f;  // Akinci: gamma (dimensionless in units of the cohesion spline); ColorField: sigma, N/m
  float color_threshold = 0.1f;  // ColorField: |grad c| below this share of a flat surface's is interior

  // Time step: dt = min(cfl * 2r / v_max, 0.4 * 2r / (c0 + v_max) [WCSPH],
  // cfl * 2r / (v_expected / 2) [DFSPH: a liquid about to fall does not
  // start with steps it must cut tenfold], 0.125 h^2 / nu [viscosity],
  // 0.25 sqrt(h / a_max) [forces], max_dt).
  float cfl = 0.4f;
  float max_dt = 0.005f;  // s
  float min_dt = 1e-6f;   // s: below this the step is refused as unstable
  int reorder_interval = 10;  // Z-order reordering of all attributes every this many steps (0: never)
  float max_cfl = 20.0f;  // abort when max speed * dt exceeds this many particle diameters
};

// The user-facing parameters: names, ranges, units, docs (see param_table.h).
const ParamTable<SphParams>& sph_param_table();
// Checks the table's ranges, max_iterations >= both minimums and min_dt;
// throws eddy::Error naming the parameter.
void validate(const SphParams& p);

struct SphStepStats {
  float dt = 0;
  int iterations = 0;             // DFSPH density solver
  int divergence_iterations = 0;  // DFSPH divergence solver
  float mean_density_error = 0;   // %, compression only: WCSPH after the density pass, DFSPH the solver's final
  float max_density_error = 0;    // %
  float max_speed = 0;            // m/s after the step
  uint32_t nonfinite = 0;         // particles with NaN/inf position or velocity
  uint32_t projected = 0;         // particles put back out of a collider (see SphSolverT::project)
  uint32_t projected_pressed = 0; // of those, the compressed ones (at or above rest density): the walls failed them
  uint64_t neighbor_pairs = 0;    // fluid-fluid directed pairs
  uint64_t boundary_pairs = 0;    // fluid-boundary pairs
};

// Timings of the stages of the last step, seconds (for bench/).
struct SphStageTimes {
  double neighbors = 0, density = 0, forces = 0, pressure = 0, divergence = 0, integrate = 0;
};

class SphSolver : public Solver<SphParams, SphStepStats, SphStageTimes> {
 public:
  // Takes the particles as the state (P, v and every other attribute).
  // points.radius must be > 0. Resolves c0 from the expected speed.
  virtual void load(const Points& points) = 0;
  // With boundary particles, set_colliders samples the colliders' surfaces
  // within the region the particles can reach (resampled only when the
  // list changes).
  // The time step the state allows (see SphParams).
  virtual float suggest_dt() const = 0;
  // Starts a frame (sph_advance_frame calls it): DFSPH's stored pressure
  // is the mean, weighted by step length, over the steps from here to
  // store(); a single step's estimate depends on its length.
  virtual void begin_frame() = 0;
  // Writes the state back: every loaded attribute plus `density` (kg/m^3) and `pressure` (Pa; DFSPH: the
  // frame's mean, see begin_frame).
  virtual void store(Points& out) const = 0;
  virtual std::size_t boundary_size() const = 0;
  virtual float particle_mass() const = 0;
  virtual float particle_radius() const = 0;
  // c0 in use (m/s), and the expected speed it was chosen for.
  virtual float speed_of_sound() const = 0;
  virtual float expected_speed() const = 0;

 protected:
  using Solver::Solver;
};

std::unique_ptr<SphSolver> make_sph_solver_cpu(const SphParams& p, int threads = 0);

// Warnings about a configuration that will run but badly (c0 too small for
// the expected speed, a time step the walls cannot follow); empty when fine.
std::vector<std::string> sph_warnings(const SphSolver& solver, float fixed_dt);

// Progress of a frame: step (1-based), the frame's time done (0..1).
using SphStepProgress = std::function<void(int step, double fraction, const SphStepStats&)>;

struct SphFrameStats {
  int steps = 0;
  float min_dt = 0, max_dt = 0;
  float mean_iterations = 0, mean_divergence_iterations = 0;
  float mean_density_error = 0;  // %, mean over the steps
  float max_density_error = 0;   // %, max over the steps
  float max_speed = 0;           // m/s
  uint32_t projected = 0;        // sum over the steps
  uint32_t projected_pressed = 0;  // sum over the steps
};

// Advances one frame of frame_dt seconds from simulation time `time`, in
// steps of suggest_dt() (or of at most fixed_dt when > 0), the last one cut
// to end on the frame. Throws eddy::Error naming `frame` when the simulation
// becomes unstable (non-finite values, a speed beyond max_cfl, or a step
// below min_dt).
SphFrameStats sph_advance_frame(SphSolver& solver, double time, double frame_dt, float fixed_dt, int frame,
                                const SphStepProgress& progress = {});

}  // namespace eddy
