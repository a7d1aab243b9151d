// The surfacing chain's parameters described once (param_table.h): the
// SmoothLiquidSDF and SDFToPrim nodes take their parameters, defaults,
// ranges and docs from these tables, and validate() checks the same ranges.
// No OpenVDB header here, so the tables compile in seconds.
#include <limits>

#include "eddy/surfacing/surfacing.h"

namespace eddy {

namespace {
constexpr double kUnbounded = std::numeric_limits<double>::infinity();
}  // namespace

const ParamTable<LiquidSdfParams>& liquid_sdf_param_table() {
  using P = LiquidSdfParams;
  static const ParamTable<P> t = [] {
    ParamTable<P> t("SmoothLiquidSDF");
    t.real("Dx", &P::dx, 0.0, kUnbounded, "m", "Output voxel size; smaller is finer (0: half the particle radius).")
        .real("radius", &P::radius, 0.0, kUnbounded, "m", "Particle radius (0: the one the particles carry).")
        .real("influenceScale", &P::influence_scale, 1.0, 10.0, "",
              "Radius of the rasterised spheres, in particle radii; larger fills gaps and smooths more.")
        .real("surfaceScale", &P::surface_scale, 0.1, 10.0, "",
              "Distance of the final surface from the outer particles' centres, in particle radii (at most "
              "influenceScale).")
        .real("dropletScale", &P::droplet_scale, 0.1, 10.0, "", "Radius of isolated droplets, in particle radii.")
        .choice("smoothing", &P::smoothing, kSmoothingNames,
                "Filter between rasterising and eroding: Gaussian (the default: on a sphere of particles it "
                "brings the area within 1 % of the true sphere), mean curvature flow, Laplacian, or none.")
        .integer("iterations", &P::iterations, 0, 100, "", "Smoothing iterations.")
        .integer("halfWidth", &P::half_width, 2, 20, "voxels", "Narrow band half width.")
        .choice("engine", &P::engine, kLiquidSdfEngineNames,
                "bands (the default; Gaussian or no smoothing, other methods use levelset_filter): Eddy's own "
                "narrow bands, closest-point distances and an exact erosion, the smoothing at twice the voxel "
                "size where Dx <= r / 2; the smoothing may pull the surface at most 0.55 particle radii inside "
                "the unsmoothed one, so box edges, corners and thin films keep their shape, and only isolated "
                "particles left outside become droplets (no beaded edges at Dx = r). About 13x faster than "
                "levelset_filter at 1M particles. levelset_filter: OpenVDB's level set filters (every "
                "smoothing method), the reference chain.")
        .choice("kernel", &P::kernel, kLiquidKernelNames,
                "isotropic: a sphere per particle. anisotropic (engine bands): ellipsoids shaped by the spread "
                "of each particle's neighbours (Yu & Turk 2013), keeping the sphere's volume: a sheet one "
                "particle thick comes out a thin, flatter closed sheet (0.85-1.3 r thick against about 2 r "
                "with spheres), while a body's surface, where the neighbours lie on one side, stays a radius out "
                "as with spheres; particles with few neighbours stay spheres. About 1.1-1.6x the cost.")
        .real("anisoRadius", &P::aniso_radius, 1.0, 10.0, "",
              "Anisotropic: the neighbourhood whose spread shapes a particle, in particle radii.")
        .real("anisoSmoothing", &P::aniso_smoothing, 0.0, 1.0, "",
              "Anisotropic: how far each centre moves towards its neighbours' weighted mean, less the "
              "offset its neighbours share (Yu & Turk's lambda): particles off the local surface move onto "
              "it; a flat face still moves in by about a third of this times a radius.")
        .real("anisoMaxRatio", &P::aniso_max_ratio, 1.0, 20.0, "",
              "Anisotropic: the largest ratio of a particle's longest to shortest axis (k_r).")
        .integer("anisoMinNeighbours", &P::aniso_min_neighbours, 0, 1000, "",
                 "Anisotropic: particles with fewer neighbours within anisoRadius stay spheres (N_eps).");
    return t;
  }();
  return t;
}

void validate(const LiquidSdfParams& p) {
  liquid_sdf_param_table().check(p);
  require_param(p.surface_scale <= p.influence_scale, "SmoothLiquidSDF", "surfaceScale",
                "must not exceed influenceScale (" + std::to_string(p.influence_scale) + "), got " +
                    std::to_string(p.surface_scale));
  if (p.kernel == LiquidKernel::Anisotropic &&
      (p.engine != LiquidSdfEngine::Bands || !(p.smoothing == Smoothing::Gaussian || p.smoothing == Smoothing::None)))
    throw Error("kernel 'anisotropic' needs engine 'bands' with gaussian or no smoothing");
}

const ParamTable<MeshingParams>& meshing_param_table() {
  using P = MeshingParams;
  static const ParamTable<P> t = [] {
    ParamTable<P> t("SDFToPrim");
    t.real("isoValue", &P::iso, -kUnbounded, kUnbounded, "m", "Distance of the meshed surface (positive: outside).")
        .real("adaptivity", &P::adaptivity, 0.0, 1.0, "", "0: uniform faces; up to 1: fewer faces where flat.")
        .flag("allowQuads", &P::allow_quads, "Keep quads (otherwise every face is a triangle).");
    return t;
  }();
  return t;
}

void validate(const MeshingParams& p) { meshing_param_table().check(p); }

}  // namespace eddy
