// Volume wrapper, PrimToVDBPointDataGrid (points <-> PointDataGrid) and .vdb
// file I/O.
#include <openvdb/io/File.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <openvdb/points/PointConversion.h>
#include <openvdb/points/PointCount.h>
#include <openvdb/tools/PointIndexGrid.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <unordered_set>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/surfacing/surfacing.h"
#include "vdb_internal.h"
#include "vdb_layout.h"

namespace eddy {

namespace vdbp = openvdb::points;

const char* to_string(GridClass c) {
  switch (c) {
    case GridClass::LevelSet: return "level set";
    case GridClass::FogVolume: return "fog volume";
    case GridClass::Points: return "points";
    default: return "other";
  }
}

const std::string& Volume::name() const { return impl_->name; }
GridClass Volume::grid_class() const { return impl_->cls; }
const std::string& Volume::value_type() const { return impl_->type; }
double Volume::voxel_size() const { return impl_->dx; }
uint64_t Volume::active_voxels() const { return impl_->active; }
uint64_t Volume::point_count() const { return impl_->points; }
std::size_t Volume::memory_bytes() const { return impl_ ? impl_->bytes : 0; }

void init_openvdb() {
  static std::once_flag once;
  std::call_once(once, [] { openvdb::initialize(); });
}

Volume make_volume(openvdb::GridBase::Ptr grid) {
  auto impl = std::make_shared<Volume::Impl>();
  impl->name = grid->getName();
  impl->type = grid->valueType();
  impl->dx = grid->voxelSize()[0];
  impl->active = grid->activeVoxelCount();
  impl->bytes = grid->memUsage();
  if (auto pts = openvdb::GridBase::grid<vdbp::PointDataGrid>(grid)) {
    impl->cls = GridClass::Points;
    impl->points = vdbp::pointCount(pts->tree());
  } else if (grid->getGridClass() == openvdb::GRID_LEVEL_SET) {
    impl->cls = GridClass::LevelSet;
  } else if (grid->getGridClass() == openvdb::GRID_FOG_VOLUME) {
    impl->cls = GridClass::FogVolume;
  }
  impl->grid = std::move(grid);
  return Volume(std::move(impl));
}

// ---------------------------------------------------------------------------
// PrimToVDBPointDataGrid

namespace {

// v when the points have it, then the attributes `names` asks for (P is the
// grid's own position).
std::vector<const Points::Attribute*> chosen_attributes(const Points& pts, const std::vector<std::string>& names) {
  std::vector<const Points::Attribute*> out;
  if (const Points::Attribute* v = pts.find("v")) out.push_back(v);
  for (const Points::Attribute* a : pts.chosen(names)) out.push_back(a);
  return out;
}

// Bytes of one PointDataGrid leaf besides its attribute values: the voxel
// offsets (512 x 4), masks, the attribute set and array headers.
constexpr double kLeafOverhead = 512 * 4 + 256;

}  // namespace

double estimate_point_grid_bytes(const Points& pts, double dx, const std::vector<std::string>& attributes) {
  if (!(dx > 0)) throw Error("voxel size Dx must be positive, got " + std::to_string(dx));
  const Vec3f* P = pts.P();
  const double leaf = 8.0 * dx;
  std::unordered_set<uint64_t> leaves;
  leaves.reserve(std::min<std::size_t>(pts.size(), 1u << 20));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double c[3] = {std::floor(P[i].x / leaf), std::floor(P[i].y / leaf), std::floor(P[i].z / leaf)};
    for (double v : c)
      if (!(std::fabs(v) < double(1 << 20)))
        throw Error("voxel size Dx " + std::to_string(dx) + " m is too small for particles " +
                    std::to_string(std::fabs(v) * leaf) + " m from the origin (over 2^23 voxels)");
    uint64_t key = 0;
    for (double v : c) key = (key << 21) | (uint64_t(int64_t(v) + (1 << 20)) & 0x1fffff);
    leaves.insert(key);
  }
  double per_point = 12;  // P
  for (const auto* a : chosen_attributes(pts, attributes)) per_point += double(attrib_size(a->type));
  return double(leaves.size()) * (kLeafOverhead + 64.0 * double(attributes.size() + 2)) +
         double(pts.size()) * per_point * 2.0;  // x2: the index grid built on the way
}

Volume points_to_vdb(const Points& pts, double dx, const std::vector<std::string>& attributes,
                     const std::string& name) {
  init_openvdb();
  const double need = estimate_point_grid_bytes(pts, dx, attributes);
  const double have = physical_memory_bytes();
  if (need > 0.5 * have)
    throw Error("voxel size Dx " + std::to_string(dx) + " m would need about " + format_bytes(need) + " for " +
                std::to_string(pts.size()) + " points, more than half of this machine's " + format_bytes(have) +
                "; use a larger Dx (the particle diameter is usual)");
  const auto attrs = chosen_attributes(pts, attributes);
  auto xform = openvdb::math::Transform::createLinearTransform(dx);
  std::vector<openvdb::Vec3f> pos(pts.size());
  const Vec3f* P = pts.P();
  for (std::size_t i = 0; i < pts.size(); ++i) pos[i] = openvdb::Vec3f(P[i].x, P[i].y, P[i].z);
  const vdbp::PointAttributeVector<openvdb::Vec3f> pos_wrap(pos);
  auto index = openvdb::tools::createPointIndexGrid<openvdb::tools::PointIndexGrid>(pos_wrap, *xform);
  auto grid = vdbp::createPointDataGrid<vdbp::NullCodec, vdbp::PointDataGrid>(*index, pos_wrap, *xform);
  grid->setName(name);
  grid->insertMeta("eddy_radius", openvdb::FloatMetadata(pts.radius));
  for (const auto* a : attrs) {
    switch (a->type) {
      case AttribType::Vec3: {
        const auto& src = std::get<std::vector<Vec3f>>(a->data);
        std::vector<openvdb::Vec3f> v(src.size());
        for (std::size_t i = 0; i < src.size(); ++i) v[i] = openvdb::Vec3f(src[i].x, src[i].y, src[i].z);
        vdbp::appendAttribute<openvdb::Vec3f>(grid->tree(), a->name);
        vdbp::populateAttribute(grid->tree(), index->tree(), a->name, vdbp::PointAttributeVector<openvdb::Vec3f>(v));
        break;
      }
      case AttribType::Float: {
        const auto& src = std::get<std::vector<float>>(a->data);
        vdbp::appendAttribute<float>(grid->tree(), a->name);
        vdbp::populateAttribute(grid->tree(), index->tree(), a->name, vdbp::PointAttributeVector<float>(src));
        break;
      }
      case AttribType::Int: {
        const auto& src = std::get<std::vector<int32_t>>(a->data);
        vdbp::appendAttribute<int32_t>(grid->tree(), a->name);
        vdbp::populateAttribute(grid->tree(), index->tree(), a->name, vdbp::PointAttributeVector<int32_t>(src));
        break;
      }
    }
  }
  return make_volume(grid);
}

namespace {

// A points grid from a file is checked before it is read: every leaf shares
// the first leaf's attribute layout, has offsets that rise and end at its
// arrays' length, and carries positions ("P", vec3s). Files from elsewhere
// can break each of these (found by fuzz/fuzz_vdb), and OpenVDB's accessors
// trust them.
std::size_t checked_point_count(const vdbp::PointDataGrid& grid) {
  const auto& tree = grid.tree();
  auto leaf0 = tree.cbeginLeaf();
  if (!leaf0) return 0;
  const auto& desc = leaf0->attributeSet().descriptor();
  // A damaged descriptor may name positions past its list of types (which
  // OpenVDB asserts on when asked their type).
  for (const auto& [name, index] : desc.map())
    if (index >= desc.size())
      throw Error("its attribute descriptor puts '" + name + "' at position " + std::to_string(index) + " of " +
                  std::to_string(desc.size()));
  const std::size_t p = desc.find("P");
  if (p == vdbp::AttributeSet::INVALID_POS) throw Error("it has no positions (attribute 'P')");
  if (desc.valueType(p) != "vec3s")
    throw Error("its positions (attribute 'P') are " + desc.valueType(p) + ", not vec3s");
  std::size_t n = 0;
  for (auto leaf = tree.cbeginLeaf(); leaf; ++leaf) {
    if (!(leaf->attributeSet().descriptor() == desc)) {
      const openvdb::Coord o = leaf->origin();
      throw Error("the leaf at voxel (" + std::to_string(o.x()) + ", " + std::to_string(o.y()) + ", " +
                  std::to_string(o.z()) + ") has another attribute layout than the first leaf");
    }
    if (leaf->attributeSet().size() != desc.size()) {
      const openvdb::Coord o = leaf->origin();
      throw Error("the leaf at voxel (" + std::to_string(o.x()) + ", " + std::to_string(o.y()) + ", " +
                  std::to_string(o.z()) + ") holds " + std::to_string(leaf->attributeSet().size()) +
                  " attribute arrays for " + std::to_string(desc.size()) + " described");
    }
    leaf->validateOffsets();
    // Every array holds a value for each of the leaf's points (a uniform
    // one stores one, but OpenVDB still checks the index against its size):
    // a damaged file may declare fewer than its offsets count.
    const openvdb::Index count = leaf->pointCount();
    const auto& set = leaf->attributeSet();
    for (std::size_t a = 0; a < set.size(); ++a) {
      const vdbp::AttributeArray* array = set.getConst(a);
      if (array && (!array->hasConstantStride() || array->size() < count ||
           std::size_t(array->dataSize()) < std::size_t(count) * array->stride())) {
        const openvdb::Coord o = leaf->origin();
        throw Error("the leaf at voxel (" + std::to_string(o.x()) + ", " + std::to_string(o.y()) + ", " +
                    std::to_string(o.z()) + ") has " + std::to_string(count) + " points but " +
                    std::to_string(array->dataSize()) + " values of its attribute " + std::to_string(a) + " (" +
                    desc.valueType(a) + ")");
      }
    }
    n += count;
  }
  return n;
}

Points read_points(const vdbp::PointDataGrid& grid) {
  const auto& tree = grid.tree();
  const auto& xf = grid.transform();
  Points out(0);
  const std::size_t n = checked_point_count(grid);
  out.resize(n);
  if (auto m = grid.getMetadata<openvdb::FloatMetadata>("eddy_radius"))
    if (std::isfinite(m->value()) && m->value() > 0) out.radius = m->value();
  auto leaf0 = tree.cbeginLeaf();
  if (!leaf0) return out;
  const auto& desc = leaf0->attributeSet().descriptor();
  struct Column {
    std::string name;
    std::size_t index;
    AttribType type;
  };
  std::vector<Column> cols;
  for (const auto& [aname, idx] : desc.map()) {
    if (aname == "P") continue;
    const std::string& t = desc.valueType(idx);
    if (t == "vec3s") cols.push_back({aname, idx, AttribType::Vec3});
    else if (t == "float") cols.push_back({aname, idx, AttribType::Float});
    else if (t == "int32") cols.push_back({aname, idx, AttribType::Int});
    // Other types (strings, doubles, groups) have no Points counterpart; left out.
  }
  for (const auto& c : cols) out.add(c.name, c.type);
  Vec3f* P = out.P();
  std::size_t k = 0;
  for (auto leaf = tree.cbeginLeaf(); leaf; ++leaf) {
    const std::size_t base = k;
    vdbp::AttributeHandle<openvdb::Vec3f> ph(leaf->constAttributeArray("P"));
    for (auto idx = leaf->beginIndexOn(); idx; ++idx) {
      const openvdb::Vec3d w = xf.indexToWorld(ph.get(*idx) + idx.getCoord().asVec3d());
      P[k++] = vec3(float(w.x()), float(w.y()), float(w.z()));
    }
    for (const auto& c : cols) {
      std::size_t j = base;
      const auto& arr = leaf->constAttributeArray(c.index);
      if (c.type == AttribType::Vec3) {
        vdbp::AttributeHandle<openvdb::Vec3f> h(arr);
        Vec3f* d = out.get_vec3(c.name);
        for (auto idx = leaf->beginIndexOn(); idx; ++idx, ++j) {
          const auto v = h.get(*idx);
          d[j] = vec3(v.x(), v.y(), v.z());
        }
      } else if (c.type == AttribType::Float) {
        vdbp::AttributeHandle<float> h(arr);
        float* d = out.get_float(c.name);
        for (auto idx = leaf->beginIndexOn(); idx; ++idx, ++j) d[j] = h.get(*idx);
      } else {
        vdbp::AttributeHandle<int32_t> h(arr);
        int32_t* d = out.get_int(c.name);
        for (auto idx = leaf->beginIndexOn(); idx; ++idx, ++j) d[j] = h.get(*idx);
      }
    }
  }
  if (!(out.radius > 0) && out.has("pscale") && n > 0) {
    const float r = out.get_float("pscale")[0];
    if (std::isfinite(r) && r > 0) out.radius = r;
  }
  return out;
}

}  // namespace

Points vdb_to_points(const Volume& volume) {
  if (volume.empty()) throw Error("no volume given");
  const auto grid = openvdb::GridBase::constGrid<vdbp::PointDataGrid>(volume.impl().grid);
  if (!grid)
    throw Error("grid '" + volume.name() + "' is a " + to_string(volume.grid_class()) + " (" +
                volume.value_type() + "), not VDB points");
  try {
    return read_points(*grid);
  } catch (const openvdb::Exception& e) {
    throw Error("points grid '" + volume.name() + "' is damaged: " + e.what());
  } catch (const Error& e) {
    throw Error("points grid '" + volume.name() + "' is damaged: " + e.what());
  }
}

// ---------------------------------------------------------------------------
// Files

namespace {

// OpenVDB stamps each file it writes with a random UUID (36 characters after
// the 21-byte header of magic, format and library versions and the offsets
// flag), so the same grids written twice made different files. The stamp
// becomes a hash of the rest of the file: the same grids give the same
// bytes (a farm's frames compare with a local run's), and readers that use
// the stamp to tell files apart still can.
void stamp_uuid_from_content(const std::string& file) {
  constexpr std::size_t kAt = 21, kLen = 36;
  std::FILE* f = std::fopen(file.c_str(), "r+b");
  if (!f) throw Error("cannot reopen '" + file + "' to stamp it");
  char uuid[kLen];
  if (std::fseek(f, long(kAt), SEEK_SET) != 0 || std::fread(uuid, 1, kLen, f) != kLen || uuid[8] != '-' ||
      uuid[13] != '-' || uuid[18] != '-' || uuid[23] != '-') {
    std::fclose(f);
    return;  // another layout: left as OpenVDB wrote it
  }
  // Two FNV-1a hashes of everything after the stamp: 128 bits.
  uint64_t a = 1469598103934665603ull, b = 0x9e3779b97f4a7c15ull;
  char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    for (std::size_t i = 0; i < n; ++i) {
      a = (a ^ uint8_t(buf[i])) * 1099511628211ull;
      b = (b ^ uint8_t(buf[i])) * 0x100000001b3ull + 0x9e37ull;
    }
  char text[kLen + 1];
  std::snprintf(text, sizeof text, "%08x-%04x-%04x-%04x-%012llx", unsigned(a >> 32), unsigned(a >> 16) & 0xffffu,
                (unsigned(a) & 0x0fffu) | 0x8000u, (unsigned(b >> 48) & 0x3fffu) | 0x8000u,
                static_cast<unsigned long long>(b & 0xffffffffffffull));
  const bool ok = std::fseek(f, long(kAt), SEEK_SET) == 0 && std::fwrite(text, 1, kLen, f) == kLen;
  if (std::fclose(f) != 0 || !ok) throw Error("cannot stamp '" + file + "'");
}

}  // namespace

void write_vdb(const std::string& path, const Volumes& volumes) {
  init_openvdb();
  openvdb::GridCPtrVec grids;
  for (const auto& v : volumes.grids)
    if (!v.empty()) grids.push_back(v.impl().grid);
  write_atomic(path, [&](const std::string& tmp) {
    try {
      openvdb::io::File file(tmp);
      file.write(grids);
      file.close();
      stamp_uuid_from_content(tmp);
    } catch (const openvdb::Exception& e) {
      throw Error("cannot write '" + path + "': " + e.what());
    }
  });
}

// Present when a sanitizer is linked in (weak: absent otherwise).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

// Every grid of the file at `path`, read by OpenVDB; its exceptions become
// eddy::Error naming the file.
openvdb::GridPtrVecPtr read_grids(const std::string& path) {
  try {
    openvdb::io::File file(path);
    file.open(/*delayLoad=*/false);
    auto grids = file.getGrids();
    file.close();
    return grids;
  } catch (const openvdb::Exception& e) {
    throw Error(path + ": not a readable VDB file: " + e.what());
  } catch (const std::ios_base::failure& e) {
    throw Error(path + ": not a readable VDB file (truncated or damaged): " + e.what());
  } catch (const std::bad_alloc&) {
    // OpenVDB allocates what a block's header declares (found by fuzz/fuzz_vdb).
    throw Error(path + ": not a readable VDB file: it declares more data than memory holds (damaged?)");
  } catch (const std::length_error& e) {
    throw Error(path + ": not a readable VDB file: it declares an impossible size (damaged?): " + e.what());
  }
}

// OpenVDB's reader of point-data leaves (attribute descriptors and paged
// attribute buffers, over several passes) asserts on some damaged input,
// which ends the process, and allocates whatever a damaged length declares.
// check_vdb_layout stops at those leaves' topology, so a file with point
// data is read first in a child process, with its memory bounded: if the
// child dies, the file is reported as damaged, and if OpenVDB throws there,
// its message is the answer (the parent does not repeat an allocation the
// child could not make); the server or command that asked lives on either
// way. Only a file the child read whole is read again here.
// Seconds the child may take: 2, and one per MB (reading runs at over 100 MB/s).
unsigned read_seconds(uint64_t file_bytes) { return unsigned(2 + file_bytes / 1000000); }

void read_point_data_in_child(const std::string& path, uint64_t file_bytes) {
  int fds[2];
  if (pipe(fds) != 0) throw Error(path + ": cannot check its point data: pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    throw Error(path + ": cannot check its point data: fork failed");
  }
  if (pid == 0) {
    close(fds[0]);
    // The child's death is its answer: the handlers the parent installed (a
    // crash reporter, a sanitizer's death callback and libFuzzer's alarm
    // under the fuzzers) must not take it for the parent's, nor stop the
    // alarm below.
    sigset_t all;
    sigemptyset(&all);
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM}) {
      std::signal(sig, SIG_DFL);
      sigaddset(&all, sig);
    }
    sigprocmask(SIG_UNBLOCK, &all, nullptr);
    const bool sanitized = &__sanitizer_set_death_callback != nullptr;
    if (sanitized) __sanitizer_set_death_callback(nullptr);
    // Room for the file's data several times over; a sanitizer's reserved
    // shadow memory would not fit such a bound (its runs cap allocations).
    if (!sanitized) {
      const rlim_t bound = rlim_t((uint64_t(2) << 30) + 16 * file_bytes);
      const rlimit lim{bound, bound};
      setrlimit(RLIMIT_AS, &lim);
    }
    // A damaged length can make OpenVDB fill gigabytes (a name of 800 MB,
    // under a sanitizer that the bound above leaves out): the child has
    // the time a healthy file of this size takes many times over.
    alarm(read_seconds(file_bytes));
    // The parent's TBB worker threads do not exist here: everything OpenVDB
    // runs in parallel (a tree's clear, say) runs on this thread, in an
    // arena of one.
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    tbb::task_arena arena(1);
    std::string message;
    arena.execute([&] {
      try {
        read_grids(path);
      } catch (const std::exception& e) {
        message = e.what();
        if (message.empty()) message = path + ": not a readable VDB file";
      } catch (...) {
        message = path + ": not a readable VDB file";
      }
    });
    for (std::size_t at = 0; at < message.size();) {
      const ssize_t w = write(fds[1], message.data() + at, message.size() - at);
      if (w <= 0) break;
      at += std::size_t(w);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buf[512];
  for (;;) {
    const ssize_t r = read(fds[0], buf, sizeof buf);
    if (r > 0) message.append(buf, std::size_t(r));
    else if (r == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(path + ": cannot check its point data: waitpid failed");
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    throw Error(path + ": not a readable VDB file: reading its point data took over " +
                std::to_string(read_seconds(file_bytes)) + " s (damaged?)");
  if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0))
    throw Error(path + ": not a readable VDB file: its point data is damaged (OpenVDB's reader stopped on it)");
  if (!message.empty()) throw Error(message);
}

}  // namespace

Volumes read_vdb(const std::string& path) {
  init_openvdb();
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(path + ": no such VDB file");
  if (fs::is_directory(path, ec)) throw Error(path + ": is a folder, not a VDB file");
  if (check_vdb_layout(path).unchecked_point_data) read_point_data_in_child(path, fs::file_size(path, ec));
  Volumes out;
  const openvdb::GridPtrVecPtr grids = read_grids(path);
  for (auto& g : *grids) out.grids.push_back(make_volume(g));
  return out;
}

}  // namespace eddy
