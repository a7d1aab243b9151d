#pragma once
// PLY point clouds (binary little-endian; ASCII is read too).
//
// Layout written: element "vertex" with float x y z (P), float vx vy vz (v),
// then each requested attribute: float NAME, int NAME, or float NAME_x
// NAME_y NAME_z for vec3. The particle radius goes in a "comment eddy radius
// R" header line. Houdini, Blender and CloudCompare read the positions, and
// the named properties as point attributes where they support them.
#include <string>
#include <vector>

#include "eddy/core/points.h"

namespace eddy {

// `attributes`: names besides P and v to write; {"*"} writes all.
std::string encode_ply_points(const Points& points, const std::vector<std::string>& attributes);
// Atomic write (temporary name, then rename).
void write_ply_points(const std::string& path, const Points& points, const std::vector<std::string>& attributes);
// Throws eddy::Error naming the file and what is wrong with it.
Points decode_ply_points(const std::string& data, const std::string& source);
Points read_ply_points(const std::string& path);

}  // namespace eddy
