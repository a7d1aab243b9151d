#pragma once
// Points: a structure-of-arrays particle set with named attributes.
//
// Every attribute is one contiguous array of n elements. `P` (position, m) and
// `v` (velocity, m/s) are always present, as in Houdini and OpenVDB points, so
// a point cache round-trips; any other float, int or vec3 attribute is added
// by name (`density`, `id`, ...). `radius` is the detail-level particle
// radius in metres (spacing of an emitted lattice is 2 * radius).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "eddy/core/vec.h"

namespace eddy {

enum class AttribType { Float, Int, Vec3 };

const char* to_string(AttribType t);
// Bytes per element of an attribute of this type.
std::size_t attrib_size(AttribType t);

class Points {
 public:
  using Storage = std::variant<std::vector<float>, std::vector<int32_t>, std::vector<Vec3f>>;
  struct Attribute {
    std::string name;
    AttribType type;
    Storage data;
  };

  explicit Points(std::size_t n = 0);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Resizes every attribute; new elements are zero.
  void resize(std::size_t n);

  Vec3f* P() { return get_vec3("P"); }
  const Vec3f* P() const { return get_vec3("P"); }
  Vec3f* v() { return get_vec3("v"); }
  const Vec3f* v() const { return get_vec3("v"); }

  bool has(std::string_view name) const { return find(name) != nullptr; }
  // Adds a zero-filled attribute, or returns the existing one of that type.
  // Throws eddy::Error when the name exists with another type.
  void add(std::string_view name, AttribType type);
  void remove(std::string_view name);

  const Attribute* find(std::string_view name) const;
  Attribute* find(std::string_view name);
  const std::vector<Attribute>& attributes() const { return attribs_; }
  // The attributes besides P and v that a writer's attribute list asks for:
  // all of them for {"*"}, else each one named, in order (P and v named are
  // skipped). Throws eddy::Error naming one the points do not have.
  std::vector<const Attribute*> chosen(const std::vector<std::string>& names) const;

  // Typed access; throws eddy::Error naming the attribute when it is missing
  // or of another type.
  float* get_float(std::string_view name);
  const float* get_float(std::string_view name) const;
  int32_t* get_int(std::string_view name);
  const int32_t* get_int(std::string_view name) const;
  Vec3f* get_vec3(std::string_view name);
  const Vec3f* get_vec3(std::string_view name) const;

  // Raw bytes of an attribute (size() * attrib_size(type)).
  void* data(Attribute& a);
  const void* data(const Attribute& a) const;

  // Keeps the elements i with keep[i] != 0, in order.
  void filter(const std::vector<uint8_t>& keep);
  // Appends every element of `other`; attributes missing on one side are
  // added (zero) to the other. Types must agree by name.
  void append(const Points& other);

  // Approximate heap bytes held by the attribute arrays.
  std::size_t memory_bytes() const;

  float radius = 0.0f;
  // Detail values: numbers that belong to the set, not to a point (as
  // Houdini's detail attributes), by name. Solvers keep here what of their
  // state is not per particle (SPH: the speed it expects, the region its
  // boundary samples cover), so that a solver loaded from its own output
  // steps as the one that stored it. Writers of point formats drop them.
  std::map<std::string, std::vector<double>, std::less<>> detail;

 private:
  std::size_t size_ = 0;
  std::vector<Attribute> attribs_;
};

}  // namespace eddy
