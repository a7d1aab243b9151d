#pragma once
// MLS-MPM's sparse grid (see mpm/solver.h): particles binned by
// (4x4x4 block, cell), the particle blocks, the node blocks their stencils
// reach and the two tables linking them. A node block N gathers from the
// particle blocks N - {0,1}^3, and a particle block P scatters to (and G2P
// reads from) the node blocks P + {0,1}^3, so no hash map is needed. Block
// coordinates are packed into sorted 64-bit keys. The arrays grow and never
// shrink (grow_buffer): a step allocates only when the particles cover more
// blocks than in any step before.
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "eddy/core/error.h"
#include "eddy/core/grow_buffer.h"
#include "eddy/core/hd.h"
#include "eddy/core/vec.h"

namespace eddy {

// Integer cell / block coordinates.
struct Int3 {
  int32_t x, y, z;
};
struct Int3Bounds {
  Int3 lo, hi;
};
struct Int3BoundsOp {
  EDDY_HD_INLINE Int3Bounds operator()(const Int3Bounds& a, const Int3Bounds& b) const {
    return {{a.lo.x < b.lo.x ? a.lo.x : b.lo.x, a.lo.y < b.lo.y ? a.lo.y : b.lo.y, a.lo.z < b.lo.z ? a.lo.z : b.lo.z},
            {a.hi.x > b.hi.x ? a.hi.x : b.hi.x, a.hi.y > b.hi.y ? a.hi.y : b.hi.y, a.hi.z > b.hi.z ? a.hi.z : b.hi.z}};
  }
};

namespace mpm {

// Packs relative block coordinates into a key: x in the high bits.
struct BlockPacking {
  int32_t shift_y = 0, shift_x = 0;  // bits of z, bits of y + z
  Int3 origin{0, 0, 0};              // block coordinates of key 0
  EDDY_HD_INLINE uint64_t pack(Int3 b) const {
    return (uint64_t(uint32_t(b.x - origin.x)) << shift_x) | (uint64_t(uint32_t(b.y - origin.y)) << shift_y) |
           uint64_t(uint32_t(b.z - origin.z));
  }
  EDDY_HD_INLINE Int3 unpack(uint64_t k) const {
    const uint64_t my = (uint64_t(1) << (shift_x - shift_y)) - 1, mz = (uint64_t(1) << shift_y) - 1;
    return {int32_t(k >> shift_x) + origin.x, int32_t((k >> shift_y) & my) + origin.y, int32_t(k & mz) + origin.z};
  }
  // The key of block b + o for o in {0,1}^3 (bit 0: x, bit 1: y, bit 2: z).
  EDDY_HD_INLINE uint64_t offset(uint64_t k, int o, int sign) const {
    const uint64_t d = (uint64_t(o & 1) << shift_x) + (uint64_t((o >> 1) & 1) << shift_y) + uint64_t((o >> 2) & 1);
    return sign > 0 ? k + d : k - d;
  }
};

EDDY_HD_INLINE int32_t floor_div4(int32_t c) { return c >> 2; }  // arithmetic shift: floor
EDDY_HD_INLINE int local_index(int32_t cx, int32_t cy, int32_t cz) { return (cx & 3) | ((cy & 3) << 2) | ((cz & 3) << 4); }

EDDY_HD_INLINE Int3 base_cell(Vec3f x, float inv_dx) {
  return {int32_t(floorf(x.x * inv_dx - 0.5f)), int32_t(floorf(x.y * inv_dx - 0.5f)),
          int32_t(floorf(x.z * inv_dx - 0.5f))};
}

// First index in the sorted keys[lo, hi) that is >= k.
EDDY_HD_INLINE uint32_t lower_bound(const uint64_t* keys, uint32_t lo, uint32_t hi, uint64_t k) {
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
EDDY_HD_INLINE uint32_t find_key(const uint64_t* keys, uint32_t n, uint64_t k) {
  const uint32_t i = lower_bound(keys, 0, n, k);
  return i < n && keys[i] == k ? i : 0xffffffffu;
}

template <class Exec>
class SparseGrid {
 public:
  template <class T>
  using Vec = typename Exec::template Vector<T>;
  static constexpr uint32_t kNone = 0xffffffffu;  // no block

  // Room for n particles (at load).
  void resize(uint32_t n) {
    keys_.resize(n);
    order_.resize(n);
    pb_of_.resize(n);
    flags_.resize(n + 1);
  }

  // x (n particles, cells of 1 / inv_dx = dx m) => keys_ (block, cell), order_ (sorted position -> particle), the
  // particle blocks (pb_keys_, pb_start_), cell ranges (cell_start_) and
  // each particle's block (pb_of_).
  void bin(const Exec& ex, const Vec3f* x, uint32_t n, float inv_dx, float dx) {
    const Int3Bounds bb = ex.reduce(
        n, Int3Bounds{{INT32_MAX, INT32_MAX, INT32_MAX}, {INT32_MIN, INT32_MIN, INT32_MIN}},
        [=] EDDY_HD(uint32_t i) {
          const Int3 b = mpm::base_cell(x[i], inv_dx);
          const Int3 k{mpm::floor_div4(b.x), mpm::floor_div4(b.y), mpm::floor_div4(b.z)};
          return Int3Bounds{k, k};
        },
        Int3BoundsOp{});
    // Room for the node blocks one above the highest particle block.
    auto bits = [](int32_t extent) {
      int b = 1;
      while ((int64_t(1) << b) < int64_t(extent) + 2) ++b;
      return b;
    };
    const int bx = bits(bb.hi.x - bb.lo.x), by = bits(bb.hi.y - bb.lo.y), bz = bits(bb.hi.z - bb.lo.z);
    if (bx + by + bz > 57)
      throw Error("MPM: the particles span too many grid blocks for dx = " + std::to_string(dx) +
                  " m (a coarser dx or a smaller domain is needed)");
    pack_.origin = bb.lo;
    key_bits_ = bx + by + bz;
    pack_.shift_y = bz;
    pack_.shift_x = by + bz;
    const mpm::BlockPacking pack = pack_;
    uint64_t* keys = keys_.data();
    uint32_t* order = order_.data();
    ex.for_each(n, [=] EDDY_HD(uint32_t i) {
      const Int3 b = mpm::base_cell(x[i], inv_dx);
      const Int3 k{mpm::floor_div4(b.x), mpm::floor_div4(b.y), mpm::floor_div4(b.z)};
      keys[i] = (pack.pack(k) << 6) | uint64_t(mpm::local_index(b.x, b.y, b.z));
      order[i] = i;
    });
    ex.sort_by_key(keys, order, n, bx + by + bz + 6);
    // Particle blocks: where the block part of the sorted keys changes.
    uint32_t* flags = flags_.data();
    ex.for_each(n, [=] EDDY_HD(uint32_t s) { flags[s] = (s == 0 || (keys[s] >> 6) != (keys[s - 1] >> 6)) ? 1u : 0u; });
    // flags -> block index of each sorted position (inclusive scan - 1).
    npb_ = ex.exclusive_scan(flags, flags, n);
    grow_buffer(pb_keys_, npb_);
    grow_buffer(pb_start_, npb_ + 1);
    grow_buffer(cell_start_, size_t(npb_) * 64);
    uint64_t* pbk = pb_keys_.data();
    uint32_t* pbs = pb_start_.data();
    uint32_t* pb_of = pb_of_.data();
    const uint32_t npb = npb_;
    ex.for_each(n, [=] EDDY_HD(uint32_t s) {
      const bool first = s == 0 || (keys[s] >> 6) != (keys[s - 1] >> 6);
      const uint32_t b = first ? flags[s] : flags[s] - 1;
      if (first) {
        pbk[b] = keys[s] >> 6;
        pbs[b] = s;
      }
      if (s == n - 1) pbs[npb] = n;
      pb_of[order[s]] = b;
    });
    uint32_t* cs = cell_start_.data();
    ex.for_each(npb * 64, [=] EDDY_HD(uint32_t q) {
      const uint32_t b = q >> 6;
      cs[q] = mpm::lower_bound(keys, pbs[b], pbs[b + 1], (pbk[b] << 6) | uint64_t(q & 63));
    });
  }

  // Node blocks: the particle blocks shifted by {0,1}^3, deduplicated; and
  // the tables linking the two lists.
  // `check` sees the node block count before anything is sized for it (and
  // may throw). A std::function, not a template: nvcc's extended lambdas
  // below may not sit in a function templated on a local lambda's type.
  void build_node_blocks(const Exec& ex, const std::function<void(uint64_t)>& check) {
    const uint32_t nc = npb_ * 8;
    grow_buffer(cand_, nc);
    grow_buffer(cand_idx_, nc + 1);
    uint64_t* cand = cand_.data();
    uint32_t* idx = cand_idx_.data();
    const uint64_t* pbk = pb_keys_.data();
    const mpm::BlockPacking pack = pack_;
    ex.for_each(nc, [=] EDDY_HD(uint32_t q) {
      cand[q] = pack.offset(pbk[q >> 3], int(q & 7), +1);
      idx[q] = q;
    });
    ex.sort_by_key(cand, idx, nc, key_bits_);
    uint32_t* flags = idx;  // the sort's values are not needed: reuse as flags
    ex.for_each(nc, [=] EDDY_HD(uint32_t q) { flags[q] = (q == 0 || cand[q] != cand[q - 1]) ? 1u : 0u; });
    nnb_ = ex.exclusive_scan(flags, flags, nc);
    check(nnb_);
    grow_buffer(nb_keys_, nnb_);
    uint64_t* nbk = nb_keys_.data();
    ex.for_each(nc, [=] EDDY_HD(uint32_t q) {
      if (q == 0 || cand[q] != cand[q - 1]) nbk[flags[q]] = cand[q];
    });
    grow_buffer(nb_pb_, size_t(nnb_) * 8);
    grow_buffer(pb_nb_, size_t(npb_) * 8);
    uint32_t* nb_pb = nb_pb_.data();
    uint32_t* pb_nb = pb_nb_.data();
    const uint32_t npb = npb_, nnb = nnb_;
    ex.for_each(nnb * 8, [=] EDDY_HD(uint32_t q) {
      // The particle block N - o, if N - o stays inside the packing's range.
      const Int3 nbc = pack.unpack(nbk[q >> 3]);
      const int o = int(q & 7);
      const Int3 pc{nbc.x - (o & 1), nbc.y - ((o >> 1) & 1), nbc.z - ((o >> 2) & 1)};
      const bool inside = pc.x >= pack.origin.x && pc.y >= pack.origin.y && pc.z >= pack.origin.z;
      nb_pb[q] = inside ? mpm::find_key(pbk, npb, pack.pack(pc)) : kNone;
    });
    ex.for_each(npb * 8, [=] EDDY_HD(uint32_t q) {
      pb_nb[q] = mpm::find_key(nbk, nnb, pack.offset(pbk[q >> 3], int(q & 7), +1));
    });
  }

  // After the particle arrays were permuted into the sorted order: sorted
  // position s now holds particle s.
  void sorted_in_place(const Exec& ex, uint32_t n) {
    uint32_t* ord = order_.data();
    uint32_t* pb_of = pb_of_.data();
    uint32_t* flags = flags_.data();
    const uint64_t* keys = keys_.data();
    ex.for_each(n, [=] EDDY_HD(uint32_t s) {
      ord[s] = s;
      const bool first = s == 0 || (keys[s] >> 6) != (keys[s - 1] >> 6);
      pb_of[s] = first ? flags[s] : flags[s] - 1;
    });
  }

  const BlockPacking& pack() const { return pack_; }
  uint32_t particle_blocks() const { return npb_; }
  uint32_t node_blocks() const { return nnb_; }
  // Sorted position -> particle; each particle's block.
  const uint32_t* order() const { return order_.data(); }
  const uint32_t* pb_of() const { return pb_of_.data(); }
  // Per particle block: its key, its first sorted position (npb + 1
  // entries) and the start of each of its 64 cells; its 8 node blocks.
  const uint64_t* pb_keys() const { return pb_keys_.data(); }
  const uint32_t* pb_start() const { return pb_start_.data(); }
  const uint32_t* cell_start() const { return cell_start_.data(); }
  const uint32_t* pb_nb() const { return pb_nb_.data(); }
  // Per node block: its key, and its 8 particle blocks (kNone where none).
  const uint64_t* nb_keys() const { return nb_keys_.data(); }
  const uint32_t* nb_pb() const { return nb_pb_.data(); }

  // Bytes of the binning arrays, and of the node block tables.
  std::size_t bin_bytes() const {
    return keys_.size() * 8 + pb_keys_.size() * 8 +
           (order_.size() + pb_of_.size() + flags_.size() + pb_start_.size() + cell_start_.size()) * 4;
  }
  std::size_t table_bytes() const {
    return (nb_keys_.size() + cand_.size()) * 8 + (nb_pb_.size() + pb_nb_.size() + cand_idx_.size()) * 4;
  }

 private:
  BlockPacking pack_;
  Vec<uint64_t> keys_, pb_keys_, cand_, nb_keys_;
  Vec<uint32_t> order_, pb_of_, flags_, pb_start_, cell_start_, cand_idx_, nb_pb_, pb_nb_;
  uint32_t npb_ = 0, nnb_ = 0;
  int key_bits_ = 0;
};

}  // namespace mpm

}  // namespace eddy
