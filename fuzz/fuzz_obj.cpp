// OBJ meshes from elsewhere: decode_obj returns or throws eddy::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "eddy/core/error.h"
#include "eddy/core/mesh.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    eddy::decode_obj(std::string(reinterpret_cast<const char*>(data), size), "fuzz.obj");
  } catch (const eddy::Error&) {
  }
  return 0;
}
