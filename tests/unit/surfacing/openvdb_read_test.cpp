// What WriteVDB writes, plain OpenVDB reads: the file is a standard .vdb, not
// an Eddy dialect (this is the one test file that includes OpenVDB).
#include <gtest/gtest.h>
#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>
#include <openvdb/points/PointCount.h>
#include <openvdb/points/PointDataGrid.h>
#include <unistd.h>

#include <filesystem>

#include "eddy/surfacing/surfacing.h"

namespace eddy {
namespace {

TEST(VdbFile, PlainOpenVdbReadsWhatWriteVdbWrote) {
  Points p(2000);
  for (std::size_t i = 0; i < p.size(); ++i) p.P()[i] = vec3(0.01f * float(i % 20), 0.01f * float((i / 20) % 10), 0.01f * float(i / 200));
  p.radius = 0.005f;
  Volumes vs;
  vs.grids.push_back(smooth_liquid_sdf(p, {}));
  vs.grids.push_back(points_to_vdb(p, 0.01, {}));
  const std::string file =
      (std::filesystem::temp_directory_path() / ("eddy_plain_" + std::to_string(::getpid()) + ".vdb")).string();
  write_vdb(file, vs);

  openvdb::initialize();
  openvdb::io::File f(file);
  f.open();
  auto grids = f.getGrids();
  f.close();
  std::filesystem::remove(file);
  ASSERT_EQ(grids->size(), 2u);
  openvdb::GridBase::Ptr s0, p0;
  for (auto& g : *grids) (g->getName() == "surface" ? s0 : p0) = g;
  auto surface = openvdb::gridPtrCast<openvdb::FloatGrid>(s0);
  ASSERT_TRUE(surface);
  EXPECT_EQ(surface->getName(), "surface");
  EXPECT_EQ(surface->getGridClass(), openvdb::GRID_LEVEL_SET);
  EXPECT_NEAR(surface->voxelSize()[0], 0.0025, 1e-9);  // half the particle radius
  EXPECT_EQ(surface->activeVoxelCount(), vs.grids[0].active_voxels());
  auto points = openvdb::gridPtrCast<openvdb::points::PointDataGrid>(p0);
  ASSERT_TRUE(points);
  EXPECT_EQ(points->getName(), "points");
  EXPECT_EQ(openvdb::points::pointCount(points->tree()), p.size());
  EXPECT_DOUBLE_EQ(points->voxelSize()[0], 0.01);
}

}  // namespace
}  // namespace eddy
