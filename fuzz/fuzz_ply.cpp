// PLY files from elsewhere: the point-cloud reader and the mesh reader.
// Either returns or throws eddy::Error; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <string>

#include "eddy/core/error.h"
#include "eddy/core/mesh.h"
#include "eddy/core/ply.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    eddy::decode_ply_points(text, "fuzz.ply");
  } catch (const eddy::Error&) {
  }
  try {
    eddy::decode_ply_mesh(text, "fuzz.ply");
  } catch (const eddy::Error&) {
  }
  return 0;
}
