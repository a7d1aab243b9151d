#pragma once
// CpuExecutor: the executor of DESIGN.md on TBB.
//
// Executor contract (the CUDA executor in gpu/ offers the same):
//   Vector<T>                        storage the executor's loops can read (host memory here)
//   for_each(n, f)                   f(i) for i in [0, n); f writes only what belongs to i
//   reduce(n, init, map, op)         op-fold of map(i); fixed blocking, so the result does not
//                                    depend on the thread count (floats included)
//   exclusive_scan(in, out, n)       out[i] = sum in[0..i), returns the total; in == out allowed
//   sort_by_key(keys, values, n, b)  stable LSD radix sort on the low b bits of 64-bit keys
//   upload / download                copies between host arrays and Vector<T>
//
// Only the .cpp files that instantiate solver templates include this header,
// so TBB stays out of the headers other layers see.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "eddy/core/error.h"
#include "eddy/core/reduce_ops.h"

// Runtime dispatch to AVX2 for for_each_simd: x86-64 with GCC or Clang, in
// host code that nvcc does not compile.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#define EDDY_CPU_DISPATCH 1
#else
#define EDDY_CPU_DISPATCH 0
#endif

namespace eddy {

// The process-wide switch behind CpuExecutor::set_simd, and whether this
// CPU has AVX2 (cpu_executor.cpp: one copy for the whole process).
bool& cpu_simd_flag();
bool cpu_supports_avx2();

class CpuExecutor {
 public:
  static constexpr const char* backend_name = "cpu";
  // Whether work runs on a GPU (thousands of light threads, little stack per
  // thread) rather than on a few CPU cores: algorithms that have both shapes
  // pick theirs by it (NeighborGrid::find_neighbors).
  static constexpr bool on_device = false;
  template <class T>
  using Vector = std::vector<T>;

  // threads <= 0: all the machine's threads (or what tbb::global_control allows).
  explicit CpuExecutor(int threads = 0)
      : arena_(std::make_shared<tbb::task_arena>(threads > 0 ? threads : int(tbb::task_arena::automatic))) {}

  int threads() const { return arena_->max_concurrency(); }

  template <class F>
  void for_each(uint32_t n, F f) const {
    for_chunks(n, [&](uint32_t lo, uint32_t hi) {
      for (uint32_t i = lo; i != hi; ++i) f(i);
    });
  }

  // for_each for the solvers' batched pair loops (pair_batch.h): on x86-64
  // CPUs with AVX2 each chunk runs in a function compiled for AVX2 with f
  // inlined into it, so the lane loops use 8-wide vectors; elsewhere (and
  // with set_simd(false)) it is for_each. The results are the same bit for
  // bit: the lanes do the same IEEE operations (no fused multiply-add) and
  // are summed in the same order.
  template <class F>
  void for_each_simd(uint32_t n, F f) const {
#if EDDY_CPU_DISPATCH
    if (simd_enabled() && cpu_supports_avx2())
      return for_chunks(n, [&](uint32_t lo, uint32_t hi) { run_avx2(f, lo, hi); });
#endif
    for_each(n, std::move(f));
  }

  // Whether for_each_simd may use AVX2 (default true; for the tests that
  // compare both paths, and to rule the dispatch out when measuring).
  static void set_simd(bool on) { cpu_simd_flag() = on; }
  static bool simd_enabled() { return cpu_simd_flag(); }
  static bool uses_avx2() { return EDDY_CPU_DISPATCH && simd_enabled() && cpu_supports_avx2(); }

  // Runs f(b) for each of nb blocks of [0, n): block b covers [b*bs, min(n, (b+1)*bs)).
  // The blocking depends on n only.
  template <class F>
  void for_each_block(uint32_t n, uint32_t bs, F f) const {
    const uint32_t nb = (n + bs - 1) / bs;
    if (nb <= 1 || threads() == 1) {
      for (uint32_t b = 0; b < nb; ++b) f(b, b * bs, std::min(n, (b + 1) * bs));
      return;
    }
    arena_->execute([&] {
      tbb::parallel_for(tbb::blocked_range<uint32_t>(0, nb, 1), [&](const tbb::blocked_range<uint32_t>& r) {
        for (uint32_t b = r.begin(); b != r.end(); ++b) f(b, b * bs, std::min(n, (b + 1) * bs));
      });
    });
  }

  template <class T, class Map, class Op>
  T reduce(uint32_t n, T init, Map map, Op op) const {
    static_assert(sizeof(T) <= 64, "reduce partials live on the stack");
    if (n == 0) return init;
    const uint32_t bs = block_size(n);
    const uint32_t nb = (n + bs - 1) / bs;
    T partial[kMaxBlocks];
    for_each_block(n, bs, [&](uint32_t b, uint32_t lo, uint32_t hi) {
      T acc = map(lo);
      for (uint32_t i = lo + 1; i < hi; ++i) acc = op(acc, map(i));
      partial[b] = acc;
    });
    T acc = init;
    for (uint32_t b = 0; b < nb; ++b) acc = op(acc, partial[b]);
    return acc;
  }

  uint32_t exclusive_scan(const uint32_t* in, uint32_t* out, uint32_t n) const {
    if (n == 0) return 0;
    const uint32_t bs = block_size(n);
    const uint32_t nb = (n + bs - 1) / bs;
    uint64_t sums[kMaxBlocks];
    for_each_block(n, bs, [&](uint32_t b, uint32_t lo, uint32_t hi) {
      uint64_t s = 0;
      for (uint32_t i = lo; i < hi; ++i) s += in[i];
      sums[b] = s;
    });
    uint64_t run = 0;
    for (uint32_t b = 0; b < nb; ++b) {
      const uint64_t s = sums[b];
      sums[b] = run;
      run += s;
    }
    if (run > UINT32_MAX) throw Error("exclusive_scan: total exceeds 2^32");
    for_each_block(n, bs, [&](uint32_t b, uint32_t lo, uint32_t hi) {
      uint32_t r = static_cast<uint32_t>(sums[b]);
      for (uint32_t i = lo; i < hi; ++i) {
        const uint32_t t = in[i];
        out[i] = r;
        r += t;
      }
    });
    return static_cast<uint32_t>(run);
  }

  // Stable: equal keys keep their input order, so the result is unique and
  // independent of the thread count. Passes whose digit is the same for all
  // keys are skipped.
  void sort_by_key(uint64_t* keys, uint32_t* values, uint32_t n, int key_bits) const {
    if (n < 2 || key_bits <= 0) return;
    if (alt_keys_.size() < n) {
      alt_keys_.resize(n);
      alt_values_.resize(n);
    }
    constexpr uint32_t kRadix = 256;
    const uint32_t bs = std::max<uint32_t>(4096, (n + kSortBlocks - 1) / kSortBlocks);
    const uint32_t nb = (n + bs - 1) / bs;
    hist_.resize(size_t(nb) * kRadix);
    uint64_t* src_k = keys;
    uint32_t* src_v = values;
    uint64_t* dst_k = alt_keys_.data();
    uint32_t* dst_v = alt_values_.data();
    for (int shift = 0; shift < key_bits; shift += 8) {
      uint32_t* hist = hist_.data();
      for_each_block(n, bs, [&](uint32_t b, uint32_t lo, uint32_t hi) {
        uint32_t* h = hist + size_t(b) * kRadix;
        std::fill(h, h + kRadix, 0u);
        for (uint32_t i = lo; i < hi; ++i) ++h[(src_k[i] >> shift) & 0xff];
      });
      // Offsets digit-major, block-minor: stable across blocks.
      uint32_t run = 0;
      bool trivial = false;
      for (uint32_t d = 0; d < kRadix; ++d) {
        uint32_t total = 0;
        for (uint32_t b = 0; b < nb; ++b) {
          const uint32_t c = hist[size_t(b) * kRadix + d];
          hist[size_t(b) * kRadix + d] = run;
          run += c;
          total += c;
        }
        if (total == n) trivial = true;
      }
      if (trivial) continue;
      for_each_block(n, bs, [&](uint32_t b, uint32_t lo, uint32_t hi) {
        uint32_t* h = hist + size_t(b) * kRadix;
        for (uint32_t i = lo; i < hi; ++i) {
          const uint32_t o = h[(src_k[i] >> shift) & 0xff]++;
          dst_k[o] = src_k[i];
          dst_v[o] = src_v[i];
        }
      });
      std::swap(src_k, dst_k);
      std::swap(src_v, dst_v);
    }
    if (src_k != keys) {
      std::memcpy(keys, src_k, sizeof(uint64_t) * n);
      std::memcpy(values, src_v, sizeof(uint32_t) * n);
    }
  }

  template <class T>
  void upload(Vector<T>& dst, const T* src, size_t n) const {
    dst.resize(n);
    if (n) std::memcpy(dst.data(), src, sizeof(T) * n);
  }
  template <class T>
  void download(const Vector<T>& src, T* dst, size_t n) const {
    EDDY_DEMAND(n <= src.size());
    if (n) std::memcpy(dst, src.data(), sizeof(T) * n);
  }

 private:
  static constexpr uint32_t kSerialBelow = 1024;

  // chunk(lo, hi) over [0, n): one chunk on small n or one thread, else
  // TBB's chunks of at least 512.
  template <class Chunk>
  void for_chunks(uint32_t n, Chunk chunk) const {
    if (n == 0) return;
    if (n < kSerialBelow || threads() == 1) return chunk(0u, n);
    arena_->execute([&] {
      tbb::parallel_for(tbb::blocked_range<uint32_t>(0, n, 512),
                        [&](const tbb::blocked_range<uint32_t>& r) { chunk(r.begin(), r.end()); });
    });
  }

#if EDDY_CPU_DISPATCH
  // f(i) for i in [lo, hi), compiled for AVX2 with every call inside it
  // inlined where it can be (flatten), so f's loops are AVX2 code. Only
  // reached when the CPU has AVX2.
  template <class F>
  __attribute__((target("avx2"), flatten, noinline)) static void run_avx2(const F& f, uint32_t lo, uint32_t hi) {
    for (uint32_t i = lo; i < hi; ++i) f(i);
  }
#endif
  static constexpr uint32_t kMaxBlocks = 1024;
  static constexpr uint32_t kSortBlocks = 64;
  static uint32_t block_size(uint32_t n) { return std::max<uint32_t>(2048, (n + kMaxBlocks - 1) / kMaxBlocks); }

  std::shared_ptr<tbb::task_arena> arena_;
  mutable std::vector<uint64_t> alt_keys_;
  mutable std::vector<uint32_t> alt_values_;
  mutable std::vector<uint32_t> hist_;
};

}  // namespace eddy
