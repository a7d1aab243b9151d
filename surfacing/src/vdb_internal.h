#pragma once
// Internal to surfacing/: the OpenVDB side of Volume. Include only from the
// few .cpp files of this folder (OpenVDB headers are slow to compile).
#include <openvdb/openvdb.h>

#include <string>

#include "eddy/surfacing/volume.h"

namespace eddy {

struct Volume::Impl {
  openvdb::GridBase::ConstPtr grid;
  std::string name, type;
  GridClass cls = GridClass::Other;
  double dx = 0;
  uint64_t active = 0, points = 0;
  std::size_t bytes = 0;
};

// Registers OpenVDB's types once (thread-safe).
void init_openvdb();
// Wraps a grid, reading its name, class, voxel size and counts.
Volume make_volume(openvdb::GridBase::Ptr grid);

}  // namespace eddy
