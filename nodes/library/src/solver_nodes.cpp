// What the solver nodes (PBFSolver, SPHSolver, MPMSolver) share: where a frame starts
// from, their colliders and the signature of their parameters.
#include "eddy/graph/node.h"
#include "eddy/graph/util.h"
#include "library.h"

namespace eddy::library {

NodeSpec solver_spec(std::string type, std::string doc, std::string output_doc) {
  NodeSpec s(std::move(type), "Solvers",
             std::move(doc));
  s.stateful = true;
  s.input("particles", "points",
          "Initial particles (read at the start frame), with a particle radius (optional when a source is linked).",
          true)
      .input("colliders", "colliders", "Collider shapes (optional; any number).", true, true)
      .input("sources", "sources",
             "Particle sources (FluidSource; any number), emitting at the start of each frame for the frame.", true,
             true)
      .input("sinks", "sinks", "Kill volumes (KillVolume; any number), applied at the start of each frame.", true,
             true)
      .input("forces", "forces", "Force fields (ForceField; any number) applied besides gravity.", true, true)
      .output("particles", "points",
              output_doc +
                  " An `id` (input order) is added when the input has none, since the solver reorders particles "
                  "in memory.")
      .param_enum("device", {"cpu", "cuda"}, "cpu", "Where the solver runs: cpu (TBB) or cuda (the GPU).");
  return s;
}

std::shared_ptr<const Points> solver_start(const CookContext& ctx) {
  std::shared_ptr<const Points> from;
  if (const Outputs* prev = ctx.previous()) {
    from = prev->at("particles").as<Points>();
  } else if (ctx.input_count("particles") == 0) {
    // No particles yet: the sources' (emitting from the next frame on).
    if (ctx.input_count("sources") == 0)
      throw Error("input 'particles' is not connected and no source is: the solver has nothing to simulate");
    auto empty = std::make_shared<Points>();
    empty->radius = ctx.input<Sources>("sources", 0)->particle_radius;
    empty->add("v", AttribType::Vec3);
    empty->add("id", AttribType::Int);
    from = empty;
  } else {
    from = ctx.input<Points>("particles");
    // The solvers reorder particles in memory; an `id` keeps them trackable.
    if (!from->has("id")) {
      auto with_id = std::make_shared<Points>(*from);
      with_id->add("id", AttribType::Int);
      int32_t* id = with_id->get_int("id");
      for (std::size_t i = 0; i < with_id->size(); ++i) id[i] = static_cast<int32_t>(i);
      from = with_id;
    }
  }
  if (!(from->radius > 0))
    throw Error("input 'particles' carries no particle radius; emit them with FluidBox (or set their radius)");
  return from;
}

std::vector<ForceField> input_force_fields(const CookContext& ctx) {
  std::vector<ForceField> fields;
  for (std::size_t k = 0; k < ctx.input_count("forces"); ++k) {
    const auto f = ctx.input<ForceFields>("forces", k);
    fields.insert(fields.end(), f->list.begin(), f->list.end());
  }
  return fields;
}

std::vector<Collider> input_colliders(const CookContext& ctx, const std::string& socket) {
  std::vector<Collider> colliders;
  for (std::size_t k = 0; k < ctx.input_count(socket); ++k) {
    const auto c = ctx.input<Colliders>(socket, k);
    colliders.insert(colliders.end(), c->shapes.begin(), c->shapes.end());
  }
  return colliders;  // the solvers copy sampled grids, so the inputs may go after this frame
}

uint64_t params_signature(const CookContext& ctx) {
  Hasher h;
  for (const auto& [k, v] : ctx.params()) h.str(k).str(to_display(v));
  for (const auto& [k, a] : ctx.animations())
    for (const auto& c : a.channels) h.str(k).str(c ? c->describe() : "-");
  return h.h;
}

void step_progress(CookContext& ctx, double fraction, const char* what) {
  ctx.progress(fraction, what);
  ctx.check_cancel();
}

}  // namespace eddy::library
