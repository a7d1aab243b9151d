// Projective Dynamics speed: cloths of about 10k and 100k nodes falling onto
// a sphere, and soft cubes of about 10k and 100k tetrahedra dropped on a
// floor, 10 iterations a step, both global methods. Prints ms per step and
// per iteration (local and global apart), the factorisation's time and the
// system's memory, and the refactorisations contacts caused; where a CUDA
// device is present, Chebyshev's iterations on it too ("chebyshev-cuda":
// the contacts and friction stay on the CPU). Goals (issue 20, 2 cores): a
// 10k-node cloth at 10 iterations in 10 ms a step, 100k in 150 ms.
//   eddy_bench_pd [steps] [only: run the lines whose "name method" holds this text, e.g. "cloth 10k chebyshev"]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "eddy/core/pd/pd.h"
#include "eddy/gpu/gpu.h"

namespace {

std::string only;  // the lines to run (all when empty)

using namespace eddy;

Mesh grid(int n, double side, double height) {
  return grid_mesh(vec3(0.0f, float(height), 0.0f), vec3(0.0f, 0.0f, float(side)), vec3(float(side), 0.0f, 0.0f), n, n);
}


void run(const char* name, const SoftBodies& s, const std::vector<Collider>& colliders, PdMethod method, int steps,
         bool device = false) {
  PdParams p;
  p.iterations = 10;
  p.method = method;
  p.chebyshev_rho = 0.95f;
  const char* label = method == PdMethod::Cholesky ? "cholesky" : device ? "chebyshev-cuda" : "chebyshev";
  if (!only.empty() && (std::string(name) + " " + label).find(only) == std::string::npos) return;
  PdSolver solver(p, 0);
  if (device) solver.set_device_iterations(gpu::make_pd_iterations_cuda());
  solver.load(s);
  solver.set_colliders(colliders);
  const double h = p.time_step;
  solver.step(float(h), 0.0f);  // builds and factors
  const double factor = solver.factor_seconds();
  double local = 0, global = 0, rest = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 1; k <= steps; ++k) {
    solver.step(float(h), float(k * h));
    local += solver.stage_times().local;
    global += solver.stage_times().global;
    rest += solver.stage_times().inertia + solver.stage_times().collide + solver.stage_times().velocity;
  }
  const double ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  std::printf("%-22s %-14s %8zu nodes %8zu tets %8zu tris | %7.2f ms/step | per iteration: local %6.3f ms, global "
              "%6.3f ms, per step: the rest %6.3f ms | factor %6.3f s, system %6.1f MB, %d refactorisations\n",
              name, label, s.size(), s.tets.size(), s.tris.size(), ms,
              1e3 * local / (steps * p.iterations), 1e3 * global / (steps * p.iterations), 1e3 * rest / steps, factor,
              solver.system().memory_bytes() / 1048576.0, solver.system().refactorisations());
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  only = argc > 2 ? argv[2] : "";
  SoftMaterial cloth_m;
  cloth_m.young_modulus = 5e6;
  cloth_m.density = 300;
  cloth_m.thickness = 5e-4;
  cloth_m.bend_stiffness = 5e-6;
  Collider ball;
  ball.type = ShapeType::Sphere;
  ball.center = vec3(0.0f, 0.4f, 0.0f);
  ball.size = vec3(0.35f);
  Collider floor;
  SoftMaterial jelly;
  jelly.young_modulus = 1e4;
  jelly.poisson_ratio = 0.3;
  std::printf("Projective Dynamics, %d steps of 1/240 s after the first, 10 iterations each\n", steps);
  std::printf("CUDA: %s\n", gpu::device_description().c_str());
  const bool cuda = gpu::device_count() > 0;
  for (int pass = 0; pass < (cuda ? 3 : 2); ++pass) {
    const PdMethod m = pass == 0 ? PdMethod::Cholesky : PdMethod::Chebyshev;
    const bool device = pass == 2;
    // The cloths start just above the sphere: contacts from the first steps.
    run("cloth 10k", make_cloth(grid(100, 1.2, 0.752), cloth_m, "cloth"), {ball, floor}, m, steps, device);
    run("cloth 100k", make_cloth(grid(316, 1.2, 0.752), cloth_m, "cloth"), {ball, floor}, m, steps, device);
    for (int cells : {12, 26}) {
      const float half = 0.2f;
      Collider inside;
      inside.type = ShapeType::Box;
      inside.center = vec3(0.0f, half + 0.001f, 0.0f);
      inside.size = vec3(half);
      const SoftBodies s = make_soft_body(box_mesh(inside.center, vec3(half)), inside, 2.0 * half / cells, jelly, "jelly");
      run(cells == 12 ? "soft cube 10k tets" : "soft cube 100k tets", s, {floor}, m, steps, device);
    }
  }
  return 0;
}
