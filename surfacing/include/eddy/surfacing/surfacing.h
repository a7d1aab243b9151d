#pragma once
// The particle-to-surface pipeline and VDB file I/O.
//
//   points_to_vdb      PrimToVDBPointDataGrid: particles -> PointDataGrid
//   smooth_liquid_sdf  SmoothLiquidSDF: particles -> narrow-band level set
//   sdf_to_mesh        SDFToPrim: level set -> closed, outward mesh
//
// Lengths are in metres. Every function throws eddy::Error naming what is
// wrong (and the file, for I/O).
#include <string>
#include <vector>

#include "eddy/core/enum_names.h"
#include "eddy/core/mesh.h"
#include "eddy/core/mesh_sdf.h"
#include "eddy/core/param_table.h"
#include "eddy/core/points.h"
#include "eddy/surfacing/volume.h"

namespace eddy {

// ---- PrimToVDBPointDataGrid

// Bytes a PointDataGrid of these points at voxel size dx would take (leaf
// nodes counted exactly, attributes at their size), to refuse a dx that
// does not fit before anything is allocated.
double estimate_point_grid_bytes(const Points& points, double dx, const std::vector<std::string>& attributes);
// A PointDataGrid named `name` holding P, v and the named attributes ("*":
// all). The particle radius is kept as the grid's "eddy_radius" metadata.
// Throws when the estimate exceeds half the physical memory.
Volume points_to_vdb(const Points& points, double dx, const std::vector<std::string>& attributes,
                     const std::string& name = "points");
// The points of a PointDataGrid with every attribute it holds (float, int,
// vec3 float); the radius comes back from "eddy_radius" or `pscale`.
Points vdb_to_points(const Volume& volume);

// ---- SmoothLiquidSDF

enum class Smoothing { None, Gaussian, MeanCurvature, Laplacian };
inline constexpr EnumName<Smoothing> kSmoothingNames[] = {{Smoothing::None, "none"},
                                                          {Smoothing::Gaussian, "gaussian"},
                                                          {Smoothing::MeanCurvature, "mean_curvature"},
                                                          {Smoothing::Laplacian, "laplacian"}};
inline const char* to_string(Smoothing s) { return enum_name(kSmoothingNames, s); }

// How steps 2-4 of the chain (renormalise, smooth, erode) run:
// Bands (the default): Eddy's own narrow bands (band.h: closest-point
//   redistancing, separable Gaussian, exact erosion by a constant on a true
//   distance, with the smoothing at twice the voxel size where Dx <= r / 2),
//   the smoothing's inward shrink bounded at 0.55 particle radii (1.1 voxels
//   at the default Dx), and as droplets only the isolated particles left
//   outside (fewer than three others within 3 r); Gaussian or no smoothing,
//   other methods fall back to LevelSetFilter. About 13x the speed of
//   LevelSetFilter at 1M particles; flat faces at c + r.
// LevelSetFilter: OpenVDB's level set filters (every smoothing method; the
//   reference chain).
enum class LiquidSdfEngine { LevelSetFilter, Bands };
inline constexpr EnumName<LiquidSdfEngine> kLiquidSdfEngineNames[] = {{LiquidSdfEngine::LevelSetFilter, "levelset_filter"},
                                                                      {LiquidSdfEngine::Bands, "bands"}};

// The particles' shapes: spheres, or ellipsoids that follow the spread of
// each particle's neighbours (Yu & Turk 2013; the band engine only), so a
// sheet one particle thick comes out as a thin, flatter closed sheet while
// a body's surface stays where spheres put it. See band::anisotropy
// (surfacing/src/band.h) for the method and how its parameters map to the
// paper's.
enum class LiquidKernel { Isotropic, Anisotropic };
inline constexpr EnumName<LiquidKernel> kLiquidKernelNames[] = {{LiquidKernel::Isotropic, "isotropic"},
                                                                {LiquidKernel::Anisotropic, "anisotropic"}};
inline const char* to_string(LiquidKernel k) { return enum_name(kLiquidKernelNames, k); }

struct LiquidSdfParams {
  double dx = 0;                 // output voxel size, m; 0: 0.5 x particle radius
  double radius = 0;             // particle radius, m; 0: the points' radius
  double influence_scale = 3.0;  // spheres are rasterised at influence_scale x radius
  double surface_scale = 1.0;    // the surface is eroded back to surface_scale x radius from the centres
  double droplet_scale = 1.2;    // isolated particles become spheres of droplet_scale x radius
  Smoothing smoothing = Smoothing::Gaussian;
  int iterations = 4;
  int half_width = 3;  // narrow band half width, voxels
  LiquidSdfEngine engine = LiquidSdfEngine::Bands;
  // Bands with smoothing: the chain at this many voxels (1 or 2; 1 is the
  // reference), where that is at most the particle radius (so Dx <= r / 2 for 2).
  int band_coarsening = 2;
  LiquidKernel kernel = LiquidKernel::Isotropic;
  // Anisotropic kernels (Yu & Turk's names in brackets):
  double aniso_radius = 4.0;       // neighbourhood radius, particle radii (r_i; two particle spacings)
  double aniso_smoothing = 0.0;    // centres moved this far to the neighbours' weighted mean (lambda), 0..1
  double aniso_max_ratio = 2.5;    // longest over shortest axis at most (k_r; see band::anisotropy)
  int aniso_min_neighbours = 8;    // fewer neighbours: a sphere (N_eps)
};
// The user-facing fields with their ranges, units and docs (the node's
// parameters come from it); band_coarsening is internal.
const ParamTable<LiquidSdfParams>& liquid_sdf_param_table();
// Throws eddy::Error naming the first field outside its range, or the pair
// that does not go together (surfaceScale above influenceScale, anisotropic
// kernels without the bands engine and Gaussian or no smoothing).
void validate(const LiquidSdfParams& params);

struct LiquidSdfStats {
  double dx = 0, radius = 0;
  std::size_t particles = 0, droplets = 0;
  uint64_t active_voxels = 0;
  double rasterize_s = 0, filter_s = 0, droplet_s = 0, total_s = 0;
  double renormalize_s = 0, smooth_s = 0, erode_s = 0;  // the parts of filter_s
  std::size_t anisotropic = 0;  // particles given ellipsoids (kernel anisotropic)
  double anisotropy_s = 0;      // their covariances (part of rasterize_s)
};

// The standard liquid chain: rasterise spheres at the influence radius,
// renormalise, smooth, erode back to the surface radius, add particles left
// outside the eroded surface as droplet spheres, union. A level set named
// "surface"; empty points give an empty level set.
Volume smooth_liquid_sdf(const Points& points, const LiquidSdfParams& params, LiquidSdfStats* stats = nullptr);

// The same chain through OpenVDB's own tools only (ParticlesToLevelSet for
// the spheres): the reference the fast rasteriser is tested and benchmarked
// against.
Volume smooth_liquid_sdf_openvdb(const Points& points, const LiquidSdfParams& params,
                                 LiquidSdfStats* stats = nullptr);

// The particles' velocity near a liquid surface (Houdini's `v` volume, for
// motion blur and for the mesh's point velocities): a vec3s grid "v" of
// voxel size max(voxel, the surface's), active at the voxels nearest to those
// of `surface` within `reach` (m) of its zero crossing, each the average of
// the particles' v within `radius` (m), weighted by (1 - d^2 / radius^2)^3;
// voxels with no particle that near are left inactive. The velocity is as
// smooth as the kernel, so a voxel of the particle radius carries it at a
// fraction of the cost of a finer level set's voxels. Throws unless
// `surface` is a float level set and the points carry a vec3 `v`.
Volume liquid_velocity(const Points& points, const Volume& surface, double radius, double reach, double voxel);
// The same with the settings SmoothLiquidSDF's `velocity` uses for the level
// set it made (`params`, `stats`): a voxel of max(r, Dx), within two of them
// of the surface (a mesh point's cell corners lie within 1.74) or the band,
// if narrower, and the influence radius as the kernel (the surface is about
// r from the outer centres, so those corners are under 3 r from them).
Volume liquid_velocity(const Points& points, const Volume& surface, const LiquidSdfParams& params,
                       const LiquidSdfStats& stats);

// Step 1 alone: the union of spheres of `radius` around the points as a
// narrow band level set (active within half_width voxels of the surface),
// by the fast rasteriser or by OpenVDB's ParticlesToLevelSet.
Volume rasterize_spheres(const Points& points, double radius, double dx, int half_width, bool openvdb_reference);

// Bytes the liquid SDF of these points would need at least, to refuse a dx
// that cannot fit.
double estimate_liquid_sdf_bytes(const Points& points, const LiquidSdfParams& params);

// ---- SDFToPrim

struct MeshingParams {
  double iso = 0;         // m
  double adaptivity = 0;  // 0: uniform, 1: fewest faces
  bool allow_quads = false;
};
const ParamTable<MeshingParams>& meshing_param_table();
void validate(const MeshingParams& params);
// A closed mesh wound outward with point normals. Throws unless `volume` is
// a float level set.
Mesh sdf_to_mesh(const Volume& volume, const MeshingParams& params);
// The mesh's point velocities sampled from a vec3 grid such as
// liquid_velocity's "v": trilinear over the active voxels of each point's
// cell, renormalised (the nearest active corner where their weights are all
// zero; zero where none is active); throws unless `velocity` is a vec3s grid.
void sample_velocity(Mesh& mesh, const Volume& velocity);

// ---- level sets from meshes (colliders sample meshes through eddy/core/mesh_sdf.h)

// The signed distance of a closed mesh on the grid core's mesh_to_sdf
// (eddy/core/mesh_sdf.h) makes, through OpenVDB: meshToVolume with a band
// wide enough to reach every node, sampled trilinearly at the nodes. The
// reference that exact sampler is tested and benchmarked against.
SampledSdf mesh_to_sdf_openvdb(const Mesh& mesh, double dx, double margin);
// A level set of a closed mesh (for WriteVDB and tests).
Volume mesh_to_level_set(const Mesh& mesh, double dx, int half_width, const std::string& name);

// ---- files

// One .vdb with every grid (compressed), written to a temporary name and
// renamed into place.
void write_vdb(const std::string& path, const Volumes& volumes);
// Every grid of a .vdb file; throws naming the file when it is missing,
// not a VDB file or damaged.
Volumes read_vdb(const std::string& path);

// Liquid measures of a level set (OpenVDB's LevelSetMeasure): area m^2,
// volume m^3, Euler characteristic.
struct LevelSetMeasures {
  double area = 0, volume = 0;
  int euler = 0;
};
LevelSetMeasures measure_level_set(const Volume& volume);

// Distance from a point to the zero crossing, trilinear (for tests).
double sample_level_set(const Volume& volume, float x, float y, float z);

}  // namespace eddy
