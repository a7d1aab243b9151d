#include "commands.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/util.h"

namespace eddy::app {

namespace fs = std::filesystem;

namespace {

CookEngine* g_engine = nullptr;
extern "C" void on_sigint(int) {
  if (g_engine) g_engine->cancel();
}

std::pair<int, int> parse_frames(const std::string& s, const Graph& g) {
  if (s.empty()) return {g.frame_start, g.frame_end};
  int a = 0, b = 0;
  char dash = 0, extra = 0;
  const int n = std::sscanf(s.c_str(), "%d%c%d%c", &a, &dash, &b, &extra);
  if (n == 1) b = a;
  else if (n != 3 || dash != '-')
    throw Error("--frames \"" + s + "\": expected A-B or A (e.g. 1-48)");
  if (b < a) throw Error("--frames " + s + ": end " + std::to_string(b) + " is before start " + std::to_string(a));
  if (a < g.frame_start || b > g.frame_end)
    throw Error("--frames " + s + ": outside the graph's frame_range " + std::to_string(g.frame_start) + "-" +
                std::to_string(g.frame_end));
  return {a, b};
}

void check_output_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("--out " + dir + ": cannot create the output folder: " + ec.message());
  if (!fs::is_directory(dir, ec)) throw Error("--out " + dir + ": is not a folder");
  const fs::path probe = fs::path(dir) / (".eddy-write-test-" + std::to_string(::getpid()));
  {
    std::ofstream f(probe);
    if (!f) throw Error("--out " + dir + ": the output folder is not writable");
  }
  fs::remove(probe, ec);
}

std::string clock_text(double s) {
  char buf[32];
  const int t = int(s + 0.5);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%d:%02d:%02d", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%d:%02d", t / 60, t % 60);
  return buf;
}

// Progress for a terminal (one rewritten line) or a log (plain lines).
class Progress final : public CookObserver {
 public:
  Progress(int first, int last, bool quiet) : first_(first), last_(last), quiet_(quiet), tty_(::isatty(2)) {
    start_ = std::chrono::steady_clock::now();
  }
  void begin_frame(int f) {
    frame_ = f;
    frame_start_ = std::chrono::steady_clock::now();
    redraw("");
  }
  void end_frame(int f) {
    ++done_;
    const double secs = elapsed(frame_start_);
    if (!tty_ && !quiet_) std::fprintf(stderr, "frame %d done in %.2f s (%d of %d)\n", f, secs, done_, total());
    redraw("");
  }
  void finish() {
    if (tty_) std::fprintf(stderr, "\r\033[2K");
  }
  void skipped(int f) {
    ++done_;
    if (quiet_) return redraw("");
    line("frame " + std::to_string(f) + " done before (its marker matches): skipped (" + std::to_string(done_) +
         " of " + std::to_string(total()) + ")");
  }
  void node_progress(const std::string& node, int frame, double, const std::string& message) override {
    if (tty_) redraw(node + " frame " + std::to_string(frame) + " " + message);
  }
  void node_info(const std::string& node, int frame, const std::string& message) override {
    if (!quiet_) line("  frame " + std::to_string(frame) + " " + node + ": " + message);
  }
  void node_restored(const std::string& node, int frame) override { node_info(node, frame, "taken from its checkpoint"); }
  // Warnings show even when quiet.
  void node_warning(const std::string& node, int frame, const std::string& message) override {
    line("warning: frame " + std::to_string(frame) + " " + node + ": " + message);
  }

 private:
  // A line above the progress bar (which is drawn again below it).
  void line(const std::string& text) {
    if (tty_) std::fprintf(stderr, "\r\033[2K");
    std::fprintf(stderr, "%s\n", text.c_str());
    redraw("");
  }
  int total() const { return last_ - first_ + 1; }
  static double elapsed(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  void redraw(const std::string& detail) {
    if (!tty_) return;
    const int width = 24;
    const int filled = total() ? width * done_ / total() : width;
    std::string bar(filled, '#');
    bar += std::string(width - filled, '.');
    std::string eta = "--:--";
    if (done_ > 0) eta = clock_text(elapsed(start_) / done_ * (total() - done_));
    std::fprintf(stderr, "\r\033[2Kframe %d [%s] %d/%d ETA %s  %s", frame_, bar.c_str(), done_, total(), eta.c_str(),
                 detail.c_str());
    std::fflush(stderr);
  }
  int first_, last_;
  bool quiet_, tty_;
  int frame_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_, frame_start_;
};

void print_summary(const CookEngine& e, double wall) {
  std::printf("\n%-20s %-18s %6s %10s %10s %12s\n", "node", "type", "cooks", "total s", "mean ms", "peak output");
  for (const auto& id : e.expanded_graph().topological_order()) {
    const auto it = e.stats().find(id);
    if (it == e.stats().end()) continue;
    const auto& s = it->second;
    std::printf("%-20s %-18s %6d %10.2f %10.1f %12s\n", id.c_str(), e.expanded_graph().find(id)->type.c_str(), s.cooks,
                s.seconds, s.cooks ? 1e3 * s.seconds / s.cooks : 0.0, format_bytes(double(s.peak_bytes)).c_str());
  }
  std::printf("total wall time %.2f s\n", wall);
}

}  // namespace

std::vector<std::string> part_targets(const CookEngine& e, const Registry& r, const std::string& part) {
  const Graph& g = e.expanded_graph();
  if (part != "sim") return g.terminal_nodes();
  std::vector<std::string> out;
  for (const auto& id : g.topological_order())
    if (r.find(g.find(id)->type)->stateful) out.push_back(id);
  return out;
}

std::string graph_stem(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  for (const char* ext : {".eddy.json", ".json"})
    if (name.size() > std::strlen(ext) && name.ends_with(ext)) return name.substr(0, name.size() - std::strlen(ext));
  return name;
}

DoneMarker::DoneMarker(const std::string& out_dir, const std::string& graph, const std::string& part, CookEngine& e,
                       const std::vector<std::string>& targets, int frame) {
  Hasher h;
  h.str(part);
  for (const std::string& id : targets) h.str(id).pod(e.output_signature(id, frame));
  char name[32];
  std::snprintf(name, sizeof name, ".%s.%04d", part.c_str(), frame);
  path_ = (fs::path(out_dir) / ".eddy" / "done" / (graph_stem(graph) + name)).string();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.h));
  text_ = std::string(hex) + "\n";
}

bool DoneMarker::done() const {
  std::error_code ec;
  return fs::is_regular_file(path_, ec) && read_file(path_, "marker") == text_;
}

void DoneMarker::write() const {
  fs::create_directories(fs::path(path_).parent_path());
  write_file_atomic(path_, text_);
}

PreparedGraph prepare_graph(const Registry& registry, const std::string& path, const std::vector<std::string>& overrides,
                            const std::string& frames) {
  // Node checks (memory, path patterns) wait for the overrides and the frames.
  PreparedGraph p;
  p.graph = load_graph(path, registry, ValidateOptions{false});
  for (const auto& a : overrides) apply_override(p.graph, registry, a);
  std::tie(p.first, p.last) = parse_frames(frames, p.graph);
  try {
    validate_graph(p.graph, registry, ValidateOptions{true, p.first, p.last});
  } catch (const Error& e) {
    throw Error(path + (overrides.empty() ? "" : " (with --set)") + ": " + e.what());
  }
  return p;
}

int run(Registry& registry, const RunOptions& o) {
  if (o.part != "all" && o.checkpoints.empty())
    throw Error("--part " + o.part + ": the simulation's frames pass between parts as checkpoints: give --checkpoints DIR");
  auto [g, first, last] = prepare_graph(registry, o.graph, o.overrides, o.frames);
  check_output_dir(o.out_dir);
  CookOptions opts;
  opts.output_dir = o.out_dir;
  opts.threads = o.threads;
  opts.checkpoint_dir = o.checkpoints;
  opts.cook_stateful = o.part != "post";
  CookEngine engine(registry, std::move(g), opts);
  const std::vector<std::string> targets = part_targets(engine, registry, o.part);
  Progress progress(first, last, o.quiet);
  engine.set_observer(&progress);
  g_engine = &engine;
  std::signal(SIGINT, on_sigint);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (int f = first; f <= last; ++f) {
      progress.begin_frame(f);
      std::optional<DoneMarker> marker;  // only asked for: it hashes every target's signature
      if (o.skip_done) {
        marker.emplace(o.out_dir, o.graph, o.part, engine, targets, f);
        if (marker->done()) {
          progress.skipped(f);
          continue;
        }
      }
      for (const std::string& id : targets) engine.cook(id, f);
      if (marker) marker->write();
      progress.end_frame(f);
    }
  } catch (const Cancelled&) {
    progress.finish();
    g_engine = nullptr;
    std::fprintf(stderr, "eddy: cancelled; the files written so far are complete\n");
    return 130;
  } catch (...) {
    progress.finish();
    g_engine = nullptr;
    throw;
  }
  progress.finish();
  g_engine = nullptr;
  print_summary(engine, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::printf("output folder: %s\n", fs::absolute(o.out_dir).lexically_normal().c_str());
  return 0;
}

namespace {
std::string range_text(const ParamSpec& p) {
  std::ostringstream s;
  if (p.min || p.max) {
    s << " [" << (p.min ? std::to_string(*p.min) : std::string("-inf")) << ", "
      << (p.max ? std::to_string(*p.max) : std::string("inf")) << "]";
  }
  std::string r = s.str();
  // trim trailing zeros of std::to_string
  std::string out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r[i] == '.' ) {
      std::size_t j = i + 1;
      while (j < r.size() && std::isdigit(static_cast<unsigned char>(r[j]))) ++j;
      std::string frac = r.substr(i + 1, j - i - 1);
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
      if (!frac.empty()) out += "." + frac;
      i = j - 1;
    } else {
      out += r[i];
    }
  }
  return out;
}

void describe(const NodeSpec& s) {
  std::printf("%s  (%s%s)\n", s.type.c_str(), s.category.c_str(), s.stateful ? ", stateful" : "");
  std::printf("  %s\n", s.doc.c_str());
  auto sockets = [](const char* title, const std::vector<SocketSpec>& v) {
    if (v.empty()) return;
    std::printf("  %s:\n", title);
    for (const auto& x : v)
      std::printf("    %-18s %-10s %s%s%s\n", x.name.c_str(), x.type.c_str(), x.optional ? "(optional) " : "",
                  x.multi ? "(many) " : "", x.doc.c_str());
  };
  sockets("inputs", s.inputs);
  sockets("outputs", s.outputs);
  if (!s.params.empty()) std::printf("  parameters:\n");
  for (const auto& p : s.params) {
    std::string type = to_string(p.type);
    if (p.type == ParamType::Enum) {
      type += " {";
      for (std::size_t i = 0; i < p.items.size(); ++i) type += (i ? "|" : "") + p.items[i];
      type += "}";
    }
    std::printf("    %-18s %s = %s%s%s\n", p.name.c_str(), type.c_str(), to_display(p.default_value).c_str(),
                range_text(p).c_str(), p.unit.empty() ? "" : (" " + p.unit).c_str());
    std::printf("        %s\n", p.doc.c_str());
  }
  std::printf("\n");
}
}  // namespace

int nodes(const Registry& registry, const std::string& type, bool json) {
  if (json) {
    std::fputs(catalog_json(registry).c_str(), stdout);
    return 0;
  }
  if (!type.empty()) {
    const NodeSpec* s = registry.find(type);
    if (!s) {
      const std::string near = registry.closest(type);
      throw Error("unknown node type \"" + type + "\"" + (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
    describe(*s);
    return 0;
  }
  if (registry.all().empty()) throw Error("no node types are registered: no plug-ins were found (EDDY_PLUGIN_PATH?)");
  for (const NodeSpec* s : registry.all()) describe(*s);
  return 0;
}

int validate(const Registry& registry, const std::string& path) {
  const Graph g = load_graph(path, registry);
  std::printf("%s: valid (%zu nodes, %zu links, frames %d-%d at %g fps)\n", path.c_str(), g.nodes.size(),
              g.links.size(), g.frame_start, g.frame_end, g.fps);
  return 0;
}

}  // namespace eddy::app
