#include "eddy/core/points.h"

#include <algorithm>
#include <cstring>

#include "eddy/core/error.h"

namespace eddy {

const char* to_string(AttribType t) {
  switch (t) {
    case AttribType::Float: return "float";
    case AttribType::Int: return "int";
    case AttribType::Vec3: return "vec3";
  }
  return "?";
}

std::size_t attrib_size(AttribType t) { return t == AttribType::Vec3 ? sizeof(Vec3f) : 4; }

namespace {
Points::Storage make_storage(AttribType t, std::size_t n) {
  switch (t) {
    case AttribType::Float: return std::vector<float>(n, 0.0f);
    case AttribType::Int: return std::vector<int32_t>(n, 0);
    case AttribType::Vec3: return std::vector<Vec3f>(n, Vec3f{0, 0, 0});
  }
  return std::vector<float>(n);
}
}  // namespace

Points::Points(std::size_t n) : size_(n) {
  attribs_.push_back({"P", AttribType::Vec3, make_storage(AttribType::Vec3, n)});
  attribs_.push_back({"v", AttribType::Vec3, make_storage(AttribType::Vec3, n)});
}

void Points::resize(std::size_t n) {
  for (auto& a : attribs_) std::visit([n](auto& vec) { vec.resize(n); }, a.data);
  size_ = n;
}

const Points::Attribute* Points::find(std::string_view name) const {
  for (const auto& a : attribs_)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<const Points::Attribute*> Points::chosen(const std::vector<std::string>& names) const {
  std::vector<const Attribute*> out;
  if (std::find(names.begin(), names.end(), "*") != names.end()) {
    for (const auto& a : attribs_)
      if (a.name != "P" && a.name != "v") out.push_back(&a);
    return out;
  }
  for (const auto& n : names) {
    if (n == "P" || n == "v") continue;
    const Attribute* a = find(n);
    if (!a) throw Error("the points have no attribute '" + n + "' to write");
    out.push_back(a);
  }
  return out;
}

Points::Attribute* Points::find(std::string_view name) {
  for (auto& a : attribs_)
    if (a.name == name) return &a;
  return nullptr;
}

void Points::add(std::string_view name, AttribType type) {
  if (const Attribute* a = find(name)) {
    if (a->type != type)
      throw Error("points attribute '" + std::string(name) + "' exists as " + to_string(a->type) +
                  ", cannot add it as " + to_string(type));
    return;
  }
  if (name.empty()) throw Error("points attribute name is empty");
  attribs_.push_back({std::string(name), type, make_storage(type, size_)});
}

void Points::remove(std::string_view name) {
  if (name == "P" || name == "v") throw Error("points attribute '" + std::string(name) + "' cannot be removed");
  attribs_.erase(std::remove_if(attribs_.begin(), attribs_.end(), [&](const Attribute& a) { return a.name == name; }),
                 attribs_.end());
}

namespace {
template <class T, class A>
auto* typed(A* a, std::string_view name, AttribType want) {
  if (!a) throw Error("points have no attribute '" + std::string(name) + "'");
  if (a->type != want)
    throw Error("points attribute '" + std::string(name) + "' is " + to_string(a->type) + ", expected " +
                to_string(want));
  return std::get<std::vector<T>>(a->data).data();
}
}  // namespace

float* Points::get_float(std::string_view n) { return typed<float>(find(n), n, AttribType::Float); }
const float* Points::get_float(std::string_view n) const { return typed<float>(find(n), n, AttribType::Float); }
int32_t* Points::get_int(std::string_view n) { return typed<int32_t>(find(n), n, AttribType::Int); }
const int32_t* Points::get_int(std::string_view n) const { return typed<int32_t>(find(n), n, AttribType::Int); }
Vec3f* Points::get_vec3(std::string_view n) { return typed<Vec3f>(find(n), n, AttribType::Vec3); }
const Vec3f* Points::get_vec3(std::string_view n) const { return typed<Vec3f>(find(n), n, AttribType::Vec3); }

void* Points::data(Attribute& a) {
  return std::visit([](auto& vec) -> void* { return vec.data(); }, a.data);
}
const void* Points::data(const Attribute& a) const {
  return std::visit([](const auto& vec) -> const void* { return vec.data(); }, a.data);
}

void Points::filter(const std::vector<uint8_t>& keep) {
  EDDY_DEMAND(keep.size() == size_);
  std::size_t m = 0;
  for (auto& a : attribs_) {
    std::visit(
        [&](auto& vec) {
          std::size_t w = 0;
          for (std::size_t i = 0; i < vec.size(); ++i)
            if (keep[i]) vec[w++] = vec[i];
          vec.resize(w);
          m = w;
        },
        a.data);
  }
  size_ = m;
}

void Points::append(const Points& other) {
  for (const auto& b : other.attribs_) add(b.name, b.type);
  const std::size_t n0 = size_, n1 = other.size_;
  resize(n0 + n1);
  for (auto& a : attribs_) {
    const Attribute* b = other.find(a.name);
    if (!b) continue;
    std::visit(
        [&](auto& dst) {
          using V = std::decay_t<decltype(dst)>;
          const auto& src = std::get<V>(b->data);
          std::copy(src.begin(), src.end(), dst.begin() + n0);
        },
        a.data);
  }
  if (radius == 0.0f) radius = other.radius;
  detail.insert(other.detail.begin(), other.detail.end());  // this set's own values win
}

std::size_t Points::memory_bytes() const {
  std::size_t bytes = 0;
  for (const auto& a : attribs_) bytes += size_ * attrib_size(a.type) + a.name.capacity();
  return bytes;
}

}  // namespace eddy
