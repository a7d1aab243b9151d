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
#include "eddy/core/solver.h"

namespace eddy {

// The padded copy of positions (or velocities) the pair loops read
// (pair_batch.h): out[k] = (x[k], w[k]), or w = 0 without w.
template <class Exec>
void pad_into(const Exec& ex, Vec4f* out, const Vec3f* x, const float* w, uint32_t n) {
  ex.for_each(n, [=] EDDY_HD(uint32_t k) { out[k] = vec4(x[k], w ? w[k] : 0.0f); });
}

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
    velocities_.resize(cs.size());
    for (std::size_t k = 0; k < cs.size(); ++k) {
      if (cs[k].type != ShapeType::Grid) continue;
      const std::size_t n = std::size_t(cs[k].grid_dims[0]) * cs[k].grid_dims[1] * cs[k].grid_dims[2];
      // Colliders sampled from one grid (bodies made from one mesh) share
      // one copy of it: a pile of 100 pebbles uploads one grid, not 100.
      std::size_t j = 0;
      while (j < k && !(cs[j].type == ShapeType::Grid && cs[j].grid == cs[k].grid &&
                        cs[j].grid_velocity == cs[k].grid_velocity && local[j].grid_dims[0] == cs[k].grid_dims[0] &&
                        local[j].grid_dims[1] == cs[k].grid_dims[1] && local[j].grid_dims[2] == cs[k].grid_dims[2]))
        ++j;
      if (j < k) {
        local[k].grid = local[j].grid;
        local[k].grid_velocity = local[j].grid_velocity;
        continue;
      }
      ex.upload(grids_[k], cs[k].grid, n);
      local[k].grid = grids_[k].data();
      if (cs[k].grid_velocity) {
        ex.upload(velocities_[k], cs[k].grid_velocity, n);
        local[k].grid_velocity = velocities_[k].data();
      }
    }
    ex.upload(shapes_, local.data(), local.size());
    n_ = uint32_t(cs.size());
  }
  const Collider* data() const { return shapes_.data(); }
  uint32_t size() const { return n_; }

 private:
  typename Exec::template Vector<Collider> shapes_;
  std::vector<typename Exec::template Vector<float>> grids_;  // one per collider (empty unless Grid)
  std::vector<typename Exec::template Vector<Vec3f>> velocities_;  // a deforming Grid's surface velocity
  uint32_t n_ = 0;
};

// Two-way coupling's bookkeeping: per particle, the impulse each nearby
// collider gave it over the step, in up to kReactionSlots slots (a particle
// near a body, the tank's floor and a wall uses three). Slots are claimed by
// the particle's own thread, so the kernels need no atomics; a contribution
// finding no free slot is counted as lost. A default ReactionView (tracking
// off) has null pointers, and the kernels skip it.
constexpr int kReactionSlots = 3;
struct ReactionView {
  int32_t* k = nullptr;   // (kReactionSlots n) collider index, -1 free
  Vec3f* J = nullptr;     // (kReactionSlots n) N s given to the particle
  uint32_t* lost = nullptr;  // (n) contributions without a slot
  EDDY_HD_INLINE bool on() const { return k != nullptr; }
  // The slot of collider c for particle i, claimed if new; -1 when full.
  EDDY_HD_INLINE int slot(uint32_t i, int32_t c) const {
    int32_t* ks = k + size_t(i) * kReactionSlots;
    for (int s = 0; s < kReactionSlots; ++s) {
      if (ks[s] == c) return s;
      if (ks[s] < 0) {
        ks[s] = c;
        return s;
      }
    }
    ++lost[i];
    return -1;
  }
  EDDY_HD_INLINE void add(uint32_t i, int32_t c, Vec3f impulse) const {
    const int s = slot(i, c);
    if (s >= 0) J[size_t(i) * kReactionSlots + s] += impulse;
  }
  // Slot s of particle i (claimed with slot()).
  EDDY_HD_INLINE Vec3f& at(uint32_t i, int s) const { return J[size_t(i) * kReactionSlots + s]; }
};

template <class Exec>
class ColliderReactions {
 public:
  template <class T>
  using Vec = typename Exec::template Vector<T>;
  bool on() const { return on_; }
  void enable(bool on) { on_ = on; }
  // Empty slots for n particles (at each step's start); tracking off: nothing.
  void reset(const Exec& ex, uint32_t n) {
    if (!on_) return;
    k_.resize(size_t(n) * kReactionSlots);
    J_.resize(size_t(n) * kReactionSlots);
    lost_.resize(n);
    n_ = n;
    const ReactionView r = view();
    ex.for_each(n, [=] EDDY_HD(uint32_t i) {
      for (int s = 0; s < kReactionSlots; ++s) {
        r.k[size_t(i) * kReactionSlots + s] = -1;
        r.J[size_t(i) * kReactionSlots + s] = vec3(0.0f);
      }
      r.lost[i] = 0;
    });
  }
  ReactionView view() { return on_ ? ReactionView{k_.data(), J_.data(), lost_.data()} : ReactionView{}; }
  // The step's impulses per collider (ncoll entries), their moments taken at
  // the particles' positions x (the step's end), summed on the host in double.
  template <class V3>
  void sum(const Exec& ex, const V3& x, uint32_t ncoll, std::vector<ColliderImpulse>& out, uint64_t* lost) const {
    out.assign(ncoll, ColliderImpulse{});
    if (lost) *lost = 0;
    if (!on_ || n_ == 0) return;
    std::vector<int32_t> k(size_t(n_) * kReactionSlots);
    std::vector<Vec3f> J(k.size()), P(n_);
    std::vector<uint32_t> l(n_);
    ex.download(k_, k.data(), k.size());
    ex.download(J_, J.data(), J.size());
    ex.download(x, P.data(), n_);
    ex.download(lost_, l.data(), n_);
    for (uint32_t i = 0; i < n_; ++i) {
      if (lost) *lost += l[i];
      const double p[3] = {P[i].x, P[i].y, P[i].z};
      for (int s = 0; s < kReactionSlots; ++s) {
        const int32_t c = k[size_t(i) * kReactionSlots + s];
        if (c < 0 || uint32_t(c) >= ncoll) continue;
        const Vec3f& j = J[size_t(i) * kReactionSlots + s];
        const double q[3] = {j.x, j.y, j.z};
        ColliderImpulse& o = out[size_t(c)];
        for (int a = 0; a < 3; ++a) o.linear[a] += q[a];
        o.angular[0] += p[1] * q[2] - p[2] * q[1];
        o.angular[1] += p[2] * q[0] - p[0] * q[2];
        o.angular[2] += p[0] * q[1] - p[1] * q[0];
      }
    }
  }
  std::size_t bytes() const { return k_.size() * 4 + J_.size() * sizeof(Vec3f) + lost_.size() * 4; }

 private:
  bool on_ = false;
  uint32_t n_ = 0;
  Vec<int32_t> k_;
  Vec<Vec3f> J_;
  Vec<uint32_t> lost_;
};

// The part of every solver template (PbfSolverT, SphSolverT, MpmSolverT)
// that does not depend on its method: the executor, the particle count,
// the carried attributes, the colliders (and their reactions, for the
// methods that measure them) and the stage times, with the
// Interface's backend(), size(), stage_times() and a set_colliders() that
// uploads the colliders (a method that does more overrides it and calls
// this one).
// Each particle's clearance (lower_clearance in collider.h): a lower bound
// on its distance to the colliders, kept where every collider is analytic
// and still, so that passes skip the colliders of particles far from them.
// A solver's projection measures the bounds (measuring(), then measured()),
// its moves lower them while they are valid (bounds()), and loading, new
// colliders and switching them off make them invalid until measured again.
// Off (enable(false)): every particle meets every collider, the reference
// the skipping passes are tested against.
template <class Exec>
class ColliderClearances {
 public:
  template <class T>
  using Vec = typename Exec::template Vector<T>;
  void load(uint32_t n) {
    clear_.resize(n);
    valid_ = false;
  }
  void set_colliders(const std::vector<Collider>& cs) {
    hold_ = clearances_hold(cs);
    valid_ = false;
  }
  void enable(bool on) {
    on_ = on;
    valid_ = false;
  }
  void invalidate() { valid_ = false; }
  // Whether the bounds hold for the particles as they are.
  bool valid() const { return valid_; }
  // The bounds while valid, to read or lower; else null.
  float* bounds() { return valid_ ? clear_.data() : nullptr; }
  // Where the measuring pass writes the bounds; null where none are kept.
  float* measuring() { return on_ && hold_ ? clear_.data() : nullptr; }
  void measured() { valid_ = on_ && hold_; }
  // With the particles' reordering (permute_into).
  void permute(const Exec& ex, Vec<float>& scratch, const uint32_t* order, uint32_t n) {
    if (valid_) permute_into(ex, clear_, scratch, order, n);
  }
  std::size_t bytes() const { return clear_.size() * sizeof(float); }

 private:
  Vec<float> clear_;
  bool on_ = true, hold_ = true, valid_ = false;
};

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
    clearances_.set_colliders(cs);
  }
  void set_force_fields(const std::vector<ForceField>& fs) override {
    ex_.upload(fields_, fs.data(), fs.size());
    nfields_ = uint32_t(fs.size());
  }

 protected:
  SolverOn(const Params& p, Exec ex) : Interface(p), ex_(std::move(ex)) {}

  Exec ex_;
  uint32_t n_ = 0, ncoll_ = 0, nfields_ = 0;
  typename Exec::template Vector<ForceField> fields_;
  CarriedAttributes<Exec> carried_;
  DeviceColliders<Exec> colliders_;
  ColliderReactions<Exec> reactions_;
  ColliderClearances<Exec> clearances_;
  StageTimes times_;
};

// Brings the names of SolverOn<Exec, Interface> into a solver template's
// scope (a dependent base's members are not found by unqualified lookup),
// with Vec<T>, the executor's vector, as Eigen's EIGEN_DENSE_PUBLIC_INTERFACE
// does for its expression templates. Used once, at the top of the class.
#define EDDY_SOLVER_ON(Interface)                                                                               \
  using Base = SolverOn<Exec, Interface>;                                                                       \
  using Base::carried_, Base::colliders_, Base::ex_, Base::max_speed_, Base::n_, Base::ncoll_, Base::params_,   \
      Base::reactions_, Base::clearances_, Base::times_, Base::fields_, Base::nfields_;                         \
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
