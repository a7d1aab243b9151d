#include "eddy/graph/registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "eddy/core/error.h"
#include "eddy/graph/util.h"

namespace eddy {

namespace fs = std::filesystem;

namespace {
bool type_matches(ParamType t, const ParamValue& v) {
  switch (t) {
    case ParamType::Bool: return std::holds_alternative<bool>(v);
    case ParamType::Int: return std::holds_alternative<int64_t>(v);
    case ParamType::Float: return std::holds_alternative<double>(v);
    case ParamType::Vec3: return std::holds_alternative<Vec3Value>(v);
    case ParamType::String:
    case ParamType::Path:
    case ParamType::Enum: return std::holds_alternative<std::string>(v);
  }
  return false;
}

void check_spec(const NodeSpec& s) {
  const std::string w = "node type '" + s.type + "'";
  if (s.type.empty()) throw Error("a node spec has no type name");
  if (!s.factory) throw Error(w + " has no factory");
  std::set<std::string> seen;
  for (const auto& p : s.params) {
    if (!seen.insert("p:" + p.name).second) throw Error(w + ": parameter '" + p.name + "' declared twice");
    if (!type_matches(p.type, p.default_value))
      throw Error(w + ": default of parameter '" + p.name + "' is not a " + to_string(p.type));
    auto in_range = [&](double x) { return (!p.min || x >= *p.min) && (!p.max || x <= *p.max); };
    bool ok = true;
    if (p.type == ParamType::Int) ok = in_range(double(std::get<int64_t>(p.default_value)));
    if (p.type == ParamType::Float) ok = in_range(std::get<double>(p.default_value));
    if (p.type == ParamType::Vec3)
      for (double x : std::get<Vec3Value>(p.default_value)) ok = ok && in_range(x);
    if (!ok) throw Error(w + ": default " + to_display(p.default_value) + " of parameter '" + p.name + "' is outside its range");
    if (p.type == ParamType::Enum) {
      const auto& d = std::get<std::string>(p.default_value);
      if (std::find(p.items.begin(), p.items.end(), d) == p.items.end())
        throw Error(w + ": default '" + d + "' of enum parameter '" + p.name + "' is not one of its items");
    }
  }
  for (const auto& i : s.inputs)
    if (!seen.insert("i:" + i.name).second) throw Error(w + ": input '" + i.name + "' declared twice");
  for (const auto& o : s.outputs)
    if (!seen.insert("o:" + o.name).second) throw Error(w + ": output '" + o.name + "' declared twice");
}
}  // namespace

void Registry::add(NodeSpec spec) {
  check_spec(spec);
  std::unique_lock lock(mutex_);
  if (auto it = specs_.find(spec.type); it != specs_.end()) {
    throw Error("node type '" + spec.type + "' is registered twice (by " + origin_[spec.type] + " and by " +
                (loading_.empty() ? std::string("the program") : loading_) + ")");
  }
  origin_[spec.type] = loading_.empty() ? "the program" : loading_;
  const std::string name = spec.type;
  specs_.emplace(name, std::make_unique<const NodeSpec>(std::move(spec)));
}

void Registry::swap_in(NodeSpec spec) {
  std::unique_lock lock(mutex_);
  auto it = specs_.find(spec.type);
  EDDY_DEMAND(it != specs_.end());
  retired_.push_back(std::move(it->second));
  it->second = std::make_unique<const NodeSpec>(std::move(spec));
  ++revision_;
}

void Registry::replace(NodeSpec spec) {
  check_spec(spec);
  std::unique_lock lock(mutex_);
  if (specs_.find(spec.type) == specs_.end()) {
    lock.unlock();
    return add(std::move(spec));
  }
  if (origin_[spec.type] != "the program")
    throw Error("node type '" + spec.type + "' comes from " + origin_[spec.type] + " and cannot be replaced");
  lock.unlock();
  swap_in(std::move(spec));
}

std::string Registry::origin(std::string_view type) const {
  std::shared_lock lock(mutex_);
  auto it = origin_.find(type);
  return it == origin_.end() ? std::string() : it->second;
}

const NodeSpec* Registry::find(std::string_view type) const {
  std::shared_lock lock(mutex_);
  auto it = specs_.find(type);
  return it == specs_.end() ? nullptr : it->second.get();
}

std::vector<const NodeSpec*> Registry::all() const {
  std::vector<const NodeSpec*> v;
  std::shared_lock lock(mutex_);
  for (const auto& [k, s] : specs_) v.push_back(s.get());
  std::stable_sort(v.begin(), v.end(),
                   [](const NodeSpec* a, const NodeSpec* b) { return a->category < b->category; });
  return v;
}

std::string Registry::closest(std::string_view type) const {
  std::vector<std::string> names;
  std::shared_lock lock(mutex_);
  for (const auto& [k, s] : specs_) names.push_back(k);
  return closest_match(type, names);
}

void Registry::load_plugin(const std::string& path) {
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(fs::path(path), ec);
  const std::string key = ec ? path : canon.string();
  if (std::find(plugins_.begin(), plugins_.end(), key) != plugins_.end()) return;
  if (!fs::exists(key)) throw Error("node plug-in '" + path + "' does not exist");
  // Never closed: node factories and their vtables live in the library.
  void* handle = dlopen(key.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw Error("cannot load node plug-in '" + path + "': " + dlerror());
  auto abi = reinterpret_cast<eddy_plugin_abi_fn>(dlsym(handle, "eddy_plugin_abi"));
  auto reg = reinterpret_cast<eddy_register_nodes_fn>(dlsym(handle, "eddy_register_nodes"));
  if (!reg) throw Error("'" + path + "' is not an eddy node plug-in: it exports no eddy_register_nodes");
  if (!abi || abi() != EDDY_PLUGIN_ABI)
    throw Error("node plug-in '" + path + "' was built for plug-in ABI " + (abi ? std::to_string(abi()) : "?") +
                ", this eddy has ABI " + std::to_string(EDDY_PLUGIN_ABI) + "; rebuild it");
  loading_ = key;
  try {
    reg(*this);
  } catch (...) {
    loading_.clear();
    throw;
  }
  loading_.clear();
  plugins_.push_back(key);
}

int Registry::load_default_plugins(const std::string& exe_path) {
  std::vector<fs::path> places;
  for (const auto& p : env_path_list("EDDY_PLUGIN_PATH")) places.emplace_back(p);
  std::error_code ec;
  const fs::path exe = fs::weakly_canonical(fs::path(exe_path), ec);
  if (!exe.empty()) {
    places.push_back(exe.parent_path() / ".." / "plugins");
    places.push_back(exe.parent_path() / ".." / "lib" / "eddy" / "plugins");
  }
  const std::size_t before = plugins_.size();
  for (const auto& p : places) {
    if (fs::is_regular_file(p, ec)) {
      load_plugin(p.string());
    } else if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".so") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) load_plugin(f.string());
    }
  }
  return static_cast<int>(plugins_.size() - before);
}

}  // namespace eddy
