#pragma once
// SAP, the Semi-Analytic Primal contact solver (Castro, Permenter, Han, "An
// unconstrained convex formulation of compliant contact", IEEE T-RO 2022;
// the solver Drake uses). One step of h seconds is one convex problem over
// the bodies' velocities v (6 per body: linear, then angular, world axes):
//
//   min_v  1/2 ||v - v*||_M^2 + sum_i l_i(v_c,i),    v_c,i = J_i v + b_i
//
// v* the free-motion velocity, M the mass matrix, v_c,i contact i's
// relative velocity in its frame (t1, t2, n; n from body b towards body a),
// b_i the part of it the world's motion gives (a moving collider). Contact
// i's impulse gamma_i = P_F(y_i), y_i = R_i^-1 (vhat_i - v_c,i), is the
// projection onto the friction cone |gamma_t| <= mu gamma_n in the R_i norm;
// l_i = 1/2 gamma_i^T R_i gamma_i, whose gradient is -gamma_i. Newton's
// method with an exact line search converges on it (the Hessian
// M + sum J_i^T G_i J_i, G_i = d gamma_i / d y_i R_i^-1, is positive
// definite).
//
// The contact model (per contact; Castro et al. 2022, section V):
//   normal    compliant Kelvin-Voigt spring, stiffness k (N/m) and
//             dissipation time scale tau (s), penetration taken at the
//             step's end: R_n = 1 / (h k (h + tau)), vhat_n = -phi0 / (h + tau)
//   friction  regularised: R_t = sigma w, w the contact's Delassus diagonal
//             estimate (the mean diagonal entry of J_i M^-1 J_i^T)
//   rigid     R_n is kept at or above beta^2 / (4 pi^2) w, so a stiffness the
//             step cannot resolve behaves as stiff as it can ("near-rigid")
//
// Two artefacts of the formulation, measured in tests/validation: in
// stiction a body creeps at about sigma times the speed one step of the
// tangential load would give it; while sliding it glides about
// mu |v_t| (h + tau) above the surface.
//
// The Lagged model (SapModel::Lagged; Castro et al.'s convex
// approximations) keeps the regularisation but projects the normal and the
// tangential parts apart: gamma_n = max(0, y_n), and gamma_t = y_t clamped
// to the disc of radius mu gamma_n0, gamma_n0 the normal impulse at the
// velocities the step starts from. The cost stays convex; the friction bound
// is one step late, and a sliding body does not glide.
#include <vector>

#include "eddy/core/enum_names.h"
#include "eddy/core/rigid/bodies.h"

namespace eddy {

enum class SapModel : int32_t { Sap = 0, Lagged = 1 };
inline constexpr EnumName<SapModel> kSapModelNames[] = {{SapModel::Sap, "sap"}, {SapModel::Lagged, "lagged"}};

struct SapContact {
  int a = -1, b = -1;          // bodies; -1: the world (a collider) on that side
  Mat3d frame;                 // columns t1, t2, n (world axes), n from b towards a
  Vec3d ra = Vec3d::Zero();    // contact point minus a's centre of mass (world)
  Vec3d rb = Vec3d::Zero();    // contact point minus b's centre of mass (world)
  Vec3d bias = Vec3d::Zero();  // v_c with every body at rest: minus the world's motion at the point, contact frame
  double phi0 = 0;             // m, signed distance at the step's start (< 0: penetrating)
  double mu = 0;               // friction coefficient
  double stiffness = 1e8;      // N/m, k
  double tau = 0;              // s, dissipation time scale
};

struct SapParams {
  double sigma = 1e-3;           // friction regularisation R_t = sigma w (Castro et al.: 1e-3)
  double beta = 1.0;             // near-rigid bound R_n >= beta^2 / (4 pi^2) w (Castro et al.: 1)
  double rel_tolerance = 1e-6;   // on the momentum residual, relative to the momenta
  double abs_tolerance = 1e-14;  // the same, absolute (sqrt(J))
  int max_iterations = 100;      // Newton iterations
  SapModel model = SapModel::Sap;
  // Newton's linear systems by the 6x6-block Cholesky (block_cholesky.h);
  // false: Eigen's scalar SimplicialLDLT, the reference it is tested against.
  bool block_factorisation = true;
  // Each island (bodies linked through contacts with each other; the world
  // links none) solved as a problem of its own, the islands in parallel,
  // a body touching nothing at its free velocity: the same minimiser, as
  // the cost is a sum over islands, and each island's Newton iterations
  // as many as it needs. false: all bodies in one problem, the reference.
  bool islands = true;
};

// The regularisation of one contact.
struct SapRegularisation {
  double Rt = 0, Rn = 0;  // s/kg (velocity per impulse)
  double vhat = 0;        // m/s, normal velocity at which the force vanishes
  double w = 0;           // s/kg, Delassus diagonal estimate
};
SapRegularisation sap_regularisation(const SapContact& c, double w, double h, const SapParams& p);

// gamma = P_F(y), the projection of y = (y_t1, y_t2, y_n) onto the cone
// |gamma_t| <= mu gamma_n in the norm of R = diag(Rt, Rt, Rn), in closed
// form: stiction (|y_t| <= mu y_n) gamma = y; separation
// (y_n + mu~ |y_t| <= 0, mu~ = mu Rt / Rn) gamma = 0; sliding
// gamma_n = (y_n + mu~ |y_t|) / (1 + mu mu~), gamma_t = mu gamma_n y_t / |y_t|.
// With `dgamma_dy`, also its derivative d gamma / d y.
Vec3d sap_project(const Vec3d& y, double mu, double Rt, double Rn, Mat3d* dgamma_dy = nullptr);
// The Lagged model's gamma(y): gamma_n = max(0, y_n), gamma_t = y_t within
// the disc |gamma_t| <= bound (= mu gamma_n0), else on its rim; with its
// derivative.
Vec3d lagged_project(const Vec3d& y, double bound, Mat3d* dgamma_dy = nullptr);

struct SapStats {
  int iterations = 0;       // Newton iterations taken
  bool converged = false;   // within the tolerance
  double residual = 0;      // final ||D (M (v - v*) - J^T gamma)|| / reference (relative)
  int line_search_steps = 0;  // total line-search evaluations
  int islands = 0;          // problems solved (islands with a contact; 1 without islands)
  int largest_island = 0;   // bodies in the largest of them
};

// The problem of one step: bodies' masses and world inertias, the free
// velocities and the contacts.
struct SapProblem {
  double h = 0;                  // s
  std::vector<double> mass;      // (n bodies) kg
  std::vector<Mat3d> inertia;    // (n bodies) kg m^2, world axes
  Eigen::VectorXd v_star;        // (6 n) free-motion velocities: v (3), w (3) per body
  Eigen::VectorXd v_guess;       // (6 n, or empty: v*) where Newton starts, e.g. the last step's velocities
  std::vector<SapContact> contacts;
};

// Solves the step's problem; v receives the velocities (6 n), gamma the
// contacts' impulses (N s, contact frames) and reg their regularisation.
// Non-convergence is a status in the statistics, not an exception. With
// islands, the statistics are the worst island's (iterations, residual,
// converged) and the sum of the line-search evaluations.
SapStats sap_solve(const SapProblem& problem, const SapParams& params, Eigen::VectorXd& v,
                   std::vector<Vec3d>* gamma = nullptr, std::vector<SapRegularisation>* reg = nullptr);

}  // namespace eddy
