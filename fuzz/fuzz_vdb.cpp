// .vdb files from elsewhere, as ReadVDB and ReadParticles take them: every
// grid read, and each points grid turned into particles. read_vdb returns
// or throws eddy::Error. The reader takes a path: the input is written to a
// file of this process's own first.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "eddy/core/error.h"
#include "eddy/surfacing/surfacing.h"

// OpenVDB allocates what a damaged block header declares (up to 2^63 bytes)
// before reading it. A release build's operator new throws std::bad_alloc
// for a size the machine cannot back, which read_vdb reports as a damaged
// file; AddressSanitizer's operator new aborts the process instead. These
// replacements restore the standard's behaviour on top of ASan's malloc
// (allocator_may_return_null=1, set by scripts/fuzz.sh), so the target sees
// what a user would: any size that can be backed is allocated for real and
// counts against -rss_limit_mb.
void* operator new(std::size_t n) {
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  // The input goes through a file (OpenVDB reads files); the file goes
  // when the fuzzer ends.
  static const struct Scratch {
    std::string path = "/tmp/eddy_fuzz_vdb_" + std::to_string(::getpid()) + ".vdb";
    ~Scratch() { std::remove(path.c_str()); }
  } scratch;
  const std::string& path = scratch.path;
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
