#pragma once
// What the graph file's reader (graph_io.cpp), its validation
// (graph_validate.cpp) and its parameter values (param_io.cpp) share. Not
// installed: the public side is eddy/graph/graph.h.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eddy/graph/animation.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/registry.h"

namespace eddy::graph_io {

using json = nlohmann::json;

// A JSON value as written, cut to 40 characters, for messages.
std::string shown(const json& j);
// A number as a message shows it (up to 10 digits).
std::string num(double d);
// "nodes[2] (\"paddle\")"
std::string node_where(const Graph& g, std::size_t i);
// "; did you mean \"x\"?" when a candidate is close to `word`, else "".
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates);
std::vector<std::string> param_names(const NodeSpec& spec);
// The socket `name` of a node (outputs or inputs), or an error at `where`
// listing the ones it has.
const SocketSpec& socket_of(const GraphNode& n, const std::vector<SocketSpec>& sockets, const std::string& name,
                            const char* kind, const std::string& where);
// The message for a node type the registry does not have, with the closest one.
std::string unknown_type(const Registry& reg, const std::string& type, const std::string& where);
// "node.socket" -> (node, socket): a string split at its last dot, or an
// error at `where` naming the form expected (`what`).
std::pair<std::string, std::string> split_dotted(const std::string& s, const std::string& where,
                                                 const char* what = "node.socket");
// The same for a JSON value, which must be such a string.
std::pair<std::string, std::string> split_endpoint(const json& j, const std::string& where);

// A value as the command line or the editor gives it, read as JSON after
// the depth and UTF-8 checks (which throw at `where`); none when the text is
// not JSON (bare text, "x,y,z").
std::optional<json> parse_value_text(const std::string& text, const std::string& where);
// A parameter's value from JSON, checked against its spec (type, range,
// enum items), or an error at `where` saying what was expected.
ParamValue param_from_json(const ParamSpec& p, const json& j, const std::string& where);
json param_to_json(const ParamValue& v);
// Bool, int, float and vec3 parameters may be animated.
bool animatable(ParamType t);
// An animated value: an object in place of the value, or in place of a
// vec3's component.
bool is_animated_json(const ParamSpec& p, const json& j);
json channel_to_json(const Channel& c);
// The time of a graph's start frame.
TimeVars start_time(const Graph& g);
// Sets parameter p of node n from JSON j, a value or an animated value
// (which also sets the value to the animation's at the start frame, t0).
void assign_param(GraphNode& n, const ParamSpec& p, const json& j, const std::string& where, const TimeVars& t0);

// A frame of frame_range, checked where the file is read (before it becomes
// an int) and where a graph built in code is validated; `text` as written.
void check_frame(int64_t frame, const std::string& text);

}  // namespace eddy::graph_io
