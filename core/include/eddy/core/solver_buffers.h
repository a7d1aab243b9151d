#pragma once
// What every solver template (PBF, SPH) keeps in its executor's memory
// besides its own state:
//   CarriedAttributes  the attributes it carries for its particles without
//                      reading them (id, colour, age, ...): raw 4-byte words,
//                      kept aligned through the Z-order reordering and
//                      written back on store;
//   DeviceColliders    the colliders, with copies of sampled grids (whose
//                      owners may free them after the frame);
// the first steps of every store(): store_particles, store_attribute; and
// SolverOn, the part of every solver template that is not its method's.
#include <chrono>
#include <cstring>
#include <type_traits>
#include <utility>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/points.h"

namespace eddy {

// The solvers' reordering of one array: buf[k] takes buf[order[k]] for
// k < n, gathered into `scratch` (at least n long), which is swapped in.
template <class Exec, class V>
void permute_into(const Exec& ex, V& buf, V& scratch, const uint32_t* order, uint32_t n) {
  using T = std::remove_pointer_t<decltype(scratch.data())>;
  const T* src = buf.data();
  T* dst = scratch.data();
  ex.for_each(n, [=] EDDY_HD(uint32_t k) { dst[k] = src[order[k]]; });
  std::swap(buf, scratch);
}

template <class Exec>
class CarriedAttributes {
 public:
  template <class T>
  using Vec = typename Exec::template Vector<T>;

  // Every attribute of pts except P, v and those named in `skip` (the
  // solver's own outputs).
  void load(const Exec& ex, const Points& pts, std::initializer_list<std::string_view> skip) {
    attrs_.clear();
    const std::size_t n = pts.size();
    std::vector<uint32_t> words;
    for (const auto& a : pts.attributes()) {
      bool skipped = a.name == "P" || a.name == "v";
      for (std::string_view s : skip) skipped |= a.name == s;
      if (skipped) continue;
      Attr c{a.name, a.type, a.type == AttribType::Vec3 ? 3 : 1, {}};
      words.resize(n * c.comps);
      if (n) std::memcpy(words.data(), pts.data(a), words.size() * 4);
      ex.upload(c.words, words.data(), words.size());
      attrs_.push_back(std::move(c));
    }
  }

  // Adds each carried attribute to `out` (which holds n points).
  void store(const Exec& ex, Points& out) const {
    std::vector<uint32_t> words;
    for (const auto& c : attrs_) {
      out.add(c.name, c.type);
      words.resize(out.size() * c.comps);
      ex.download(c.words, words.data(), words.size());
      if (!words.empty()) std::memcpy(out.data(*out.find(c.name)), words.data(), words.size() * 4);
    }
  }

  // Particle k takes the values of particle order[k] (n particles).
  void permute(const Exec& ex, const uint32_t* order, uint32_t n) {
    for (auto& c : attrs_) {
      if (scratch_.size() < c.words.size()) scratch_.resize(c.words.size());
      const uint32_t* src = c.words.data();
      uint32_t* dst = scratch_.data();
      const int m = c.comps;
      ex.for_each(n, [=] EDDY_HD(uint32_t k) {
        for (int q = 0; q < m; ++q) dst[size_t(k) * m + q] = src[size_t(order[k]) * m + q];
      });
      std::swap(c.words, scratch_);
    }
  }

  std::size_t bytes() const {
    std::size_t b = scratch_.size() * 4;
    for (const auto& c : attrs_) b += c.words.size() * 4;
    return b;
  }

 private:
  struct Attr {
    std::string name;
    AttribType type;
    int comps;
    Vec<uint32_t> words;
  };
  std::vector<Attr> attrs_;
  Vec<uint32_t> scratch_;
};

template <class Exec>
class DeviceColliders {
 public:
  void upload(const Exec& ex, const std::vector<Collider>& cs) {
    std::vector<Collider> local = cs;
    grids_.resize(cs.size());
    for (std::size_t k = 0; k < cs.size(); ++k) {
      if (cs[k].type != ShapeType::Grid) continue;
      const std::size_t n = std::size_t(cs[k].grid_dims[0]) * cs[k].grid_dims[1] * cs[k].grid_dims[2];
      ex.upload(grids_[k], cs[k].grid, n);
      local[k].grid = grids_[k].data();
    }
    ex.upload(shapes_, local.data(), local.size());
    n_ = uint32_t(cs.size());
  }
  const Collider* data() const { return shapes_.data(); }
  uint32_t size() const { return n_; }

 private:
  typename Exec::template Vector<Collider> shapes_;
  std::vector<typename Exec::template Vector<float>> grids_;  // one per collider (empty unless Grid)
  uint32_t n_ = 0;
};

// The part of every solver template (PbfSolverT, SphSolverT, MpmSolverT)
// that does not depend on its method: the executor, the particle count,
// the carried attributes, the colliders and the stage times, with the
// Interface's backend(), size(), stage_times() and a set_colliders() that
// uploads the colliders (a method that does more overrides it and calls
// this one).
template <class Exec, class Interface>
class SolverOn : public Interface {
 public:
  using Params = typename Interface::ParamsType;
  using StageTimes = typename Interface::StageTimesType;
  const char* backend() const override { return Exec::backend_name; }
  std::size_t size() const override { return n_; }
  StageTimes stage_times() const override { return times_; }
  void set_colliders(const std::vector<Collider>& cs) override {
    colliders_.upload(ex_, cs);
    ncoll_ = colliders_.size();
  }

 protected:
  SolverOn(const Params& p, Exec ex) : Interface(p), ex_(std::move(ex)) {}

  Exec ex_;
  uint32_t n_ = 0, ncoll_ = 0;
  CarriedAttributes<Exec> carried_;
  DeviceColliders<Exec> colliders_;
  StageTimes times_;
};

// Brings the names of SolverOn<Exec, Interface> into a solver template's
// scope (a dependent base's members are not found by unqualified lookup),
// with Vec<T>, the executor's vector, as Eigen's EIGEN_DENSE_PUBLIC_INTERFACE
// does for its expression templates. Used once, at the top of the class.
#define EDDY_SOLVER_ON(Interface)                                                                               \
  using Base = SolverOn<Exec, Interface>;                                                                       \
  using Base::carried_, Base::colliders_, Base::ex_, Base::max_speed_, Base::n_, Base::ncoll_, Base::params_,   \
      Base::times_;                                                                                             \
  template <class T>                                                                                            \
  using Vec = typename Exec::template Vector<T>

// The start of every solver's store(): `out` becomes the n particles of
// radius r with their positions, velocities and carried attributes.
template <class Exec, class V3>
void store_particles(const Exec& ex, Points& out, uint32_t n, float r, const V3& x, const V3& v,
                     const CarriedAttributes<Exec>& carried) {
  out = Points(n);
  out.radius = r;
  ex.download(x, out.P(), n);
  ex.download(v, out.v(), n);
  carried.store(ex, out);
}

// Adds the float or int attribute `name` to `out` and fills it from the
// first out.size() values of `src`; returns its values.
template <class Exec, class V>
auto* store_attribute(const Exec& ex, Points& out, const char* name, const V& src) {
  using T = std::remove_const_t<std::remove_pointer_t<decltype(src.data())>>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, int32_t>);
  out.add(name, std::is_same_v<T, float> ? AttribType::Float : AttribType::Int);
  T* dst = static_cast<T*>(out.data(*out.find(name)));
  ex.download(src, dst, out.size());
  return dst;
}

}  // namespace eddy
