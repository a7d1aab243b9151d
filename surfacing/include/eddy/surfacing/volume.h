#pragma once
// Volume: one OpenVDB grid (level set, fog volume or PointDataGrid),
// type-erased so that no header outside surfacing/src includes OpenVDB.
// Immutable and shared, like every value flowing between nodes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

enum class GridClass { LevelSet, FogVolume, Points, Other };
const char* to_string(GridClass c);

class Volume {
 public:
  struct Impl;  // surfacing/src/vdb_internal.h
  Volume() = default;
  explicit Volume(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

  bool empty() const { return !impl_; }
  const std::string& name() const;
  GridClass grid_class() const;
  const std::string& value_type() const;  // "float", "vec3s", "ptdataidx32", ...
  double voxel_size() const;               // m (uniform scale transforms only)
  uint64_t active_voxels() const;
  uint64_t point_count() const;  // PointDataGrid only
  std::size_t memory_bytes() const;
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

// The "volumes" socket type: any number of grids, like the VDB primitives of
// a Houdini geometry stream.
struct Volumes {
  std::vector<Volume> grids;
  std::size_t memory_bytes() const {
    std::size_t b = 0;
    for (const auto& g : grids) b += g.memory_bytes();
    return b;
  }
  // First grid of that name, or null.
  const Volume* find(const std::string& name) const {
    for (const auto& g : grids)
      if (g.name() == name) return &g;
    return nullptr;
  }
};

}  // namespace eddy
