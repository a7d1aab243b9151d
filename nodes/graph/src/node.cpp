#include "eddy/graph/node.h"

#include <algorithm>
#include <filesystem>

#include "eddy/core/error.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/util.h"

namespace eddy {

namespace fs = std::filesystem;

std::string CookContext::where() const { return "node '" + node_id_ + "' (" + spec_->type + ")"; }

namespace {
template <class T>
const T& param_as(const ParamSet& ps, std::string_view name, const std::string& where, const char* what) {
  auto it = ps.find(name);
  if (it == ps.end()) throw Error(where + ": no parameter '" + std::string(name) + "'");
  const T* v = std::get_if<T>(&it->second);
  if (!v) throw Error(where + ": parameter '" + std::string(name) + "' is not " + what);
  return *v;
}
}  // namespace

bool CookContext::animated(std::string_view n) const { return anims_ && anims_->count(n) > 0; }

std::optional<double> CookContext::channel_value(std::string_view n, int c, double frame) const {
  if (!anims_) return std::nullopt;
  const auto it = anims_->find(n);
  if (it == anims_->end() || !it->second.channels[std::size_t(c)]) return std::nullopt;
  const ParamSpec* p = spec_->find_param(n);
  EDDY_DEMAND(p != nullptr);
  const TimeVars t{frame, fps_, double(start_), double(end_)};
  std::string w = where() + ": parameter '" + std::string(n) + "'";
  if (p->type == ParamType::Vec3) w += "[" + std::to_string(c) + "]";
  return animated_value(*p, *it->second.channels[std::size_t(c)], t, w);
}

bool CookContext::param_bool(std::string_view n) const {
  if (const auto a = channel_value(n, 0, eval_frame())) return *a != 0.0;
  return param_as<bool>(*params_, n, where(), "a bool");
}
int64_t CookContext::param_int(std::string_view n) const {
  if (const auto a = channel_value(n, 0, eval_frame())) return int64_t(*a);
  return param_as<int64_t>(*params_, n, where(), "an integer");
}
double CookContext::param_float(std::string_view n) const { return param_float_at(n, eval_frame()); }
double CookContext::param_float_at(std::string_view n, double frame) const {
  if (const auto a = channel_value(n, 0, frame)) return *a;
  return param_as<double>(*params_, n, where(), "a number");
}
Vec3Value CookContext::param_vec3(std::string_view n) const { return param_vec3_at(n, eval_frame()); }
Vec3Value CookContext::param_vec3_at(std::string_view n, double frame) const {
  Vec3Value v = param_as<Vec3Value>(*params_, n, where(), "a vector");
  for (int c = 0; c < 3; ++c)
    if (const auto a = channel_value(n, c, frame)) v[std::size_t(c)] = *a;
  return v;
}
Vec3f CookContext::param_vec3f(std::string_view n) const { return param_vec3f_at(n, eval_frame()); }
Vec3f CookContext::param_vec3f_at(std::string_view n, double frame) const {
  const Vec3Value v = param_vec3_at(n, frame);
  return vec3(float(v[0]), float(v[1]), float(v[2]));
}
const std::string& CookContext::param_string(std::string_view n) const {
  return param_as<std::string>(*params_, n, where(), "a string");
}
int CookContext::param_enum(std::string_view n) const {
  const std::string& s = param_string(n);
  const ParamSpec* p = spec_->find_param(n);
  EDDY_DEMAND(p && p->type == ParamType::Enum);
  const auto it = std::find(p->items.begin(), p->items.end(), s);
  EDDY_DEMAND(it != p->items.end());
  return static_cast<int>(it - p->items.begin());
}

void CookContext::pull(std::string_view socket) const {
  if (pull_ && !inputs_.count(socket)) pull_(std::string(socket));
}

std::size_t CookContext::input_count(std::string_view socket) const {
  pull(socket);
  auto it = inputs_.find(socket);
  return it == inputs_.end() ? 0 : it->second.size();
}

const Value& CookContext::input_value(std::string_view socket, std::size_t index) const {
  pull(socket);
  auto it = inputs_.find(socket);
  if (it == inputs_.end() || index >= it->second.size())
    throw Error("input '" + std::string(socket) + "' is not connected");
  return it->second[index];
}

std::optional<Value> CookContext::input_value_before(std::string_view socket, std::size_t index) const {
  if (!pull_before_) throw Error(where() + " read an input at the previous frame without reads_previous_inputs");
  return pull_before_(std::string(socket), index);
}

void CookContext::set_output(std::string_view socket, Value v) {
  const SocketSpec* s = spec_->find_output(socket);
  if (!s) throw Error(where() + " set an undeclared output '" + std::string(socket) + "'");
  if (v.type() != s->type)
    throw Error(where() + " set output '" + std::string(socket) + "' to a " + v.type() + ", declared " + s->type);
  (*outputs_)[std::string(socket)] = std::move(v);
}

std::string CookContext::output_path(const std::string& pattern) const {
  const fs::path p(expand_path_tokens(pattern, frame_, node_id_));
  if (p.is_absolute()) return p.string();
  return (fs::path(engine_->options().output_dir) / p).lexically_normal().string();
}

std::string CookContext::input_path(const std::string& path) const {
  const fs::path p(expand_path_tokens(path, frame_, node_id_));
  if (p.is_absolute()) return p.string();
  return (fs::path(engine_->graph_dir()) / p).lexically_normal().string();
}

void CookContext::progress(double fraction, const std::string& message) const {
  if (auto* o = engine_->observer()) o->node_progress(node_id_, frame_, fraction, message);
}
void CookContext::info(const std::string& message) const {
  if (auto* o = engine_->observer()) o->node_info(node_id_, frame_, message);
}
void CookContext::warn(const std::string& message) const {
  if (auto* o = engine_->observer()) o->node_warning(node_id_, frame_, message);
}
void CookContext::check_cancel() const {
  if (engine_->cancel_requested()) throw Cancelled();
}

}  // namespace eddy
