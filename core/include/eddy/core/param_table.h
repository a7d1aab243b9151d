#pragma once
// A method's parameters described once. For each user-facing field of the
// method's parameter struct P the table holds its name, how to reach the
// field, its closed range, its unit and what it does; the struct's own
// initialisers are the defaults. validate() checks the ranges from the
// table, and the node library builds a node's parameters from it and reads a
// graph's values back through it, so a default, a range or a doc line lives
// in one place (SPlisHSPlasH registers each parameter with its label,
// description and bounds in the same spirit).
#include <cmath>
#include <cstddef>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eddy/core/enum_names.h"
#include "eddy/core/error.h"
#include "eddy/core/kernels.h"
#include "eddy/core/vec.h"

namespace eddy {

enum class ParamKind { Real, Integer, Flag, Vector, Choice };

template <class P>
struct ParamField {
  std::string name;
  ParamKind kind = ParamKind::Real;
  double lo = 0, hi = 0;  // Real, Integer: the closed range of valid values (hi may be infinite)
  std::string unit, doc;
  std::vector<std::string> items;  // Choice: the enum's names, in its table's order
  // The field in a P; only the ones of the field's kind are set. A Real is
  // read and written as a double whether the field is a float or a double; a
  // Choice by name (set: false when the name is not an item).
  std::function<double(const P&)> get_real;
  std::function<void(P&, double)> set_real;
  std::function<int&(P&)> integer;
  std::function<bool&(P&)> flag;
  std::function<Vec3f&(P&)> vector;
  std::function<std::string(const P&)> get_choice;
  std::function<bool(P&, const std::string&)> set_choice;
};

template <class P>
class ParamTable {
 public:
  using Field = ParamField<P>;
  // `method` names the parameters' owner in messages ("PBF", "SPH", ...).
  explicit ParamTable(std::string method) : method_(std::move(method)) {}

  // A float field; `at` reaches one that is not a plain member (MPM's per-material fields).
  ParamTable& real(std::string name, std::function<float&(P&)> at, double lo, double hi, std::string unit,
                   std::string doc) {
    Field& f = add(std::move(name), ParamKind::Real, std::move(unit), std::move(doc));
    f.lo = lo;
    f.hi = hi;
    f.get_real = [at](const P& p) { return double(at(const_cast<P&>(p))); };
    f.set_real = [at](P& p, double v) { at(p) = float(v); };
    return *this;
  }
  ParamTable& real(std::string name, float P::*m, double lo, double hi, std::string unit, std::string doc) {
    return real(std::move(name), member(m), lo, hi, std::move(unit), std::move(doc));
  }
  ParamTable& real(std::string name, double P::*m, double lo, double hi, std::string unit, std::string doc) {
    Field& f = add(std::move(name), ParamKind::Real, std::move(unit), std::move(doc));
    f.lo = lo;
    f.hi = hi;
    f.get_real = [m](const P& p) { return p.*m; };
    f.set_real = [m](P& p, double v) { p.*m = v; };
    return *this;
  }
  ParamTable& integer(std::string name, int P::*m, int lo, int hi, std::string unit, std::string doc) {
    Field& f = add(std::move(name), ParamKind::Integer, std::move(unit), std::move(doc));
    f.lo = lo;
    f.hi = hi;
    f.integer = member(m);
    return *this;
  }
  ParamTable& flag(std::string name, bool P::*m, std::string doc) {
    add(std::move(name), ParamKind::Flag, "", std::move(doc)).flag = member(m);
    return *this;
  }
  ParamTable& vector(std::string name, Vec3f P::*m, std::string unit, std::string doc) {
    add(std::move(name), ParamKind::Vector, std::move(unit), std::move(doc)).vector = member(m);
    return *this;
  }
  template <class E, std::size_t N>
  ParamTable& choice(std::string name, E P::*m, const EnumName<E> (&table)[N], std::string doc) {
    Field& f = add(std::move(name), ParamKind::Choice, "", std::move(doc));
    f.items = enum_names(table);
    f.get_choice = [m, &table](const P& p) { return std::string(enum_name(table, p.*m)); };
    f.set_choice = [m, &table](P& p, const std::string& v) {
      const auto e = enum_from_name(table, v);
      if (e) p.*m = *e;
      return bool(e);
    };
    return *this;
  }

  const std::vector<Field>& fields() const { return fields_; }
  const std::string& method() const { return method_; }
  const Field* find(std::string_view name) const {
    for (const Field& f : fields_)
      if (f.name == name) return &f;
    return nullptr;
  }

  // Throws eddy::Error naming the first field outside its range, e.g.
  // "PBF parameter 'epsilon': must be in [0, 10], got 12".
  void check(const P& p) const {
    P& q = const_cast<P&>(p);  // the accessors are written for both reading and writing
    for (const Field& f : fields_) {
      double v = 0;
      if (f.kind == ParamKind::Real) v = f.get_real(p);
      else if (f.kind == ParamKind::Integer) v = double(f.integer(q));
      else continue;
      if (!(std::isfinite(v) && v >= f.lo && v <= f.hi)) {  // NaN and infinities fail too
        std::ostringstream m;
        if (std::isinf(f.lo) && std::isinf(f.hi)) m << "must be a finite number";
        else if (std::isinf(f.hi)) m << "must be at least " << f.lo;
        else m << "must be in [" << f.lo << ", " << f.hi << "]";
        m << (f.unit.empty() ? "" : " ") << f.unit << ", got " << v;
        require_param(false, method_.c_str(), f.name, m.str());
      }
    }
  }

 private:
  template <class T>
  static std::function<T&(P&)> member(T P::*m) {
    return [m](P& p) -> T& { return p.*m; };
  }
  Field& add(std::string name, ParamKind kind, std::string unit, std::string doc) {
    if (find(name)) throw std::logic_error("ParamTable: '" + name + "' is declared twice");
    Field f;
    f.name = std::move(name);
    f.kind = kind;
    f.unit = std::move(unit);
    f.doc = std::move(doc);
    fields_.push_back(std::move(f));
    return fields_.back();
  }

  std::string method_;
  std::vector<Field> fields_;
};

// The fields every particle liquid shares (PBFSolver, SPHSolver): rest
// density, gravity, the kernel pair (kernel_doc says why its default) and
// the support radius, at least kernel_scale_min spacings.
template <class P>
ParamTable<P>& liquid_fields(ParamTable<P>& t, std::string kernel_doc, double kernel_scale_min) {
  return t.real("rest_density", &P::rest_density, 1.0, 1e5, "kg/m^3", "Rest density rho0 (water: 1000).")
      .vector("gravity", &P::gravity, "m/s^2", "Gravity.")
      .choice("kernel", &P::kernel, kKernelPairNames, std::move(kernel_doc))
      .real("kernel_scale", &P::kernel_scale, kernel_scale_min, 4.0, "spacings",
            "Support radius h in particle spacings (2 r); 2 gives about 30 neighbours.");
}

// The fields every solid method begins with (RigidBodySolver, PDSolver):
// gravity and the longest step, which advance_equal_steps cuts a frame by;
// `step_note` adds what changing it costs.
template <class P>
ParamTable<P>& equal_step_fields(ParamTable<P>& t, const std::string& step_note = "") {
  return t.vector("gravity", &P::gravity, "m/s^2", "Gravity.")
      .real("time_step", &P::time_step, 1e-6, 0.1, "s",
            "Longest step; each frame takes equal steps of at most this." + step_note);
}

// The fields the particle liquids end with: Z-order reordering, and the
// blow-up guard over one `step` ("step", or PBF's "substep").
template <class P>
ParamTable<P>& liquid_guard_fields(ParamTable<P>& t, const std::string& step) {
  return t
      .integer("reorder_interval", &P::reorder_interval, 0, 1000000, "steps",
               "Reorder all particle attributes in Z-order every this many steps, for memory locality (0: never).")
      .real("max_cfl", &P::max_cfl, 0.1, 10000.0, "diameters",
            "Stop with an error when the fastest particle moves more than this many particle diameters in one " +
                step + " (a blow-up).");
}

}  // namespace eddy
