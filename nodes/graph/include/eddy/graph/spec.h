#pragma once
// Node specs: each node type declares its name, category, doc, typed sockets
// and typed parameters once. That one spec drives JSON validation, the
// `eddy nodes` reference, the editor's widgets and the defaults of
// parameters a graph leaves out.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "eddy/core/enum_names.h"

namespace eddy {

class Node;
struct Asset;

enum class ParamType { Bool, Int, Float, Vec3, String, Enum, Path };
const char* to_string(ParamType t);

// A vector parameter's value (x, y, z).
using Vec3Value = std::array<double, 3>;
using ParamValue = std::variant<bool, int64_t, double, Vec3Value, std::string>;
// A parameter value as it would be written in a graph file ("4", "[0, 1, 0]", "\"cpu\"").
std::string to_display(const ParamValue& v);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Float;
  ParamValue default_value;
  std::optional<double> min, max;  // Int, Float and each Vec3 component
  std::string unit;                // SI: "m", "kg/m^3", "s", "%", ...
  std::string doc;
  std::vector<std::string> items;  // Enum
};

struct SocketSpec {
  std::string name;
  std::string type;  // value type name: "points", "colliders", ...
  std::string doc;
  bool optional = false;
  bool multi = false;  // inputs only: any number of links, in link order
};

// Parameter values of one node, complete (defaults filled in) after loading.
using ParamSet = std::map<std::string, ParamValue, std::less<>>;

// What a spec's check() sees of the graph around the node.
struct CheckContext {
  int frame_start = 1, frame_end = 1;
  std::string where;  // "nodes[2] (\"water\")", for messages
};

struct NodeSpec {
  NodeSpec() = default;
  // A node type with its category and one-paragraph doc.
  NodeSpec(std::string type_, std::string category_, std::string doc_)
      : type(std::move(type_)), category(std::move(category_)), doc(std::move(doc_)) {}

  std::string type;
  std::string category;
  std::string doc;
  std::vector<SocketSpec> inputs, outputs;
  std::vector<ParamSpec> params;
  // Frame f continues from the node's own output at f - 1 (solvers).
  bool stateful = false;
  // A stateful node whose solver takes its animated parameters at every
  // step (CookContext::set_eval_frame); other stateful nodes refuse them.
  bool steps_animations = false;
  // The output depends on the frame itself, not only on the inputs (writers).
  bool time_dependent = false;
  // Time dependence that some parameters decide (a reader whose path has a
  // frame token); null: only time_dependent counts.
  std::function<bool(const ParamSet&)> frame_dependent;
  // Inputs are cooked only when the node asks for them (a file cache that
  // finds its file on disk never cooks upstream).
  bool lazy_inputs = false;
  // The frame the node's inputs are cooked at when it cooks `frame`, its
  // parameters given (TimeShift); null: the same frame.
  std::function<int(const ParamSet&, int frame)> input_frame;
  // The node also reads its inputs at the frame before (CookContext::
  // input_before: a deforming mesh's velocity from consecutive frames); its
  // signature then covers both frames' inputs.
  bool reads_previous_inputs = false;
  std::function<std::unique_ptr<Node>()> factory;
  // An asset's node type: its contents, which the cook engine expands each
  // node of it into (eddy/graph/asset.h); null for other types.
  std::shared_ptr<const Asset> asset;
  // Optional checks that need several parameters or the frame range; throws
  // eddy::Error naming ctx.where. Runs at load time, before anything cooks.
  std::function<void(const ParamSet&, const CheckContext&)> check;

  const ParamSpec* find_param(std::string_view name) const;
  const SocketSpec* find_input(std::string_view name) const;
  const SocketSpec* find_output(std::string_view name) const;

  // ---- declaration helpers, chainable
  NodeSpec& describe(std::string category_, std::string doc_);
  NodeSpec& input(std::string name, std::string type, std::string doc, bool optional = false, bool multi = false);
  NodeSpec& output(std::string name, std::string type, std::string doc);
  NodeSpec& param_bool(std::string name, bool def, std::string doc);
  NodeSpec& param_int(std::string name, int64_t def, std::optional<double> min, std::optional<double> max,
                      std::string unit, std::string doc);
  NodeSpec& param_float(std::string name, double def, std::optional<double> min, std::optional<double> max,
                        std::string unit, std::string doc);
  NodeSpec& param_vec3(std::string name, Vec3Value def, std::optional<double> min, std::optional<double> max,
                       std::string unit, std::string doc);
  NodeSpec& param_string(std::string name, std::string def, std::string doc);
  NodeSpec& param_path(std::string name, std::string def, std::string doc);
  NodeSpec& param_enum(std::string name, std::vector<std::string> items, std::string def, std::string doc);
  // An enum parameter whose items are the names of a core enum's table.
  template <class E, std::size_t N>
  NodeSpec& param_enum(std::string name, const EnumName<E> (&table)[N], E def, std::string doc) {
    return param_enum(std::move(name), enum_names(table), std::string(enum_name(table, def)), std::move(doc));
  }
  template <class T>
  NodeSpec& make() {
    factory = [] { return std::unique_ptr<Node>(new T()); };
    return *this;
  }
};

// Defaults of every parameter of a spec.
ParamSet default_params(const NodeSpec& spec);

}  // namespace eddy
