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

// A metadata map (MetaMap::readMeta): count, then name, type, value size and
// value per entry. The delayed-load record's entry count sizes two arrays
// OpenVDB fills before reading them: no more entries than the file has bytes.
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
    r.need(bytes, what.c_str(), size_at);
    if (type == "__delayedload" && bytes >= 4) {
      const uint64_t entries_at = r.pos();
      const uint32_t entries = r.get<uint32_t>((what + " entry count").c_str());
      if (entries > r.size())
        r.fail(what, "lists " + std::to_string(entries) + " entries, more than the file has bytes", entries_at);
      r.skip(bytes - 4, what.c_str());
    } else {
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

// Bytes of a tree's value from its type name, "Tree_<value>_5_4_3" (with
// "_HalfFloat" when saved as half floats; the background and tiles are
// still written at full size). 0: another layout or an unknown value type.
uint64_t value_bytes(const std::string& tree_type) {
  std::string t = tree_type;
  const std::string half = "_HalfFloat";
  if (t.size() > half.size() && t.compare(t.size() - half.size(), half.size(), half) == 0)
    t.resize(t.size() - half.size());
  const std::string head = "Tree_", tail = "_5_4_3";
  if (t.size() <= head.size() + tail.size() || t.compare(0, head.size(), head) != 0 ||
      t.compare(t.size() - tail.size(), tail.size(), tail) != 0)
    return 0;
  const std::string v = t.substr(head.size(), t.size() - head.size() - tail.size());
  if (v == "bool" || v == "mask") return 1;
  if (v == "float" || v == "int32" || v == "uint32" || v == "ptdataidx32" || v == "ptidx32") return 4;
  if (v == "double" || v == "int64" || v == "ptdataidx64" || v == "ptidx64") return 8;
  if (v == "vec3s" || v == "vec3i") return 12;
  if (v == "vec3d") return 24;
  return 0;
}

// The root of a 5-4-3 tree (Tree::readTopology, RootNode::readTopology): the
// buffer count, the background value, then the tile and child counts, which
// OpenVDB loops over (a tile is an origin, a value and an active flag; a
// child at least an origin and its two 32^3-bit masks).
void check_root(LayoutReader& r, const std::string& what, uint64_t value) {
  r.get<int32_t>((what + " buffer count").c_str());
  r.skip(value, (what + " background value").c_str());
  const uint64_t at = r.pos();
  const uint64_t tiles = r.get<uint32_t>((what + " tile count").c_str());
  const uint64_t children = r.get<uint32_t>((what + " child count").c_str());
  const uint64_t need = tiles * (12 + value + 1) + children * (12 + 2 * 4096);
  r.need(need, (what + " root (" + std::to_string(tiles) + " tiles, " + std::to_string(children) + " children)").c_str(),
         at);
}

}  // namespace

void check_vdb_layout(const std::string& path) {
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
    r.section(uint64_t(block));
    r.get<uint32_t>((what + " compression flags").c_str());
    check_metadata(r, what);
    const std::string map = r.string((what + " transform type").c_str());
    // An instance shares its parent's tree and stores none; trees of other
    // layouts, or after a map of no fixed size, are left to OpenVDB.
    const uint64_t value = value_bytes(type), mb = map_bytes(map);
    if (parent.empty() && value > 0 && mb > 0) {
      r.skip(mb, (what + " transform").c_str());
      check_root(r, what, value);
    }
    r.section(size);
    r.seek(uint64_t(end));
  }
}

}  // namespace eddy
