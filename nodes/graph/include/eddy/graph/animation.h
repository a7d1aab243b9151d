#pragma once
// Animated parameters (docs/graph-format.md, "Animated parameters"): a
// number that varies with time, written in a graph file as an expression
// {"expr": "0.5 * sin(2 * pi * $T)"} or as keyframes {"keys": [[1, 0],
// [24, 1]], "interpolation": "smooth"}, in place of a float, int or bool
// value or of one vec3 component.
//
// Expressions: numbers; $F (frame, fractional between frames), $T (seconds
// since the start frame: the solvers' time), $FPS, $FSTART, $FEND; pi, e;
// + - * / % ^ (power, right-associative), unary - + !, comparisons
// < <= > >= == != and && || (true is 1); c ? a : b; functions sin cos tan
// asin acos atan atan2 sinh cosh tanh sqrt exp log log10 abs sign floor
// ceil round min max pow clamp fit if (radians, as C's). Parsed once into
// a small tree; an error names the column.
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

// The time an animated value is taken at.
struct TimeVars {
  double frame = 1;             // $F
  double fps = 24;              // $FPS
  double start = 1, end = 1;    // $FSTART, $FEND
  double seconds() const { return (frame - start) / fps; }  // $T
};

class Expression {
 public:
  // Throws eddy::Error "expression \"...\": <what> at column N".
  explicit Expression(std::string text);
  double eval(const TimeVars& t) const;
  const std::string& text() const { return text_; }

  struct Op;  // a node of the parsed tree (animation.cpp)

 private:
  std::string text_;
  std::shared_ptr<const std::vector<Op>> ops_;  // postfix order
};

enum class Interpolation { Linear, Smooth, Constant };

// One animated number: an expression or keyframes.
class Channel {
 public:
  static Channel expression(std::string text);
  // Keys [frame, value] with strictly increasing frames (at least one);
  // throws eddy::Error saying what is wrong.
  static Channel keys(std::vector<std::array<double, 2>> keys, Interpolation interpolation);

  // Linear: straight lines between keys; Constant: each key's value until
  // the next; Smooth: cubic Hermite curves whose slope at each key is the
  // slope between its neighbours (Catmull-Rom on uneven frames), flat at the
  // first and last keys. Before the first key and after the last, their values.
  double eval(const TimeVars& t) const;
  bool is_expression() const { return expr_ != nullptr; }
  const Expression* expr() const { return expr_.get(); }
  const std::vector<std::array<double, 2>>& key_list() const { return keys_; }
  Interpolation interpolation() const { return interp_; }
  // As written in a graph file, for signatures and messages.
  std::string describe() const;

 private:
  std::shared_ptr<const Expression> expr_;
  std::vector<std::array<double, 2>> keys_;
  Interpolation interp_ = Interpolation::Linear;
};

// A parameter's animation: one channel for a scalar (component 0), up to
// three for a vec3 (a component without one keeps its static value).
struct ParamAnimation {
  std::array<std::optional<Channel>, 3> channels;
};
using AnimationSet = std::map<std::string, ParamAnimation, std::less<>>;

const char* interpolation_name(Interpolation i);

}  // namespace eddy
