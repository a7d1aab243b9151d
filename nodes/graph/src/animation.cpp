#include "eddy/graph/animation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "eddy/core/error.h"

namespace eddy {

// ---------------------------------------------------------------------------
// Expressions: a recursive-descent parser that writes the tree in postfix
// order, evaluated on a stack.
// ---------------------------------------------------------------------------

enum class OpKind : uint8_t { Number, Variable, Unary, Binary, Select, Call };
enum class Var : uint8_t { F, T, Fps, Start, End };

struct Expression::Op {
  OpKind kind;
  uint8_t code = 0;  // Var, the operator's character class, or the function
  uint8_t argc = 0;
  double value = 0;
};

namespace {

constexpr double kPi = 3.14159265358979323846;

// Binary operators, by code.
enum : uint8_t { Add, Sub, Mul, Div, Mod, Pow, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
// Unary operators.
enum : uint8_t { Neg, Not };

// One table: each function's name, argument count and definition.
struct Function {
  const char* name;
  int argc;
  double (*f)(const double* a);
};
constexpr Function kFunctions[] = {
    {"sin", 1, [](const double* a) { return std::sin(a[0]); }},
    {"cos", 1, [](const double* a) { return std::cos(a[0]); }},
    {"tan", 1, [](const double* a) { return std::tan(a[0]); }},
    {"asin", 1, [](const double* a) { return std::asin(a[0]); }},
    {"acos", 1, [](const double* a) { return std::acos(a[0]); }},
    {"atan", 1, [](const double* a) { return std::atan(a[0]); }},
    {"atan2", 2, [](const double* a) { return std::atan2(a[0], a[1]); }},
    {"sinh", 1, [](const double* a) { return std::sinh(a[0]); }},
    {"cosh", 1, [](const double* a) { return std::cosh(a[0]); }},
    {"tanh", 1, [](const double* a) { return std::tanh(a[0]); }},
    {"sqrt", 1, [](const double* a) { return std::sqrt(a[0]); }},
    {"exp", 1, [](const double* a) { return std::exp(a[0]); }},
    {"log", 1, [](const double* a) { return std::log(a[0]); }},
    {"log10", 1, [](const double* a) { return std::log10(a[0]); }},
    {"abs", 1, [](const double* a) { return std::fabs(a[0]); }},
    {"sign", 1, [](const double* a) { return double((a[0] > 0) - (a[0] < 0)); }},
    {"floor", 1, [](const double* a) { return std::floor(a[0]); }},
    {"ceil", 1, [](const double* a) { return std::ceil(a[0]); }},
    {"round", 1, [](const double* a) { return std::round(a[0]); }},
    {"min", 2, [](const double* a) { return std::min(a[0], a[1]); }},
    {"max", 2, [](const double* a) { return std::max(a[0], a[1]); }},
    {"pow", 2, [](const double* a) { return std::pow(a[0], a[1]); }},
    {"clamp", 3, [](const double* a) { return std::min(std::max(a[0], a[1]), a[2]); }},
    // fit(v, omin, omax, nmin, nmax): v mapped linearly, clamped to the old range (Houdini's fit).
    {"fit", 5,
     [](const double* a) {
       const double lo = std::min(a[1], a[2]), hi = std::max(a[1], a[2]);
       const double v = std::min(std::max(a[0], lo), hi);
       return a[2] == a[1] ? a[3] : a[3] + (v - a[1]) / (a[2] - a[1]) * (a[4] - a[3]);
     }},
    {"if", 3, [](const double* a) { return a[0] != 0 ? a[1] : a[2]; }},
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  std::vector<Expression::Op> parse() {
    select();
    skip();
    if (i_ < s_.size()) fail("unexpected '" + std::string(1, s_[i_]) + "'");
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("expression \"" + s_ + "\": " + what + " at column " + std::to_string(i_ + 1));
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s_.compare(i_, tok.size(), tok) != 0) return false;
    i_ += tok.size();
    return true;
  }
  void emit(OpKind k, uint8_t code, uint8_t argc = 0, double value = 0) { out_.push_back({k, code, argc, value}); }

  // The recursion's depth (parentheses, arguments, unary chains), bounded
  // so that no text runs the stack out.
  struct Deeper {
    Parser& p;
    explicit Deeper(Parser& parser) : p(parser) {
      if (++p.depth_ > 64) p.fail("nested deeper than 64 levels");
    }
    ~Deeper() { --p.depth_; }
  };

  // select := or ('?' select ':' select)?
  void select() {
    const Deeper d(*this);
    logic_or();
    if (eat("?")) {
      select();
      if (!eat(":")) fail("expected ':' of 'c ? a : b'");
      select();
      emit(OpKind::Select, 0);
    }
  }
  void logic_or() {
    logic_and();
    while (eat("||")) logic_and(), emit(OpKind::Binary, Or);
  }
  void logic_and() {
    compare();
    while (eat("&&")) compare(), emit(OpKind::Binary, And);
  }
  void compare() {
    sum();
    for (;;) {
      uint8_t op;
      if (eat("<=")) op = Le;
      else if (eat(">=")) op = Ge;
      else if (eat("==")) op = Eq;
      else if (eat("!=")) op = Ne;
      else if (eat("<")) op = Lt;
      else if (eat(">")) op = Gt;
      else return;
      sum();
      emit(OpKind::Binary, op);
    }
  }
  void sum() {
    product();
    for (;;) {
      if (eat("+")) product(), emit(OpKind::Binary, Add);
      else if (eat("-")) product(), emit(OpKind::Binary, Sub);
      else return;
    }
  }
  void product() {
    unary();
    for (;;) {
      if (eat("*")) unary(), emit(OpKind::Binary, Mul);
      else if (eat("/")) unary(), emit(OpKind::Binary, Div);
      else if (eat("%")) unary(), emit(OpKind::Binary, Mod);
      else return;
    }
  }
  // unary := ('-' | '+' | '!') unary | power; -2^2 is -(2^2), as in mathematics.
  void unary() {
    const Deeper d(*this);
    if (eat("-")) return unary(), emit(OpKind::Unary, Neg);
    if (eat("+")) return unary();
    if (skip(), i_ < s_.size() && s_[i_] == '!' && s_.compare(i_, 2, "!=") != 0) {
      ++i_;
      return unary(), emit(OpKind::Unary, Not);
    }
    power();
  }
  void power() {
    primary();
    if (eat("^")) unary(), emit(OpKind::Binary, Pow);  // right-associative: 2^3^2 = 2^9
  }
  void primary() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '(') {
      ++i_;
      select();
      if (!eat(")")) fail("expected ')'");
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = s_.c_str() + i_;
      char* end = nullptr;
      const double v = std::strtod(begin, &end);
      if (end == begin) fail("malformed number");
      i_ += std::size_t(end - begin);
      return emit(OpKind::Number, 0, 0, v);
    }
    if (c == '$') {
      ++i_;
      const std::string name = word();
      static const std::pair<const char*, Var> vars[] = {
          {"F", Var::F}, {"T", Var::T}, {"FPS", Var::Fps}, {"FSTART", Var::Start}, {"FEND", Var::End}};
      for (const auto& [n, v] : vars)
        if (name == n) return emit(OpKind::Variable, uint8_t(v));
      i_ -= name.size() + 1;
      fail("unknown variable $" + name + " (variables: $F $T $FPS $FSTART $FEND)");
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t at = i_;
      const std::string name = word();
      if (name == "pi") return emit(OpKind::Number, 0, 0, kPi);
      if (name == "e") return emit(OpKind::Number, 0, 0, std::exp(1.0));
      for (uint8_t f = 0; f < std::size(kFunctions); ++f) {
        if (name != kFunctions[f].name) continue;
        if (!eat("(")) fail("expected '(' after " + name);
        int argc = 0;
        if (!eat(")")) {
          do select(), ++argc;
          while (eat(","));
          if (!eat(")")) fail("expected ')' or ',' in the arguments of " + name);
        }
        if (argc != kFunctions[f].argc) {
          i_ = at;
          fail(name + "() takes " + std::to_string(kFunctions[f].argc) + " argument(s), got " + std::to_string(argc));
        }
        return emit(OpKind::Call, f, uint8_t(argc));
      }
      i_ = at;
      fail("unknown name '" + name + "' (a variable is written with $, e.g. $F)");
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
  std::string word() {
    const std::size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    return s_.substr(b, i_ - b);
  }

  const std::string& s_;
  std::size_t i_ = 0;
  int depth_ = 0;
  std::vector<Expression::Op> out_;
};

}  // namespace

Expression::Expression(std::string text) : text_(std::move(text)) {
  if (text_.size() > 4096) throw Error("expression longer than 4096 characters");
  ops_ = std::make_shared<const std::vector<Op>>(Parser(text_).parse());
}

double Expression::eval(const TimeVars& t) const {
  double stack[64] = {};
  std::vector<double> big;  // deeper expressions than the array holds
  double* st = stack;
  if (ops_->size() > std::size(stack)) {
    big.resize(ops_->size());
    st = big.data();
  }
  int n = 0;
  for (const Op& op : *ops_) {
    switch (op.kind) {
      case OpKind::Number: st[n++] = op.value; break;
      case OpKind::Variable:
        switch (Var(op.code)) {
          case Var::F: st[n++] = t.frame; break;
          case Var::T: st[n++] = t.seconds(); break;
          case Var::Fps: st[n++] = t.fps; break;
          case Var::Start: st[n++] = t.start; break;
          case Var::End: st[n++] = t.end; break;
        }
        break;
      case OpKind::Unary: st[n - 1] = op.code == Neg ? -st[n - 1] : double(st[n - 1] == 0); break;
      case OpKind::Binary: {
        const double b = st[--n], a = st[n - 1];
        double r = 0;
        switch (op.code) {
          case Add: r = a + b; break;
          case Sub: r = a - b; break;
          case Mul: r = a * b; break;
          case Div: r = a / b; break;
          case Mod: r = std::fmod(a, b); break;
          case Pow: r = std::pow(a, b); break;
          case Lt: r = a < b; break;
          case Le: r = a <= b; break;
          case Gt: r = a > b; break;
          case Ge: r = a >= b; break;
          case Eq: r = a == b; break;
          case Ne: r = a != b; break;
          case And: r = (a != 0) && (b != 0); break;
          case Or: r = (a != 0) || (b != 0); break;
        }
        st[n - 1] = r;
        break;
      }
      case OpKind::Select: {
        const double b = st[--n], a = st[--n];
        st[n - 1] = st[n - 1] != 0 ? a : b;
        break;
      }
      case OpKind::Call:
        n -= op.argc;
        st[n] = kFunctions[op.code].f(st + n);
        ++n;
        break;
    }
  }
  return st[0];
}

// ---------------------------------------------------------------------------
// Channels
// ---------------------------------------------------------------------------

Channel Channel::expression(std::string text) {
  Channel c;
  c.expr_ = std::make_shared<const Expression>(std::move(text));
  return c;
}

Channel Channel::keys(std::vector<std::array<double, 2>> keys, Interpolation interpolation) {
  if (keys.empty()) throw Error("keyframes: at least one key [frame, value] is needed");
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (!std::isfinite(keys[k][0]) || !std::isfinite(keys[k][1]))
      throw Error("keyframes: key " + std::to_string(k) + " is not finite");
    if (k > 0 && !(keys[k][0] > keys[k - 1][0]))
      throw Error("keyframes: key " + std::to_string(k) + " at frame " + std::to_string(keys[k][0]) +
                  " does not come after the key before it; frames must increase");
  }
  Channel c;
  c.keys_ = std::move(keys);
  c.interp_ = interpolation;
  return c;
}

double Channel::eval(const TimeVars& t) const {
  if (expr_) return expr_->eval(t);
  const auto& k = keys_;
  const double f = t.frame;
  if (f <= k.front()[0]) return k.front()[1];
  if (f >= k.back()[0]) return k.back()[1];
  // The segment [k[i], k[i + 1]] holding f.
  const std::size_t i = std::size_t(std::upper_bound(k.begin(), k.end(), f,
                                                     [](double x, const std::array<double, 2>& key) {
                                                       return x < key[0];
                                                     }) -
                                    k.begin()) -
                        1;
  const double f0 = k[i][0], f1 = k[i + 1][0], v0 = k[i][1], v1 = k[i + 1][1];
  const double h = f1 - f0, s = (f - f0) / h;
  switch (interp_) {
    case Interpolation::Constant: return v0;
    case Interpolation::Linear: return v0 + s * (v1 - v0);
    case Interpolation::Smooth: {
      // Slopes (value per frame) from the neighbours; flat at the ends.
      auto slope = [&](std::size_t j) {
        if (j == 0 || j + 1 == k.size()) return 0.0;
        return (k[j + 1][1] - k[j - 1][1]) / (k[j + 1][0] - k[j - 1][0]);
      };
      const double m0 = slope(i) * h, m1 = slope(i + 1) * h;
      const double s2 = s * s, s3 = s2 * s;
      return (2 * s3 - 3 * s2 + 1) * v0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * v1 + (s3 - s2) * m1;
    }
  }
  return v0;
}

const char* interpolation_name(Interpolation i) {
  switch (i) {
    case Interpolation::Linear: return "linear";
    case Interpolation::Smooth: return "smooth";
    case Interpolation::Constant: return "constant";
  }
  return "?";
}

std::string Channel::describe() const {
  if (expr_) return "expr:" + expr_->text();
  std::ostringstream o;
  o.precision(17);
  o << "keys:" << interpolation_name(interp_);
  for (const auto& k : keys_) o << ' ' << k[0] << ':' << k[1];
  return o.str();
}

}  // namespace eddy
