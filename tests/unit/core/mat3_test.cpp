// The 3x3 SVD of mat3.h (written for device kernels) against Eigen's
// JacobiSVD, the slow, obvious reference.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "eddy/core/mat3.h"

namespace eddy {
namespace {

Eigen::Matrix3d to_eigen(const Mat3f& m) {
  Eigen::Matrix3d e;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) e(i, j) = at(m, i, j);
  return e;
}

// Checks one decomposition; returns the reconstruction error relative to |F|.
void check_svd(const Mat3f& F, const char* what) {
  SCOPED_TRACE(what);
  const Svd3 d = svd3(F);
  const Eigen::Matrix3d U = to_eigen(d.U), V = to_eigen(d.V), A = to_eigen(F);
  const double scale = std::max(1e-12, A.norm());
  EXPECT_LT((U.transpose() * U - Eigen::Matrix3d::Identity()).norm(), 2e-6);
  EXPECT_LT((V.transpose() * V - Eigen::Matrix3d::Identity()).norm(), 2e-6);
  EXPECT_NEAR(U.determinant(), 1.0, 2e-6);
  EXPECT_NEAR(V.determinant(), 1.0, 2e-6);
  const Eigen::Vector3d s(d.s.x, d.s.y, d.s.z);
  EXPECT_LT((U * s.asDiagonal() * V.transpose() - A).norm() / scale, 4e-6);
  // Singular values: Eigen's are non-negative and descending; ours carry the
  // sign of det F on the smallest.
  const Eigen::JacobiSVD<Eigen::Matrix3d> ref(A);
  const Eigen::Vector3d rs = ref.singularValues();
  EXPECT_NEAR(d.s.x, rs(0), 4e-6 * scale);
  EXPECT_NEAR(d.s.y, rs(1), 4e-6 * scale);
  EXPECT_NEAR(std::abs(d.s.z), rs(2), 4e-6 * scale);
  EXPECT_GE(d.s.x, d.s.y);
  EXPECT_GE(d.s.y, std::abs(d.s.z) - 1e-6 * scale);
  if (A.determinant() < -1e-9 * scale * scale * scale) {
    EXPECT_LT(d.s.z, 0.0f);
  }
  if (A.determinant() > 1e-9 * scale * scale * scale) {
    EXPECT_GT(d.s.z, 0.0f);
  }
}

TEST(Svd3, MatchesEigenOnRandomMatrices) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int k = 0; k < 2000; ++k) {
    Mat3f F;
    for (int i = 0; i < 3; ++i) row(F, i) = vec3(u(rng), u(rng), u(rng));
    check_svd(F, "random");
  }
}

TEST(Svd3, MatchesEigenNearTheIdentityAsMpmSeesIt) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (int k = 0; k < 2000; ++k) {
    Mat3f F = mat3_identity();
    for (int i = 0; i < 3; ++i) row(F, i) += vec3(u(rng), u(rng), u(rng));
    check_svd(F, "near identity");
  }
}

TEST(Svd3, HandlesDegenerateAndInvertedCases) {
  check_svd(mat3_identity(), "identity");
  check_svd(mat3_zero(), "zero");
  check_svd(mat3_diag(vec3(2, 2, 2)), "repeated");
  check_svd(mat3_diag(vec3(1, 3, 2)), "unsorted diagonal");
  check_svd(mat3_diag(vec3(1, 1, -1)), "reflection");
  check_svd(mat3_diag(vec3(-1, -2, 0.5f)), "two negative");
  check_svd(outer(vec3(1, 2, 3), vec3(-1, 0.5f, 2)), "rank one");
  check_svd(Mat3f{{1, 2, 3}, {2, 4, 6.0001f}, {0, 1, 1}}, "nearly rank two");
  const Mat3f R = Mat3f{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}};
  check_svd(R * mat3_diag(vec3(0.9f, 1.1f, 1.0f)), "rotated stretch");
  // The polar rotation of a rotation is itself.
  const Svd3 d = svd3(R);
  const Mat3f Rp = d.U * transpose(d.V);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(at(Rp, i, j), at(R, i, j), 1e-6);
}

TEST(Mat3, ProductsTransposeAndDeterminant) {
  const Mat3f A{{1, 2, 3}, {0, 1, 4}, {5, 6, 0}};
  const Mat3f B{{2, 0, 1}, {1, 3, 0}, {0, 1, 1}};
  const Eigen::Matrix3d P = to_eigen(A) * to_eigen(B);
  const Mat3f AB = A * B;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(at(AB, i, j), float(P(i, j)));
  EXPECT_FLOAT_EQ(determinant(A), float(to_eigen(A).determinant()));
  EXPECT_FLOAT_EQ(at(transpose(A), 0, 2), 5.0f);
  EXPECT_FLOAT_EQ(trace(A), 2.0f);
  const Mat3f o = outer(vec3(1, 2, 3), vec3(4, 5, 6));
  EXPECT_FLOAT_EQ(at(o, 2, 1), 15.0f);
}

}  // namespace
}  // namespace eddy
