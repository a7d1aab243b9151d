#pragma once
// A look at a .vdb file's outer layout before OpenVDB reads it. OpenVDB's
// reader allocates whatever a length field declares (a name, a metadata
// value, a grid's extent) before it reads the bytes, so one damaged length
// in a file from elsewhere costs gigabytes or ends the process. This check
// walks the part of the format that surrounds the trees, reading no more
// than it is given, and refuses a length that runs past its section:
//
//   header      magic " BDV", format version (222 or later), library
//               version, "has grid offsets" (must be 1), a 36-character UUID
//   metadata    count, then per entry: name, type name, value size, value
//   per grid    name, type name, instance parent name, then the grid's
//               start, tree-data start and end offsets (rising, within the
//               file); at its start: compression flags, the grid's metadata,
//               the transform (type name and map), and the root of its tree
//               (5-4-3 trees of the common value types): the tile and child
//               counts OpenVDB loops over must fit before the data blocks
//
// Strings are a 32-bit length and that many bytes; every integer is
// little-endian as written. Below the root, internal nodes and leaves are
// walked for the common value types; the buffers of point-data leaves
// (descriptors and attribute pages over several passes) are not.
#include <string>

namespace eddy {

struct VdbLayout {
  // A grid holds point data, whose leaf buffers the check does not walk.
  bool unchecked_point_data = false;
};

// Throws eddy::Error naming `path`, the byte offset and the field when the
// layout is not one OpenVDB can read without trusting a damaged length.
VdbLayout check_vdb_layout(const std::string& path);

}  // namespace eddy
