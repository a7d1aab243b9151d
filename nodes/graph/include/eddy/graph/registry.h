#pragma once
// The registry of node types, filled by node-library plug-ins: shared
// libraries exporting
//   extern "C" int  eddy_plugin_abi();               // == EDDY_PLUGIN_ABI
//   extern "C" void eddy_register_nodes(eddy::Registry&);
// The built-in library is loaded the same way as a third party's.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <shared_mutex>
#include <string>
#include <vector>

#include "eddy/graph/spec.h"

#define EDDY_PLUGIN_ABI 1

namespace eddy {

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Throws eddy::Error when the type is already registered or the spec is malformed.
  void add(NodeSpec spec);
  // Registers, or replaces the spec of a type the program itself registered
  // (a Python node type defined again); a plug-in's type cannot be replaced.
  // Not while anything cooks: engines read specs as they cook.
  void replace(NodeSpec spec);
  // Who registered a type ("the program" or a plug-in's file), or "".
  std::string origin(std::string_view type) const;
  const NodeSpec* find(std::string_view type) const;
  // Every spec, ordered by category then type.
  std::vector<const NodeSpec*> all() const;
  // The registered type closest to `type` (edit distance), or "".
  std::string closest(std::string_view type) const;

  // Loads one plug-in file; throws eddy::Error naming the file on failure.
  // Loading the same file twice is a no-op.
  void load_plugin(const std::string& path);
  // Plug-ins from EDDY_PLUGIN_PATH (':'-separated files or folders), then the
  // install's own plug-in folders next to `exe_path` (../plugins,
  // ../lib/eddy/plugins). Returns the number of files loaded.
  int load_default_plugins(const std::string& exe_path);
  const std::vector<std::string>& plugins() const { return plugins_; }

  // Reads an asset file (eddy/graph/asset.h) and registers its node type;
  // throws eddy::Error naming the file and the place. Loading the same file
  // twice is a no-op.
  void load_asset(const std::string& path);
  // Reads asset type `type`'s file again (after it was edited) and replaces
  // the type's spec with what it now holds; the file must still declare
  // `type`. On an error the old definition stays. Graphs pick the new
  // contents up when they are set again (CookEngine::set_graph expands them).
  void reload_asset(const std::string& type);
  // Counts the specs replaced (assets reloaded or edited, types defined
  // again): a graph whose engine saw another count sets its graph again.
  uint64_t revision() const { return revision_.load(); }
  // Writes new contents (the "nodes" and "links" of graph JSON `contents`)
  // into asset type `type`'s file, its asset section and the rest kept, and
  // reloads the type. They are validated as the asset they make before the
  // file is written: on an error nothing changes.
  void edit_asset(const std::string& type, const nlohmann::json& contents);
  // Every asset file (*.eddy.json with an "asset" section) in a folder, in
  // name order; returns how many were loaded (none from a missing folder).
  int load_assets_in(const std::string& folder);
  // Assets from EDDY_ASSET_PATH (':'-separated files or folders) and the
  // "assets" folder beside a graph file (Houdini's $HIP/otls).
  int load_default_assets(const std::string& graph_path);

 private:
  // Types may be added while graphs cook on other threads (a Python node,
  // an asset loaded from Python): lookups share, additions exclude. A spec
  // never changes once added: replacing a type retires its spec (kept to
  // the registry's end) and adds a new one, so a spec found stays valid and
  // the same while it is read.
  mutable std::shared_mutex mutex_;
  std::map<std::string, std::unique_ptr<const NodeSpec>, std::less<>> specs_;
  std::vector<std::unique_ptr<const NodeSpec>> retired_;
  std::atomic<uint64_t> revision_{0};
  std::map<std::string, std::string, std::less<>> origin_;  // type -> plug-in that registered it
  std::vector<std::string> plugins_;
  std::vector<std::string> assets_;  // asset files loaded (canonical paths)
  // Registers the asset of file `path`, its JSON read already; with
  // `replacing`, replaces the spec of that asset type instead.
  void register_asset(const std::string& path, const nlohmann::json& root, bool replacing = false);
  // Puts `spec` in place of its type's spec (which must exist), retiring the old one.
  void swap_in(NodeSpec spec);
  std::string loading_;  // plug-in being loaded, for messages
};

}  // namespace eddy

extern "C" {
typedef int (*eddy_plugin_abi_fn)();
typedef void (*eddy_register_nodes_fn)(eddy::Registry&);
}
