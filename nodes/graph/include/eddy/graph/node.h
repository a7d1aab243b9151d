#pragma once
// Node: a thin adapter over core/ or surfacing/. cook() reads parameters and
// inputs from its CookContext and sets its outputs.
#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/core/vec.h"
#include "eddy/graph/animation.h"
#include "eddy/graph/spec.h"
#include "eddy/graph/value.h"

namespace eddy {

using Outputs = std::map<std::string, Value, std::less<>>;

class CookEngine;

class CookContext {
 public:
  const std::string& node_id() const { return node_id_; }
  const NodeSpec& spec() const { return *spec_; }
  // "node 'solver' (PBFSolver)", the prefix of this node's messages.
  std::string where() const;

  int frame() const { return frame_; }
  int start_frame() const { return start_; }
  int end_frame() const { return end_; }
  double fps() const { return fps_; }
  // Simulation time at this frame, seconds since the start frame.
  double time() const { return (frame_ - start_) / fps_; }

  bool param_bool(std::string_view name) const;
  int64_t param_int(std::string_view name) const;
  double param_float(std::string_view name) const;
  Vec3Value param_vec3(std::string_view name) const;
  Vec3f param_vec3f(std::string_view name) const;
  const std::string& param_string(std::string_view name) const;  // String, Path and Enum
  int param_enum(std::string_view name) const;                   // index into the spec's items
  const ParamSet& params() const { return *params_; }
  // Animated parameters (expressions, keyframes) are taken at frame(); the
  // _at forms take them at any time, e.g. within a frame (a fractional
  // frame), for a velocity from the animation.
  bool animated(std::string_view name) const;
  const AnimationSet& animations() const { return *anims_; }
  double param_float_at(std::string_view name, double frame) const;
  // The frame the plain param_* accessors take animated parameters at
  // (frame() unless set): a solver reading its parameters for a step within
  // the frame sets it to that step's time, then back (NaN: frame()).
  void set_eval_frame(double frame) const { eval_frame_ = frame; }
  Vec3Value param_vec3_at(std::string_view name, double frame) const;
  Vec3f param_vec3f_at(std::string_view name, double frame) const;

  // Number of links into an input socket (0 or 1, or any for multi inputs).
  std::size_t input_count(std::string_view socket) const;
  const Value& input_value(std::string_view socket, std::size_t index = 0) const;
  template <class T>
  std::shared_ptr<const T> input(std::string_view socket, std::size_t index = 0) const {
    try {
      return input_value(socket, index).as<T>();
    } catch (const Error& e) {
      throw Error("input '" + std::string(socket) + "': " + e.what());
    }
  }

  // Nodes whose spec has reads_previous_inputs: the value linked into
  // `socket` as it is at the frame before this one's input frame (a mesh
  // sequence's previous frame, for its velocity); null at the start frame or
  // when nothing is linked there.
  template <class T>
  std::shared_ptr<const T> input_before(std::string_view socket, std::size_t index = 0) const {
    const std::optional<Value> v = input_value_before(socket, index);
    if (!v) return nullptr;
    try {
      return v->as<T>();
    } catch (const Error& e) {
      throw Error("input '" + std::string(socket) + "' (previous frame): " + e.what());
    }
  }
  std::optional<Value> input_value_before(std::string_view socket, std::size_t index = 0) const;

  void set_output(std::string_view socket, Value v);
  template <class T>
  void output(std::string_view socket, T&& value) {
    set_output(socket, Value::make(std::forward<T>(value)));
  }
  template <class T>
  void output_shared(std::string_view socket, std::shared_ptr<const T> value) {
    set_output(socket, Value::of<T>(std::move(value)));
  }

  // Stateful nodes: the node's own outputs at frame() - 1; null at the start frame.
  const Outputs* previous() const { return previous_; }

  // A path parameter made concrete: $F / $F2..$F9 frame tokens and $OS (node
  // id) expanded; a relative path resolves under the output folder.
  std::string output_path(const std::string& pattern) const;
  // A path to read: relative paths resolve against the graph file's folder.
  std::string input_path(const std::string& path) const;

  // Progress within this node's cook (0..1) with a short message.
  void progress(double fraction, const std::string& message) const;
  // A line of the node's per-frame report (e.g. solver statistics).
  void info(const std::string& message) const;
  // A warning: the node cooks, but the result may be poor or unstable.
  void warn(const std::string& message) const;
  // Throws eddy::Cancelled when the cook has been cancelled.
  void check_cancel() const;
  int threads() const { return threads_; }

 private:
  friend class CookEngine;
  std::string node_id_;
  const NodeSpec* spec_ = nullptr;
  const ParamSet* params_ = nullptr;
  const AnimationSet* anims_ = nullptr;
  mutable double eval_frame_ = std::numeric_limits<double>::quiet_NaN();
  double eval_frame() const { return eval_frame_ == eval_frame_ ? eval_frame_ : double(frame_); }
  // Component c of parameter `name` at `frame` when animated, else none.
  std::optional<double> channel_value(std::string_view name, int c, double frame) const;
  int frame_ = 1, start_ = 1, end_ = 1, threads_ = 0;
  double fps_ = 24.0;
  // Lazy-input nodes: pulls one socket's links on first use.
  std::function<void(const std::string&)> pull_;
  void pull(std::string_view socket) const;
  // reads_previous_inputs: cooks link `index` of a socket at the frame before.
  std::function<std::optional<Value>(const std::string&, std::size_t)> pull_before_;
  mutable std::map<std::string, std::vector<Value>, std::less<>> inputs_;
  Outputs* outputs_ = nullptr;
  const Outputs* previous_ = nullptr;
  const CookEngine* engine_ = nullptr;
};

class Node {
 public:
  virtual ~Node() = default;
  virtual void cook(CookContext& ctx) = 0;
};

}  // namespace eddy
