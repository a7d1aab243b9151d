#pragma once
// The CUDA backend. Built from gpu/src/*.cu when nvcc is found; otherwise
// from gpu/src/stub.cpp, whose factories throw "built without CUDA".
#include <memory>
#include <string>

#include "eddy/core/pbf/pbf.h"
#include "eddy/core/mpm/mpm.h"
#include "eddy/core/pd/iteration.h"
#include "eddy/core/sph/sph.h"

namespace eddy::gpu {

// True when this build compiled the CUDA kernels.
bool built_with_cuda();
// Number of usable CUDA devices (0 without CUDA, without a driver or a GPU).
int device_count();
// "NAME (sm_XY, N MiB)" of device 0, or why there is none.
std::string device_description();

// The PBF step of core/pbf/solver.h on the CUDA executor. Throws eddy::Error
// when built without CUDA or when no device is present.
std::unique_ptr<PbfSolver> make_pbf_solver_cuda(const PbfParams& p);
// The SPH step of core/sph/solver.h on the CUDA executor; same errors.
std::unique_ptr<SphSolver> make_sph_solver_cuda(const SphParams& p);
// The MPM step of core/mpm/solver.h on the CUDA executor; same errors.
std::unique_ptr<MpmSolver> make_mpm_solver_cuda(const MpmParams& p);
// Projective Dynamics' Chebyshev iterations (core/pd/iteration.h) on the
// CUDA executor, for PdSolver::set_device_iterations; same errors.
std::unique_ptr<PdDeviceIterations> make_pd_iterations_cuda();

}  // namespace eddy::gpu
