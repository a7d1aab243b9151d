#pragma once
// HugePageAllocator: the allocator for arrays of many megabytes that are
// filled once and then swept (a narrow band's values, a seed table).
//
// Memory a process touches for the first time costs a page fault per 4 KiB
// page. On the virtual machines Eddy runs on that is about 3 s per GiB
// (bench/bench_alloc.cpp measures it), more than the passes that fill the
// memory; Linux's transparent huge pages cut it to one fault per 2 MiB.
// Where THP is set to `madvise` (the common default) a region gets them
// only when asked, so an allocation of at least 2 MiB here is aligned to
// 2 MiB and asked with madvise(MADV_HUGEPAGE); smaller ones, and systems
// without THP, get ordinary memory. Freed memory goes back to the system as
// before (no cache is kept).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace eddy {

constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

// Bytes of at least kHugePageBytes, 2 MiB aligned and marked for huge pages
// (on Linux); smaller requests are plain operator new. Free with
// huge_pages_free(p, bytes) with the same byte count.
inline void* huge_pages_alloc(std::size_t bytes) {
  if (bytes < kHugePageBytes) return ::operator new(bytes);
  const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, rounded, MADV_HUGEPAGE);  // a hint: where THP is off, the memory is ordinary
#endif
  return p;
}

inline void huge_pages_free(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugePageBytes) ::operator delete(p);
  else std::free(p);
}

// Marks the whole 2 MiB pages inside [p, p + bytes) for transparent huge
// pages (Linux; elsewhere nothing): for memory of an ordinary container that
// is allocated but not yet written (after reserve, before resize).
inline void advise_huge_pages(void* p, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (a + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const std::uintptr_t hi = (a + bytes) / kHugePageBytes * kHugePageBytes;
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Resizes an empty std::vector to n value-initialised elements on huge
// pages where the system allows: the storage is reserved, advised, then
// written.
template <class V>
void resize_on_huge_pages(V& v, std::size_t n) {
  if (v.capacity() < n) {
    V fresh;
    fresh.reserve(n);
    advise_huge_pages(fresh.data(), n * sizeof(typename V::value_type));
    fresh.assign(v.begin(), v.end());
    v.swap(fresh);
  }
  v.resize(n);
}

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(huge_pages_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { huge_pages_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const noexcept {
    return false;
  }
};

// A std::vector whose storage, once it reaches 2 MiB, sits on huge pages.
template <class T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

// The same for what reaches malloc from code Eddy does not own: OpenVDB
// allocates every leaf's 2 KiB of values, and volumeToMesh its working
// arrays, through malloc, which hands out fresh 4 KiB pages for them.
// glibc (2.35 and later) puts its heaps on transparent huge pages only when
// the tunable glibc.malloc.hugetlb=1 is set as the process starts. This
// starts the program anew (execv of /proc/self/exe with the same arguments)
// with that tunable added to GLIBC_TUNABLES, once: not where it is already
// set, nor where EDDY_MALLOC_HUGE_PAGES is 0 (for debuggers), nor off Linux;
// if the exec fails the program goes on as it is. Call it first thing in
// main(), before any thread starts. Returns whether the tunable is in
// effect (set before this process started).
bool restart_with_huge_page_malloc(char** argv);

}  // namespace eddy
