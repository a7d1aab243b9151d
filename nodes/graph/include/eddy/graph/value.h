#pragma once
// Values flowing between nodes: immutable, shared, type-erased behind a type
// name. A node that changes data copies first (copy-on-write), so cached
// outputs stay valid. Plug-ins add types by specialising ValueTraits.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/error.h"
#include "eddy/core/force_field.h"
#include "eddy/core/mesh.h"
#include "eddy/core/points.h"
#include "eddy/core/sources.h"

namespace eddy {

// A set of collider shapes (the "colliders" socket type).
struct Colliders {
  std::vector<Collider> shapes;
  // Storage of the sampled distance grids that Grid shapes point into.
  std::vector<std::shared_ptr<const std::vector<float>>> grids;
  // Storage of the surface velocities deforming Grid shapes point into.
  std::vector<std::shared_ptr<const std::vector<Vec3f>>> velocities;
};

// Particle sources (the "sources" socket type, FluidSource) and sinks (the
// "sinks" socket type, KillVolume) a solver applies at each frame's start.
struct Sources {
  std::vector<FluidSource> list;
  float particle_radius = 0;  // m, of the particles they make
  std::vector<std::shared_ptr<const std::vector<float>>> grids;  // what mesh-shaped sources' Grid shapes point into
};
struct Sinks {
  std::vector<Collider> shapes;
};
// Force fields (the "forces" socket type, ForceField) every solver applies.
struct ForceFields {
  std::vector<ForceField> list;
};

template <class T>
struct ValueTraits;  // static const char* name(); static size_t bytes(const T&);
template <>
struct ValueTraits<Sources> {
  static const char* name() { return "sources"; }
  static std::size_t bytes(const Sources& s) { return s.list.size() * sizeof(FluidSource); }
};
template <>
struct ValueTraits<ForceFields> {
  static const char* name() { return "forces"; }
  static std::size_t bytes(const ForceFields& f) { return f.list.size() * sizeof(ForceField); }
};
template <>
struct ValueTraits<Sinks> {
  static const char* name() { return "sinks"; }
  static std::size_t bytes(const Sinks& s) { return s.shapes.size() * sizeof(Collider); }
};

template <>
struct ValueTraits<Points> {
  static const char* name() { return "points"; }
  static std::size_t bytes(const Points& p) { return p.memory_bytes(); }
};
template <>
struct ValueTraits<Colliders> {
  static const char* name() { return "colliders"; }
  static std::size_t bytes(const Colliders& c) {
    std::size_t b = c.shapes.size() * sizeof(Collider);
    for (const auto& g : c.grids) b += g->size() * sizeof(float);
    for (const auto& v : c.velocities) b += v->size() * sizeof(Vec3f);
    return b;
  }
};
template <>
struct ValueTraits<Mesh> {
  static const char* name() { return "mesh"; }
  static std::size_t bytes(const Mesh& m) { return m.memory_bytes(); }
};

class Value {
 public:
  Value() = default;

  template <class T>
  static Value of(std::shared_ptr<const T> p) {
    Value v;
    v.type_ = ValueTraits<T>::name();
    v.bytes_ = p ? ValueTraits<T>::bytes(*p) : 0;
    v.data_ = std::move(p);
    return v;
  }
  template <class T>
  static Value make(T&& t) {
    using U = std::decay_t<T>;
    return of<U>(std::make_shared<const U>(std::forward<T>(t)));
  }

  bool empty() const { return !data_; }
  const std::string& type() const { return type_; }
  std::size_t bytes() const { return bytes_; }

  // The value as T; throws eddy::Error when it holds another type.
  template <class T>
  std::shared_ptr<const T> as() const {
    if (type_ != ValueTraits<T>::name())
      throw Error(std::string("expected a value of type '") + ValueTraits<T>::name() + "', got '" +
                  (type_.empty() ? "nothing" : type_) + "'");
    return std::static_pointer_cast<const T>(data_);
  }
  const void* identity() const { return data_.get(); }

 private:
  std::string type_;
  std::size_t bytes_ = 0;
  std::shared_ptr<const void> data_;
};

}  // namespace eddy
