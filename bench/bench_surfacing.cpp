// Surfacing benchmark: one frame of N particles (default 1M; a jittered
// block plus splashes, particle radius r = 0.01 m) through SmoothLiquidSDF +
// SDFToPrim with the default band engine at voxel r/2 and at voxel r, then
// the LevelSetFilter engine and the plain OpenVDB chain (ParticlesToLevelSet,
// LevelSetFilter, volumeToMesh) at both, in one run. Prints the times, their
// ratios (the cost must fall as the voxel grows), particles per second per
// core beside splashsurf's published figure, the split by phase and the peak
// memory (the band engine runs first, so the first figure is its own peak).
// The band engine with anisotropic kernels runs at both voxels too, its cost
// printed as a ratio to the isotropic one (goal: at most 2).
//
//   build/bin/eddy_bench_surfacing [particles] [--quick: the band engine only]
//                                  [--only r|r/2: the isotropic band engine at that voxel, for profiling]
//                                  [--plain-malloc: without malloc on huge pages, which the eddy command
//                                   and this bench otherwise restart themselves with]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "eddy/core/huge_pages.h"
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
  // As the eddy command does (app/src/main.cpp), unless --plain-malloc asks
  // for the comparison without it.
  bool plain_malloc = false;
  for (int a = 1; a < argc; ++a) plain_malloc |= std::string(argv[a]) == "--plain-malloc";
  const bool huge_malloc = !plain_malloc && eddy::restart_with_huge_page_malloc(argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines as they come, also into a file
  std::size_t n = 1000000;
  bool quick = false;
  std::string only;
  for (int a = 1; a < argc; ++a) {
    if (std::string(argv[a]) == "--quick") quick = true;
    else if (std::string(argv[a]) == "--only" && a + 1 < argc) only = argv[++a];
    else if (std::string(argv[a]) == "--plain-malloc") continue;
    else n = std::size_t(std::atof(argv[a]));
  }
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
  for (std::size_t i = 0; i < p.size(); ++i) p.v()[i] = vec3(u(rng) - 0.5f, u(rng) - 0.5f, u(rng) - 0.5f);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("surfacing %zu particles (%zu block, %zu splash), r = %.3f m, %u cores, malloc on %s\n", p.size(),
              block, splash, r, cores, huge_malloc ? "huge pages" : "4 KiB pages (--plain-malloc or no glibc)");

  LiquidSdfParams lp;  // defaults: influence 3 r, Gaussian x4
  auto run = [&](const char* name, double dx, bool reference, LiquidSdfEngine engine,
                 LiquidKernel kernel = LiquidKernel::Isotropic) {
    LiquidSdfStats st;
    lp.engine = engine;
    lp.kernel = kernel;
    lp.dx = dx;
    const auto t0 = Clock::now();
    const Volume v = reference ? smooth_liquid_sdf_openvdb(p, lp, &st) : smooth_liquid_sdf(p, lp, &st);
    const auto t1 = Clock::now();
    const Mesh m = sdf_to_mesh(v, {});
    const auto t2 = Clock::now();
    const double sdf_s = std::chrono::duration<double>(t1 - t0).count();
    const double mesh_s = std::chrono::duration<double>(t2 - t1).count();
    if (!reference && engine == LiquidSdfEngine::Bands && kernel == LiquidKernel::Isotropic) {
      // The velocity grid and the mesh's point velocities, as the nodes make
      // them (SmoothLiquidSDF's velocity, SDFToPrim's velocityGrid).
      Mesh mv = m;
      const auto t3 = Clock::now();
      const Volume vel = liquid_velocity(p, v, lp, st);
      sample_velocity(mv, vel);
      std::printf("%-24s Dx = r%-3s %7.2f s  (%llu voxels, %zu mesh points)\n", "  + velocity v", dx < r ? "/2" : "",
                  std::chrono::duration<double>(Clock::now() - t3).count(), (unsigned long long)vel.active_voxels(),
                  mv.points.size());
    }
    std::printf("%-24s Dx = r%-3s %7.2f s  %6.0fk particles/s/core  (rasterise %.2f, renormalise %.2f, smooth %.2f, "
                "erode %.2f, droplets %.2f, mesh %.2f)  %llu active voxels, %zu faces, %zu droplets\n",
                name, dx < r ? "/2" : "", sdf_s + mesh_s, double(p.size()) / (sdf_s + mesh_s) / cores / 1e3,
                st.rasterize_s, st.renormalize_s, st.smooth_s, st.erode_s, st.droplet_s, mesh_s,
                (unsigned long long)st.active_voxels, m.face_count(), st.droplets);
    if (kernel == LiquidKernel::Anisotropic)
      std::printf("%-24s %zu particles stretched, covariances %.2f s (in rasterise)\n", "", st.anisotropic,
                  st.anisotropy_s);
    return sdf_s + mesh_s;
  };
  const double half = r / 2, full = r;
  if (!only.empty()) {
    if (only != "r" && only != "r/2") {
      std::fprintf(stderr, "--only takes r or r/2, got '%s'\n", only.c_str());
      return 2;
    }
    run("eddy (bands, default)", only == "r" ? full : half, false, LiquidSdfEngine::Bands);
    return 0;
  }
  const double bands_half = run("eddy (bands, default)", half, false, LiquidSdfEngine::Bands);
  const double peak_bands = peak_rss_bytes();
  const double bands_full = run("eddy (bands, default)", full, false, LiquidSdfEngine::Bands);
  std::printf("cost at Dx = r / cost at Dx = r/2: %.2f (goal: at most 0.6)\n", bands_full / bands_half);
  const double aniso_half = run("eddy (bands, anisotropic)", half, false, LiquidSdfEngine::Bands, LiquidKernel::Anisotropic);
  const double aniso_full = run("eddy (bands, anisotropic)", full, false, LiquidSdfEngine::Bands, LiquidKernel::Anisotropic);
  std::printf("anisotropic / isotropic kernels: %.2f at Dx = r/2, %.2f at Dx = r (goal: at most 2)\n",
              aniso_half / bands_half, aniso_full / bands_full);
  // splashsurf's published figure: 13.35M particles in 2.47 s on 14 cores at
  // cube size 1.5 r (its README), about 386k particles per second per core.
  std::printf("splashsurf (published, another machine): 386k particles/s/core\n");
  if (!quick) {
    const double filter = run("eddy (levelset_filter)", half, false, LiquidSdfEngine::LevelSetFilter);
    const double ref_half = run("OpenVDB chain", half, true, LiquidSdfEngine::LevelSetFilter);
    const double ref_full = run("OpenVDB chain", full, true, LiquidSdfEngine::LevelSetFilter);
    std::printf("ratio (OpenVDB chain / eddy): %.2fx at Dx = r/2 and %.2fx at Dx = r with the default band engine, "
                "%.2fx with levelset_filter at r/2\n",
                ref_half / bands_half, ref_full / bands_full, ref_half / filter);
  }
  std::printf("peak memory: %s after the band engine at r/2 (%.0f B/particle), %s after all\n",
              format_bytes(peak_bands).c_str(), peak_bands / double(p.size()), format_bytes(peak_rss_bytes()).c_str());
}
