#pragma once
// Material point method: MLS-MPM (Hu et al. 2018) with APIC transfers
// (Jiang et al. 2015) on quadratic B-splines, on a sparse grid. The
// interface every backend implements; the step is written once, in
// mpm/solver.h, over an executor (core/src/mpm/mpm_cpu.cpp: TBB, gpu/: CUDA).
//
// Materials, per particle (the int attribute `material`):
//   0 water  J-based equation of state, Kirchhoff stress K J (J - 1) I
//            (mu = 0); F is reset to J^(1/3) I every substep
//   1 jelly  fixed corotated elasticity (Stomakhin et al. 2012)
//   2 snow   fixed corotated with Stomakhin et al. 2013's plasticity:
//            singular values clamped to [1 - theta_c, 1 + theta_s], moduli
//            hardened by exp(xi (1 - J_p))
//   3 sand   St. Venant-Kirchhoff in Hencky strain with the Drucker-Prager
//            return mapping of Klar et al. 2016
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/enum_names.h"
#include "eddy/core/param_table.h"
#include "eddy/core/points.h"
#include "eddy/core/solver.h"

namespace eddy {

enum class MpmMaterial : int32_t { Water = 0, Jelly = 1, Snow = 2, Sand = 3 };
constexpr int kMpmMaterialCount = 4;
inline constexpr EnumName<MpmMaterial> kMpmMaterialNames[kMpmMaterialCount] = {
    {MpmMaterial::Water, "water"}, {MpmMaterial::Jelly, "jelly"}, {MpmMaterial::Snow, "snow"}, {MpmMaterial::Sand, "sand"}};
const char* to_string(MpmMaterial m);
// "water", "jelly", "snow", "sand"; anything else throws eddy::Error listing these.
MpmMaterial mpm_material_from_name(std::string_view name, const std::string& where);

enum class MpmTransfer : int32_t {
  Apic = 0,  // affine particle-in-cell: C_p carried (Jiang et al. 2015), the default
  Pic = 1,   // particle-in-cell: velocities only (dissipative)
  Flip = 2   // FLIP/PIC blend: flip_ratio of the grid's velocity change, the rest PIC
};
// How colliders (and the domain's walls) act on grid velocities.
enum class MpmBoundary : int32_t {
  Sticky = 0,   // the node takes the collider's velocity
  Slip = 1,     // the normal relative velocity is removed
  Separate = 2  // only an approaching normal velocity is removed, with Coulomb friction (the default)
};
inline constexpr EnumName<MpmTransfer> kMpmTransferNames[] = {
    {MpmTransfer::Apic, "apic"}, {MpmTransfer::Pic, "pic"}, {MpmTransfer::Flip, "flip"}};
inline constexpr EnumName<MpmBoundary> kMpmBoundaryNames[] = {
    {MpmBoundary::Separate, "separate"}, {MpmBoundary::Slip, "slip"}, {MpmBoundary::Sticky, "sticky"}};

// One material's constants. Water reads `bulk_modulus` only; the others
// read Young's modulus and Poisson's ratio.
struct MpmMaterialParams {
  float density = 1000.0f;       // kg/m^3
  float youngs_modulus = 1e5f;   // Pa
  float poisson_ratio = 0.3f;
  float bulk_modulus = 1e6f;     // Pa, water
  float viscosity = 0.0f;        // Pa s, water: Kirchhoff stress J mu (grad v + grad v^T)
  // Snow (Stomakhin et al. 2013, Table 2).
  float critical_compression = 2.5e-2f;  // theta_c
  float critical_stretch = 7.5e-3f;      // theta_s
  float hardening = 10.0f;               // xi
  // Sand (Klar et al. 2016).
  float friction_angle = 35.0f;  // degrees
};

struct MpmParams {
  // Grid spacing dx, m. 0: from the particle radius r and particles_per_cell
  // (the particles sit on a lattice of spacing 2 r, so dx = 2 r ppc^(1/3)).
  float dx = 0.0f;
  float particles_per_cell = 8.0f;
  Vec3f gravity{0.0f, -9.81f, 0.0f};
  MpmTransfer transfer = MpmTransfer::Apic;
  float flip_ratio = 0.95f;  // Flip: share of FLIP in the blend
  MpmBoundary boundary = MpmBoundary::Separate;
  // The simulation domain: an axis-aligned box whose faces are walls with
  // the boundary rule above (friction domain_friction). The sparse grid
  // allocates blocks only where particles are, so it may be large.
  Vec3f domain_min{-10.0f, -10.0f, -10.0f};
  Vec3f domain_max{10.0f, 10.0f, 10.0f};
  float domain_friction = 0.0f;
  // Materials, indexed by MpmMaterial. Defaults in SI units:
  //   water  rho 1000, K 1e6 Pa (taichi_elements' and Genesis' bulk stiffness scale: c = 32 m/s),
  //          viscosity 0 (water's 0.001 Pa s is below what the grid resolves; raise it for thick liquids)
  //   jelly  rho 1000, E 1e5 Pa, nu 0.3 (a firm gelatin)
  //   snow   rho 400, E0 1.4e5 Pa, nu 0.2, theta_c 2.5e-2, theta_s 7.5e-3, xi 10 (Stomakhin et al. 2013)
  //   sand   rho 2200, E 3.537e5 Pa, nu 0.3 (Klar et al. 2016), friction angle 35 degrees
  MpmMaterialParams materials[kMpmMaterialCount] = {
      {1000.0f, 1e5f, 0.3f, 1e6f, 0.0f, 2.5e-2f, 7.5e-3f, 10.0f, 35.0f},
      {1000.0f, 1e5f, 0.3f, 1e6f, 0.0f, 2.5e-2f, 7.5e-3f, 10.0f, 35.0f},
      {400.0f, 1.4e5f, 0.2f, 1e6f, 0.0f, 2.5e-2f, 7.5e-3f, 10.0f, 35.0f},
      {2200.0f, 3.537e5f, 0.3f, 1e6f, 0.0f, 2.5e-2f, 7.5e-3f, 10.0f, 35.0f}};
  // Substeps: dt = min(cfl dx / (c + v_max), 0.125 rho dx^2 / mu_water,
  // max_dt) with c the fastest elastic wave speed of the materials present,
  // sqrt((lambda + 2 mu) / rho) (sqrt(K / rho) for water).
  float cfl = 0.4f;
  float max_dt = 2e-3f;   // s
  float min_dt = 1e-7f;   // s: below this the step is refused as unstable
  float max_cfl = 1.5f;   // abort when max speed * dt exceeds this many cells (a blow-up)
  int reorder_interval = 20;  // reorder particle arrays by grid block every this many substeps (0: never)
  // The grid may use at most this much memory (0: half the machine's
  // physical memory); a dx that would need more is refused before the grid
  // is allocated.
  double max_grid_bytes = 0.0;
};

// The user-facing parameters: names, ranges, units, docs (see param_table.h).
const ParamTable<MpmParams>& mpm_param_table();
// Checks the table's ranges, the domain, min_dt and max_grid_bytes; throws
// eddy::Error naming the parameter.
void validate(const MpmParams& p);

struct MpmStepStats {
  float dt = 0;
  float max_speed = 0;    // m/s after the step
  uint32_t nonfinite = 0; // particles with NaN/inf state
  uint32_t grid_blocks = 0;  // active 4x4x4 node blocks
};

// Totals over the grid after the last step's grid update (for tests):
// mass, momentum sum m_i v_i and angular momentum sum x_i x m_i v_i.
struct MpmGridTotals {
  float mass = 0;
  Vec3f momentum{0, 0, 0};
  Vec3f angular_momentum{0, 0, 0};
};

// Timings of the stages of the last step, seconds (for bench/).
struct MpmStageTimes {
  double sort = 0, stress = 0, p2g = 0, grid = 0, g2p = 0;
};

class MpmSolver : public Solver<MpmParams, MpmStepStats, MpmStageTimes> {
 public:
  // Takes the particles as the state (F, C and Jp too when they carry them,
  // see store()). points.radius must be > 0. The int
  // attribute `material` (0 water, 1 jelly, 2 snow, 3 sand) chooses each
  // particle's material; without it all are `default_material`. Particles
  // outside the domain are dropped (see dropped()). Throws eddy::Error for
  // a material id out of range or a grid that would not fit max_grid_bytes.
  virtual void load(const Points& points, MpmMaterial default_material) = 0;
  virtual float suggest_dt() const = 0;
  // Writes back every loaded attribute plus `material` (int) and `J`
  // (det F); with `state`, also what load() needs to resume exactly: the
  // deformation gradient (rows `F0`, `F1`, `F2`), the affine velocity matrix
  // (`C0`..`C2`) and snow's plastic volume ratio `Jp`.
  virtual void store(Points& out, bool state) const = 0;
  virtual std::size_t dropped() const = 0;  // particles outside the domain at load
  virtual float dx() const = 0;
  virtual float particle_volume() const = 0;
  virtual float wave_speed() const = 0;  // the fastest elastic wave speed present, m/s
  virtual std::size_t grid_bytes() const = 0;
  virtual MpmGridTotals grid_totals() const = 0;
  // The domain box, a container with domain_friction.
  std::vector<Collider> own_walls() const override;

 protected:
  using Solver::Solver;
};

// Lame parameters mu, lambda of a material (Pa).
void mpm_lame(const MpmMaterialParams& m, float& mu, float& lambda);
// The grid spacing the parameters give for particles of radius r.
float mpm_grid_spacing(const MpmParams& p, float radius);

std::unique_ptr<MpmSolver> make_mpm_solver_cpu(const MpmParams& p, int threads = 0);

using MpmStepProgress = std::function<void(int step, double fraction, const MpmStepStats&)>;

struct MpmFrameStats {
  int steps = 0;
  float min_dt = 0, max_dt = 0;
  float max_speed = 0;
  uint32_t grid_blocks = 0;  // at the frame's last substep
};

// Advances one frame of frame_dt seconds from `time` in substeps of
// suggest_dt() (or at most fixed_dt when > 0), the last cut to end on the
// frame. Throws eddy::Error naming `frame` when the simulation becomes
// unstable (non-finite state, speed beyond max_cfl, or a step below min_dt).
MpmFrameStats mpm_advance_frame(MpmSolver& solver, double time, double frame_dt, float fixed_dt, int frame,
                                const MpmStepProgress& progress = {});

}  // namespace eddy
