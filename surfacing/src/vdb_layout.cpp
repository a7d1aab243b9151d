// The outer layout of a .vdb file, checked field by field before OpenVDB
// reads it (vdb_layout.h). Needs no OpenVDB header: the format facts are
// those of OpenVDB's io/Archive, io/GridDescriptor and MetaMap (file format
// versions 222-224).
#include "vdb_layout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "eddy/core/error.h"

namespace eddy {
namespace {

constexpr int64_t kMagic = 0x56444220;      // " BDV" as a little-endian int64
constexpr uint32_t kOldestVersion = 222;    // node-mask compression, per-grid compression flags
constexpr uint32_t kInstancingVersion = 216;  // descriptors name an instance parent
constexpr std::size_t kUuidChars = 36;

// Reads little-endian fields from an open file within [pos, end), where
// `end` is the current section's end; every read and every declared length
// is checked against it.
class LayoutReader {
 public:
  LayoutReader(const std::string& path, std::ifstream& in, uint64_t size) : path_(path), in_(in), end_(size), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t size() const { return size_; }
  void section(uint64_t end) { end_ = end; }
  void seek(uint64_t at) {
    pos_ = at;
    in_.clear();
    in_.seekg(std::streamoff(at));
  }

  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v{};
    in_.read(reinterpret_cast<char*>(&v), sizeof(T));
    if (!in_) fail(what, "cannot be read");
    pos_ += sizeof(T);
    return v;
  }
  // A length-prefixed string; its first 256 bytes are kept (for messages).
  std::string string(const char* what) {
    const uint64_t at = pos_;
    const uint32_t n = get<uint32_t>(what);
    need(n, what, at);
    std::string s(std::min<uint32_t>(n, 256), '\0');
    in_.read(s.data(), std::streamsize(s.size()));
    if (!in_) fail(what, "cannot be read");
    pos_ += s.size();
    skip(n - s.size(), what);
    return s;
  }
  // n bytes the caller has checked with need().
  void read(void* out, uint64_t n) {
    in_.read(static_cast<char*>(out), std::streamsize(n));
    if (!in_) fail("data", "cannot be read");
    pos_ += n;
  }
  void skip(uint64_t n, const char* what) {
    need(n, what);
    in_.seekg(std::streamoff(n), std::ios::cur);
    pos_ += n;
  }
  // Fails unless n more bytes lie in the section; `at` is where the field
  // declaring them starts (the current position when not given).
  void need(uint64_t n, const char* what, uint64_t at = UINT64_MAX) {
    if (n > end_ - pos_) {
      std::ostringstream m;
      m << "declares " << n << " bytes, but " << (end_ - pos_) << " are left in its part of the file";
      fail(what, m.str(), at);
    }
  }
  [[noreturn]] void fail(const std::string& what, const std::string& why, uint64_t at = UINT64_MAX) const {
    std::ostringstream m;
    m << path_ << ": not a readable VDB file (damaged?): " << what << " at byte " << (at == UINT64_MAX ? pos_ : at)
      << " " << why;
    throw Error(m.str());
  }

 private:
  const std::string& path_;
  std::ifstream& in_;
  uint64_t pos_ = 0;
  uint64_t end_;
  uint64_t size_;
};

// Bytes OpenVDB reads for a value of a registered fixed-size metadata type
// (TypedMetadata::readValue reads sizeof(T) whatever size the entry
// declares); 0: a string, the delayed-load record or an unregistered type,
// which read what the entry declares.
uint64_t fixed_metadata_bytes(const std::string& type) {
  static const std::pair<const char*, uint64_t> sizes[] = {
      {"bool", 1},   {"float", 4},  {"int32", 4},  {"double", 8}, {"int64", 8},  {"vec2i", 8},
      {"vec2s", 8},  {"vec2d", 16}, {"vec3i", 12}, {"vec3s", 12}, {"vec3d", 24}, {"vec4i", 16},
      {"vec4s", 16}, {"vec4d", 32}, {"mat4s", 64}, {"mat4d", 128}};
  for (const auto& [name, bytes] : sizes)
    if (type == name) return bytes;
  return 0;
}

// The delayed-load record (io::DelayedLoadMetadata::readValue): an entry
// count and two arrays sized by it (a byte mask and 64-bit compressed sizes),
// each stored compressed (a byte count, then the bytes) or raw (count 0,
// then the array); 0xffffffff for the sizes means none. It reads what it
// finds, then skips to the declared size if that is further. OpenVDB fills
// both arrays before reading them: no more entries than the file has bytes.
void check_delayed_load(LayoutReader& r, const std::string& what, uint32_t declared) {
  if (declared == 0) return;
  const uint64_t start = r.pos(), entries_at = start;
  const uint32_t entries = r.get<uint32_t>((what + " entry count").c_str());
  if (entries > r.size())
    r.fail(what, "lists " + std::to_string(entries) + " entries, more than the file has bytes", entries_at);
  const uint32_t mask = r.get<uint32_t>((what + " mask size").c_str());
  r.skip(mask > 0 ? mask : entries, (what + " mask").c_str());
  const uint32_t sizes = r.get<uint32_t>((what + " sizes size").c_str());
  if (sizes != 0xffffffffu) r.skip(sizes > 0 ? uint64_t(sizes) : uint64_t(entries) * 8, (what + " sizes").c_str());
  const uint64_t counted = r.pos() - start;
  if (counted < declared) r.skip(declared - counted, what.c_str());
}

// A metadata map (MetaMap::readMeta): count, then name, type, value size and
// value per entry, each value read as its type reads it.
void check_metadata(LayoutReader& r, const std::string& where) {
  const uint64_t at = r.pos();
  const uint32_t count = r.get<uint32_t>((where + " metadata count").c_str());
  // Each entry takes at least its three 32-bit lengths.
  if (uint64_t(count) * 12 > r.size() - r.pos())
    r.fail(where + " metadata count", "is " + std::to_string(count) + ", more entries than the file has room for", at);
  for (uint32_t i = 0; i < count; ++i) {
    const std::string name = r.string((where + " metadata name").c_str());
    const std::string what = where + " metadata '" + name + "'";
    const std::string type = r.string((what + " type").c_str());
    const uint64_t size_at = r.pos();
    const uint32_t bytes = r.get<uint32_t>((what + " size").c_str());
    if (const uint64_t fixed = fixed_metadata_bytes(type)) {
      r.skip(fixed, what.c_str());
    } else if (type == "__delayedload") {
      check_delayed_load(r, what, bytes);
    } else {
      r.need(bytes, what.c_str(), size_at);
      r.skip(bytes, what.c_str());
    }
  }
}

// Bytes of a transform's map after its type name (OpenVDB's math/Maps.h:
// affine and unitary maps a 4x4 double matrix; scale maps five double
// triples; translation one; scale-translate six). 0: a map whose size is
// not fixed (frustum) or not known.
uint64_t map_bytes(const std::string& type) {
  if (type == "AffineMap" || type == "UnitaryMap") return 128;
  if (type == "ScaleMap" || type == "UniformScaleMap") return 120;
  if (type == "TranslationMap") return 24;
  if (type == "ScaleTranslateMap" || type == "UniformScaleTranslateMap") return 144;
  return 0;
}

// What the layout check knows of a tree's values, from its type name
// "Tree_<value>_5_4_3" ("_HalfFloat" appended when its real values are
// saved as half floats; backgrounds, tiles and inactive values are still
// written at full size).
struct TreeValues {
  uint64_t bytes = 0;       // a value in memory; 0: another layout or an unknown type
  uint64_t data_bytes = 0;  // a value in the data blocks (half floats: 2 a component)
  bool half = false;
  bool plain_leaves = false;  // leaves store their values as other nodes do (not bool, mask or points)
};

TreeValues tree_values(const std::string& tree_type) {
  TreeValues tv;
  std::string t = tree_type;
  const std::string half = "_HalfFloat";
  if (t.size() > half.size() && t.compare(t.size() - half.size(), half.size(), half) == 0) {
    t.resize(t.size() - half.size());
    tv.half = true;
  }
  const std::string head = "Tree_", tail = "_5_4_3";
  if (t.size() <= head.size() + tail.size() || t.compare(0, head.size(), head) != 0 ||
      t.compare(t.size() - tail.size(), tail.size(), tail) != 0)
    return tv;
  const std::string v = t.substr(head.size(), t.size() - head.size() - tail.size());
  uint64_t components = 1, real = 0;  // real: bytes of a real component (4 float, 8 double)
  tv.plain_leaves = true;
  if (v == "bool" || v == "mask") tv.bytes = 1, tv.plain_leaves = false;
  else if (v == "float") tv.bytes = 4, real = 4;
  else if (v == "double") tv.bytes = 8, real = 8;
  else if (v == "int32" || v == "uint32") tv.bytes = 4;
  else if (v == "int64") tv.bytes = 8;
  else if (v == "ptdataidx32" || v == "ptidx32") tv.bytes = 4, tv.plain_leaves = v == "ptidx32";
  else if (v == "ptdataidx64" || v == "ptidx64") tv.bytes = 8, tv.plain_leaves = v == "ptidx64";
  else if (v == "vec3s") tv.bytes = 12, real = 4, components = 3;
  else if (v == "vec3d") tv.bytes = 24, real = 8, components = 3;
  else if (v == "vec3i") tv.bytes = 12;
  else tv.plain_leaves = false;
  tv.half = tv.half && real > 0;
  tv.data_bytes = tv.half ? 2 * components : tv.bytes;
  return tv;
}

constexpr uint32_t kZip = 0x1, kActiveMask = 0x2, kBlosc = 0x4;  // io::COMPRESS_*

// Walks a 5-4-3 tree's topology and data blocks as OpenVDB reads them,
// checking every count and every compressed block's declared size before
// OpenVDB trusts it. OpenVDB 10 reads a block stored uncompressed (a
// negative size) straight into a buffer sized by the node, whatever size
// the file declares: a damaged size overflows the heap (found by
// fuzz/fuzz_vdb). io::readCompressedValues, io::readData,
// io::bloscFromStream / unzipFromStream and the nodes' readTopology /
// readBuffers are the format.
class TreeWalk {
 public:
  TreeWalk(LayoutReader& r, std::string what, const TreeValues& tv, uint32_t compression)
      : r_(r), what_(std::move(what)), tv_(tv), compression_(compression) {}

  // Tree::readTopology and RootNode::readTopology: the buffer count, the
  // background, the tile and child counts (a tile is an origin, a value and
  // an active flag; a child at least an origin and two 32^3-bit masks),
  // the tiles, then each child with its origin.
  void topology() {
    r_.get<int32_t>((what_ + " buffer count").c_str());
    r_.skip(tv_.bytes, (what_ + " background value").c_str());
    const uint64_t at = r_.pos();
    const uint64_t tiles = r_.get<uint32_t>((what_ + " tile count").c_str());
    const uint64_t children = r_.get<uint32_t>((what_ + " child count").c_str());
    const uint64_t need = tiles * (12 + tv_.bytes + 1) + children * (12 + 2 * 4096);
    r_.need(need, (what_ + " root (" + std::to_string(tiles) + " tiles, " + std::to_string(children) + " children)").c_str(),
            at);
    r_.skip(tiles * (12 + tv_.bytes + 1), (what_ + " root tiles").c_str());
    for (uint64_t c = 0; c < children; ++c) {
      r_.skip(12, (what_ + " root child origin").c_str());
      internal(5);
    }
  }

  // LeafNode::readBuffers for each leaf, in the topology's order: its value
  // mask again, then its values.
  void buffers() {
    for (const uint32_t active : leaf_active_) {
      r_.skip(64, (what_ + " leaf value mask").c_str());
      values(512, active, "leaf values");
    }
  }

 private:
  // InternalNode::readTopology: child mask, value mask, the node's values,
  // then each child in index order; a leaf's topology is its value mask.
  void internal(int log2) {
    const uint64_t bits = uint64_t(1) << (3 * log2);
    std::vector<uint8_t> child(bits / 8), value(bits / 8);
    read_mask(child, "internal node child mask");
    read_mask(value, "internal node value mask");
    values(bits, popcount(value), "internal node values");
    for (uint64_t i = 0; i < bits; ++i) {
      if (!(child[i / 8] >> (i % 8) & 1)) continue;
      if (log2 == 5) {
        internal(4);
      } else {
        std::vector<uint8_t> leaf(64);
        read_mask(leaf, "leaf value mask");
        leaf_active_.push_back(popcount(leaf));
      }
    }
  }

  // io::readCompressedValues of `count` values of which `active` are on.
  void values(uint64_t count, uint64_t active, const char* what) {
    const std::string w = what_ + " " + what;
    const int8_t meta = r_.get<int8_t>((w + " flag").c_str());
    if (meta < 0 || meta > 6) r_.fail(w + " flag", "is " + std::to_string(meta) + ", not 0-6");
    if (meta == 2 || meta == 4 || meta == 5) r_.skip(tv_.bytes, (w + " inactive value").c_str());
    if (meta == 5) r_.skip(tv_.bytes, (w + " second inactive value").c_str());
    if (meta == 3 || meta == 4 || meta == 5) r_.skip(count / 8, (w + " selection mask").c_str());
    const uint64_t n = (compression_ & kActiveMask) && meta != 6 ? active : count;
    if (tv_.half && n == 0) return;  // HalfReader reads nothing for no values
    block(n * tv_.data_bytes, w);
  }

  // io::readData: a compressed block (its byte count, negative when stored
  // raw, which must then be exactly the values' bytes) or the raw values.
  void block(uint64_t bytes, const std::string& w) {
    if (!(compression_ & (kBlosc | kZip))) {
      r_.skip(bytes, w.c_str());
      return;
    }
    const uint64_t at = r_.pos();
    const int64_t n = r_.get<int64_t>((w + " block size").c_str());
    if (n <= 0) {
      const uint64_t raw = uint64_t(0) - uint64_t(n);  // |n|, even for the most negative n (found by fuzz_vdb)
      if (raw != bytes)
        r_.fail(w + " block", "is stored raw with " + std::to_string(raw) + " bytes where the node holds " +
                                  std::to_string(bytes),
                at);
      r_.skip(bytes, w.c_str());
    } else {
      r_.skip(uint64_t(n), (w + " compressed block").c_str());
    }
  }

  void read_mask(std::vector<uint8_t>& m, const char* what) {
    r_.need(m.size(), (what_ + " " + what).c_str());
    r_.read(m.data(), m.size());
  }
  static uint32_t popcount(const std::vector<uint8_t>& m) {
    uint32_t c = 0;
    for (uint8_t b : m) c += uint32_t(__builtin_popcount(b));
    return c;
  }

  LayoutReader& r_;
  std::string what_;
  TreeValues tv_;
  uint32_t compression_;
  std::vector<uint32_t> leaf_active_;  // active values of each leaf, topology order
};

}  // namespace

VdbLayout check_vdb_layout(const std::string& path) {
  VdbLayout out;
  namespace fs = std::filesystem;
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot be opened");
  LayoutReader r(path, in, size);

  if (size < 8 || r.get<int64_t>("magic number") != kMagic) throw Error(path + ": not a readable VDB file: no VDB magic number");
  const uint32_t version = r.get<uint32_t>("format version");
  if (version < kOldestVersion)
    r.fail("format version",
           "is " + std::to_string(version) + ", older than Eddy reads (" + std::to_string(kOldestVersion) +
               ", OpenVDB 2.0); re-save it with a newer tool",
           8);
  r.get<uint32_t>("library major version");
  r.get<uint32_t>("library minor version");
  if (r.get<char>("grid-offsets flag") != 1)
    r.fail("grid-offsets flag", "is not set: the file was written as a stream, which Eddy does not read", 20);
  r.skip(kUuidChars, "UUID");
  check_metadata(r, "file");

  const uint64_t grids_at = r.pos();
  const int32_t grids = r.get<int32_t>("grid count");
  // A descriptor takes at least three lengths and three offsets.
  if (grids < 0 || uint64_t(grids) * 36 > size - r.pos())
    r.fail("grid count", "is " + std::to_string(grids) + ", more grids than the file has room for", grids_at);
  for (int32_t g = 0; g < grids; ++g) {
    const std::string name = r.string("grid name");
    const std::string what = "grid '" + name + "'";
    const std::string type = r.string((what + " type").c_str());
    std::string parent;
    if (version >= kInstancingVersion) parent = r.string((what + " instance parent").c_str());
    const uint64_t here = r.pos() + 24;
    const int64_t start = r.get<int64_t>((what + " start offset").c_str());
    const int64_t block = r.get<int64_t>((what + " data offset").c_str());
    const int64_t end = r.get<int64_t>((what + " end offset").c_str());
    if (!(start >= 0 && uint64_t(start) >= here && start <= block && block <= end && uint64_t(end) <= size)) {
      std::ostringstream m;
      m << "are " << start << ", " << block << ", " << end << ": not rising from byte " << here
        << " within the file's " << size << " bytes";
      r.fail(what + " offsets", m.str(), here - 24);
    }
    // OpenVDB reads the grid from its start offset, wherever that is.
    r.seek(uint64_t(start));
    r.section(uint64_t(block));
    const uint32_t compression = r.get<uint32_t>((what + " compression flags").c_str());
    check_metadata(r, what);
    const std::string map = r.string((what + " transform type").c_str());
    // An instance shares its parent's tree and stores none; trees of other
    // layouts, or after a map of no fixed size, are left to OpenVDB.
    const TreeValues tv = tree_values(type);
    const uint64_t mb = map_bytes(map);
    if (type.find("ptdataidx") != std::string::npos) out.unchecked_point_data = true;
    if (parent.empty() && tv.bytes > 0 && mb > 0) {
      r.skip(mb, (what + " transform").c_str());
      TreeWalk walk(r, what, tv, compression);
      walk.topology();
      if (r.pos() != uint64_t(block))
        r.fail(what + " topology", "ends " + std::to_string(int64_t(block) - int64_t(r.pos())) +
                                       " bytes before its data offset " + std::to_string(block));
      if (tv.plain_leaves) {
        r.section(uint64_t(end));
        walk.buffers();
        if (r.pos() != uint64_t(end))
          r.fail(what + " data", "ends " + std::to_string(int64_t(end) - int64_t(r.pos())) +
                                     " bytes before its end offset " + std::to_string(end));
      }
    }
    r.section(size);
    r.seek(uint64_t(end));
  }
  return out;
}

}  // namespace eddy
