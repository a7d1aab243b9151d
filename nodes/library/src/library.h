#pragma once
// The built-in node library, registered by the plug-in entry point in plugin.cpp.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/core/enum_names.h"
#include "eddy/core/error.h"
#include "eddy/core/kernels.h"
#include "eddy/core/param_table.h"
#include "eddy/core/rigid/coupling.h"
#include "eddy/graph/node.h"
#include "eddy/graph/registry.h"
#include "eddy/graph/value.h"
#include "eddy/graph/bodies_value.h"
#include "eddy/graph/soft_value.h"
#include "eddy/graph/volumes_value.h"

namespace eddy::library {

// "a, b c" -> {"a", "b", "c"}: attribute lists in parameters.
std::vector<std::string> split_names(const std::string& s);
// The `path` parameter of a node that writes a file each frame (the writers,
// FileCache), default `def` ("$OS/name.$F4.ext"), its doc `doc` ("File path
// (.ext)") followed by what the frame and node tokens mean: the node is time
// dependent, and loading checks that the path is not empty, has a frame
// token when several frames are cooked (or each frame would overwrite the
// last) and, unless `extensions` is empty, ends in one of them.
NodeSpec& output_path_param(NodeSpec& s, std::string def, std::string doc, std::vector<std::string> extensions);
// The `path` parameter of a reader: a frame token makes it read a sequence
// (the node is frame dependent); unless `extensions` is empty, loading
// checks that the path ends in one of them.
NodeSpec& input_path_param(NodeSpec& s, std::string doc, std::vector<std::string> extensions);

// An enum parameter's value, mapped by name through the enum's table in core/
// (the spec lists the same table's names, so validation has ruled out others).
template <class E, std::size_t N>
E enum_param(const CookContext& c, const std::string& name, const EnumName<E> (&table)[N]) {
  const std::string& v = c.param_string(name);
  if (const auto e = enum_from_name(table, v)) return *e;
  throw Error(c.where() + ".params." + name + ": unknown value '" + v + "'");
}

// The solver nodes (solver_nodes.cpp). The spec every solver node starts
// from: stateful, in "Solvers", with the `particles` and `colliders` inputs,
// the `particles` output (output_doc) and the `device` parameter.
NodeSpec solver_spec(std::string type, std::string doc, std::string output_doc);
// A core parameter table's fields (param_table.h) as the node's parameters,
// with the defaults of a default-constructed P and the table's ranges, units
// and docs: in the table's order, every field the spec does not have yet, up
// to and including `through` (empty: to the end). So a node places
// parameters of its own between parts of the table.
inline std::optional<double> bound(double b) { return std::isinf(b) ? std::nullopt : std::optional<double>(b); }
template <class P>
NodeSpec& table_params(NodeSpec& s, const ParamTable<P>& t, std::string_view through = {}) {
  P d;  // the accessors take a mutable struct
  for (const ParamField<P>& f : t.fields()) {
    if (s.find_param(f.name) == nullptr) {
      switch (f.kind) {
        case ParamKind::Real:
          s.param_float(f.name, f.get_real(d), bound(f.lo), bound(f.hi), f.unit, f.doc);
          break;
        case ParamKind::Integer: s.param_int(f.name, f.integer(d), f.lo, f.hi, f.unit, f.doc); break;
        case ParamKind::Flag: s.param_bool(f.name, f.flag(d), f.doc); break;
        case ParamKind::Vector: {
          const Vec3f v = f.vector(d);
          s.param_vec3(f.name, {v.x, v.y, v.z}, {}, {}, f.unit, f.doc);
          break;
        }
        case ParamKind::Choice: s.param_enum(f.name, f.items, f.get_choice(d), f.doc); break;
      }
    }
    if (f.name == through) break;
  }
  return s;
}
// The node's values of every field of the table, read into `p`.
template <class P>
void read_table_params(const CookContext& c, const ParamTable<P>& t, P& p) {
  for (const ParamField<P>& f : t.fields()) {
    switch (f.kind) {
      case ParamKind::Real: f.set_real(p, c.param_float(f.name)); break;
      case ParamKind::Integer: f.integer(p) = int(c.param_int(f.name)); break;
      case ParamKind::Flag: f.flag(p) = c.param_bool(f.name); break;
      case ParamKind::Vector: f.vector(p) = c.param_vec3f(f.name); break;
      case ParamKind::Choice:
        if (!f.set_choice(p, c.param_string(f.name)))
          throw Error(c.where() + ".params." + f.name + ": unknown value '" + c.param_string(f.name) + "'");
        break;
    }
  }
}
// The particles a stateful solver
// continues from: its own output at frame - 1, or at the start frame its
// input with an `id` added when missing; throws when they have no radius.
std::shared_ptr<const Points> solver_start(const CookContext& ctx);
// The frame's sources and sinks (sources.cpp): applied to `pts`, the state
// at the start of the frame about to be stepped (frame - 1), with a line
// for the frame's report when either is linked; true when they changed the
// particles (the solver must load them again).
bool apply_sources(const CookContext& ctx, Points& pts);
// A closed mesh as a sampled signed distance (voxel dx, 0: 1/64 of its
// largest extent) in c (made a Grid shape, its placement kept); returns the
// samples c points into, and reports the sampling on ctx. Throws for a mesh
// without faces or not closed.
std::shared_ptr<const std::vector<float>> sample_mesh_shape(CookContext& ctx, const Mesh& mesh, double dx,
                                                            Collider& c);
// sample_mesh_shape for a node that cooks again every frame because its
// placement is animated: the samples are in the mesh's own frame, so they
// are kept while the mesh (the same value) and the voxel size stay, and
// only a new mesh (a sequence read with $F, say) or a new size samples again.
class MeshShapeCache {
 public:
  std::shared_ptr<const std::vector<float>> sample(CookContext& ctx, const std::shared_ptr<const Mesh>& mesh, double dx,
                                                   Collider& c);

 private:
  std::shared_ptr<const Mesh> mesh_;
  double dx_ = 0;
  Collider grid_;  // the sampled grid's fields
  std::shared_ptr<const std::vector<float>> values_;
};
// Every collider linked into the `colliders` input (or another of colliders).
std::vector<Collider> input_colliders(const CookContext& ctx, const std::string& socket = "colliders");
// Every force field linked into the `forces` input (none when the node has no such input).
std::vector<ForceField> input_force_fields(const CookContext& ctx);
// A hash of every parameter: a change restarts the simulation.
uint64_t params_signature(const CookContext& ctx);
// The progress of a frame (fraction 0..1 and what is being done), and the
// cancellation point between two steps.
void step_progress(CookContext& ctx, double fraction, const char* what);


// A solver on the node's `device` parameter: cpu (TBB, ctx.threads()) or cuda.
template <class Solver, class Params>
std::unique_ptr<Solver> make_on_device(const CookContext& ctx, const Params& p,
                                       std::unique_ptr<Solver> (*cpu)(const Params&, int),
                                       std::unique_ptr<Solver> (*cuda)(const Params&)) {
  return ctx.param_string("device") == "cuda" ? cuda(p) : cpu(p, ctx.threads());
}

// How a solver node's state enters and leaves it: the socket it comes out
// of (and, for particles, goes into) and where a frame starts from.
template <class State>
struct SolverState;
template <>
struct SolverState<Points> {
  static constexpr const char* socket = "particles";
  static std::shared_ptr<const Points> start(const CookContext& ctx) { return solver_start(ctx); }
  static bool replenish(const CookContext& ctx, Points& pts) { return apply_sources(ctx, pts); }
};
template <>
struct SolverState<SoftBodies> {
  static constexpr const char* socket = "soft";
  // Its own output at frame - 1, or at the start frame every object linked
  // into the `soft` input (soft_nodes.cpp).
  static std::shared_ptr<const SoftBodies> start(const CookContext& ctx);
};
template <>
struct SolverState<Bodies> {
  static constexpr const char* socket = "bodies";
  // Its own output at frame - 1, or at the start frame every body linked
  // into the `bodies` input (rigid_nodes.cpp).
  static std::shared_ptr<const Bodies> start(const CookContext& ctx);
};

// The skeleton of every stateful solver node: load, advance one frame,
// report, store. Frame f continues from the node's own output at f - 1, and
// that output is the whole state: every frame starts by loading it, whether
// it was cooked just before, taken from the cache or read from a checkpoint
// on disk, so a run resumed at any frame (another process, another machine)
// is bit for bit the run that never stopped. What a solver keeps between
// steps and not in its output (warm starts, the particle order's age) starts
// afresh at each frame. The solver object (scratch arrays, grids, factored
// matrices) is kept between frames, made anew when the parameters change,
// and dropped when a frame fails or is cancelled (its state would be
// mid-step). A solver node supplies make_solver and advance, and load or
// store where it does more than the solver's own.
template <class Solver, class State = Points>
class SolverNode : public Node {
 public:
  void cook(CookContext& ctx) final {
    try {
      const std::shared_ptr<const State> from = SolverState<State>::start(ctx);
      const std::vector<Collider> colliders = input_colliders(ctx);
      const bool fresh = must_remake(ctx);
      if (fresh) {
        release();
        solver_ = make_solver(ctx);
      }
      meet(ctx, colliders);  // first: loading looks at them (wall density, speed estimate)
      solver_->set_force_fields(input_force_fields(ctx));
      // Sources and sinks change the particles between frames.
      std::shared_ptr<const State> start = from;
      if constexpr (requires(Points& p) { SolverState<State>::replenish(ctx, p); }) {
        if (ctx.previous()) {
          auto now = std::make_shared<State>(*from);
          if (SolverState<State>::replenish(ctx, *now)) start = now;
        }
      }
      load(ctx, *start);
      if (ctx.previous()) {
        // Animated parameters, taken at each step's time (specs with steps_animations).
        if (ctx.spec().steps_animations && !ctx.animations().empty())
          solver_->set_schedule([this, &ctx](double t) {
            ctx.set_eval_frame(ctx.start_frame() + t * ctx.fps());
            retune(ctx);
            ctx.set_eval_frame(std::numeric_limits<double>::quiet_NaN());
          });
        advance(ctx, (ctx.frame() - 1 - ctx.start_frame()) / ctx.fps(), 1.0 / ctx.fps());
        solver_->set_schedule({});
      }
      auto out = std::make_shared<State>();
      store(ctx, *out);
      ctx.output_shared<State>(SolverState<State>::socket, out);
      finish(ctx);
    } catch (...) {
      ctx.set_eval_frame(std::numeric_limits<double>::quiet_NaN());
      release();
      solver_.reset();
      throw;
    }
  }

 protected:
  // Gives the solver the frame's colliders (a node stepping bodies with its
  // liquid adds them, CoupledBodies).
  virtual void meet(CookContext&, const std::vector<Collider>& colliders) {
    solver_->set_colliders(colliders);
  }
  // Lets go of what holds on to the solver, before it is replaced.
  virtual void release() {}
  // Outputs besides the state, after it is stored.
  virtual void finish(CookContext&) {}
  // Gives the solver its parameters as ctx reads them now (at a step's time;
  // nodes whose spec has steps_animations).
  virtual void retune(const CookContext&) {}

  // A new solver for the node's parameters.
  virtual std::unique_ptr<Solver> make_solver(const CookContext& ctx) = 0;
  // Takes the particles (or bodies) as the solver's state (at the start frame, or to resume).
  virtual void load(CookContext&, const State& from) {
    if constexpr (requires(Solver& s) { s.load(from); }) solver_->load(from);
    else throw Error("SolverNode: a solver whose load() takes more than its state needs its node's load()");
  }
  // One frame of frame_dt seconds from simulation time t0, reported through ctx.
  virtual void advance(CookContext& ctx, double t0, double frame_dt) = 0;
  // The frame's output particles (or bodies).
  virtual void store(const CookContext&, State& out) const {
    if constexpr (requires(const Solver& s) { s.store(out); }) solver_->store(out);
    else throw Error("SolverNode: a solver whose store() takes more than its state needs its node's store()");
  }

  std::unique_ptr<Solver> solver_;

 private:
  // True when the solver must be made anew: none yet, or other parameters.
  bool must_remake(const CookContext& ctx) {
    const uint64_t sig = params_signature(ctx);
    const bool fresh = !solver_ || sig != params_sig_;
    params_sig_ = sig;
    return fresh;
  }

  uint64_t params_sig_ = 0;
};

// The `bodies` input and output of a liquid solver node, and the bodies
// stepped two ways with its liquid (core/rigid/coupling.h): linked, the
// bodies (at the start frame those linked in, then the node's own of the
// frame before) become colliders of the liquid in each substep and are
// pushed by it; unlinked, the liquid meets only the scene's colliders and
// the output is empty.
class CoupledBodies {
 public:
  // The spec's `bodies` input, output and the bodies' parameters; `what`
  // the solver's matter in their docs, `step` what it calls one of its steps.
  static NodeSpec& spec(NodeSpec& s, const std::string& what = "liquid", const std::string& step = "substep");
  // The liquid's colliders for the frame (and, linked, the coupling, made
  // anew from the bodies of the frame before); `gravity` is the liquid's.
  void meet(CookContext& ctx, SolverBase& liquid, const std::vector<Collider>& colliders,
            const Vec3f& gravity);
  void release() { coupling_.reset(); }
  bool linked() const { return coupling_ != nullptr; }
  // The linked bodies (null when none are).
  const Bodies* bodies() const { return coupling_ ? &coupling_->rigid().bodies() : nullptr; }
  // Before a frame's steps: its number, named in errors.
  void begin_frame(int frame);
  // The fastest point of a body's surface, m/s (for the substep count).
  float max_speed() const;
  // The frame's report on the bodies ("" when none).
  std::string info() const;
  // The bodies on the `bodies` output.
  void output(CookContext& ctx) const;

 private:
  std::unique_ptr<BodyCoupling> coupling_;
};

// A liquid solver node that steps linked bodies with its liquid: SolverNode
// with CoupledBodies in its hooks. The method's advance calls
// bodies_.begin_frame before its steps and adds bodies_.info() to its report.
template <class Solver>
class LiquidSolverNode : public SolverNode<Solver> {
 protected:
  void meet(CookContext& ctx, const std::vector<Collider>& colliders) override {
    bodies_.meet(ctx, *this->solver_, colliders, this->solver_->params().gravity);
  }
  void release() override { bodies_.release(); }
  void finish(CookContext& ctx) override { bodies_.output(ctx); }

  CoupledBodies bodies_;
};

void register_emitters(Registry& r);
void register_colliders(Registry& r);
void register_pbf(Registry& r);
void register_sph(Registry& r);
void register_mpm(Registry& r);
void register_points(Registry& r);
void register_io(Registry& r);
void register_surfacing(Registry& r);
void register_files(Registry& r);
void register_rigid(Registry& r);
void register_soft(Registry& r);
void register_sources(Registry& r);

}  // namespace eddy::library
