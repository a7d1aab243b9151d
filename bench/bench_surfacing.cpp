// Surfacing benchmark: one frame of N particles (default 1M; a jittered
// block plus splashes, particle radius r = 0.01 m) through SmoothLiquidSDF +
// SDFToPrim at voxel r/2 with the default band engine, the same with the
// LevelSetFilter engine, and the plain OpenVDB chain (ParticlesToLevelSet,
// LevelSetFilter, volumeToMesh), in one run. Prints the times, their ratios,
// the split by phase and the peak memory (the band engine runs first, so the
// first figure is its own peak).
//
//   build/bin/eddy_bench_surfacing [particles]
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "eddy/core/io.h"
#include "eddy/core/mesh.h"
#include "eddy/surfacing/surfacing.h"

using namespace eddy;
using Clock = std::chrono::steady_clock;

static double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024.0;
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines as they come, also into a file
  const std::size_t n = argc > 1 ? std::size_t(std::atof(argv[1])) : 1000000;
  const float r = 0.01f, s = 2 * r;
  // 95 % in a block on a lattice jittered by 0.2 s, 5 % as splashes above it.
  const std::size_t splash = n / 20, block = n - splash;
  const int side = int(std::ceil(std::cbrt(double(block))));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> jit(-0.1f * s, 0.1f * s), u(0.0f, 1.0f);
  Points p(block + splash);
  p.radius = r;
  Vec3f* P = p.P();
  std::size_t k = 0;
  for (int z = 0; z < side && k < block; ++z)
    for (int y = 0; y < side && k < block; ++y)
      for (int x = 0; x < side && k < block; ++x)
        P[k++] = vec3(x * s + jit(rng), y * s + jit(rng), z * s + jit(rng));
  const float L = side * s;
  for (; k < p.size(); ++k) P[k] = vec3(u(rng) * L, L + 0.05f + u(rng) * 0.5f * L, u(rng) * L);
  std::printf("surfacing %zu particles (%zu block, %zu splash), r = %.3f m, voxel r/2\n", p.size(), block, splash, r);

  LiquidSdfParams lp;  // defaults: dx = r / 2, influence 3 r, Gaussian x4
  auto run = [&](const char* name, bool reference, LiquidSdfEngine engine) {
    LiquidSdfStats st;
    lp.engine = engine;
    const auto t0 = Clock::now();
    const Volume v = reference ? smooth_liquid_sdf_openvdb(p, lp, &st) : smooth_liquid_sdf(p, lp, &st);
    const auto t1 = Clock::now();
    const Mesh m = sdf_to_mesh(v, {});
    const auto t2 = Clock::now();
    const double sdf_s = std::chrono::duration<double>(t1 - t0).count();
    const double mesh_s = std::chrono::duration<double>(t2 - t1).count();
    std::printf("%-22s %7.2f s  (rasterise %.2f, renormalise %.2f, smooth %.2f, erode %.2f, droplets %.2f, mesh %.2f)"
                "  %llu active voxels, %zu faces, %zu droplets\n",
                name, sdf_s + mesh_s, st.rasterize_s, st.renormalize_s, st.smooth_s, st.erode_s, st.droplet_s, mesh_s,
                (unsigned long long)st.active_voxels, m.face_count(), st.droplets);
    return sdf_s + mesh_s;
  };
  const double bands = run("eddy (bands, default)", false, LiquidSdfEngine::Bands);
  const double peak_bands = peak_rss_bytes();
  const double filter = run("eddy (levelset_filter)", false, LiquidSdfEngine::LevelSetFilter);
  const double ref = run("OpenVDB chain", true, LiquidSdfEngine::LevelSetFilter);
  std::printf("ratio (OpenVDB chain / eddy): %.2fx with the default band engine, %.2fx with levelset_filter\n",
              ref / bands, ref / filter);
  std::printf("peak memory: %s after the band engine (%.0f B/particle), %s after all\n",
              format_bytes(peak_bands).c_str(), peak_bands / double(p.size()), format_bytes(peak_rss_bytes()).c_str());
}
