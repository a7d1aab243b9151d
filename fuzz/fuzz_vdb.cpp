// .vdb files from elsewhere, as ReadVDB and ReadParticles take them: every
// grid read, and each points grid turned into particles. read_vdb returns
// or throws eddy::Error. The reader takes a path: the input is written to a
// file of this process's own first.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "eddy/core/error.h"
#include "eddy/surfacing/surfacing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/eddy_fuzz_vdb_" + std::to_string(::getpid()) + ".vdb";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    const eddy::Volumes v = eddy::read_vdb(path);
    for (const auto& g : v.grids)
      if (g.grid_class() == eddy::GridClass::Points) eddy::vdb_to_points(g);
  } catch (const eddy::Error&) {
  }
  return 0;
}
