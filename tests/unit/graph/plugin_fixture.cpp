// A third-party node library, built as its own plug-in by the tests: one
// node type that scales particle positions.
#include "eddy/graph/node.h"
#include "eddy/graph/registry.h"

namespace {

class ScaleNode final : public eddy::Node {
 public:
  void cook(eddy::CookContext& ctx) override {
    eddy::Points p = *ctx.input<eddy::Points>("particles");
    const float s = static_cast<float>(ctx.param_float("factor"));
    for (std::size_t i = 0; i < p.size(); ++i) p.P()[i] *= s;
    ctx.output("particles", std::move(p));
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) int eddy_plugin_abi() { return EDDY_PLUGIN_ABI; }

extern "C" __attribute__((visibility("default"))) void eddy_register_nodes(eddy::Registry& r) {
  eddy::NodeSpec s("ThirdPartyScale", "Third party",
           "Scales positions about the origin.");
  s.input("particles", "points", "In.")
      .output("particles", "points", "Scaled.")
      .param_float("factor", 2.0, 0.0, 100.0, "", "Scale factor.");
  r.add(std::move(s.make<ScaleNode>()));
}
