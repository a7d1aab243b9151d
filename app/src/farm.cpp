// eddy farm (farm.h): plans a submission from what is on disk and in the
// queue, writes its job scripts and submit.sh, and runs that.
#include "farm.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/graph/checkpoint.h"
#include "eddy/graph/cook.h"
#include "farm_plan.h"

namespace eddy::app {

namespace fs = std::filesystem;
using nlohmann::json;

using namespace farm;

namespace {

// The output of a shell command and its exit status.
struct Ran {
  int status = -1;
  std::string output;
};
Ran shell(const std::string& cmd) {
  Ran r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool have(const std::string& program) { return shell("command -v " + program + " > /dev/null").status == 0; }

// "v1,v2,[0,-5,0]" split at the commas outside brackets.
std::vector<std::string> split_values(const std::string& s) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// A folder name for a value: letters, digits and ._=,+- kept, brackets and spaces dropped.
std::string folder_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || std::string("._=,+-").find(c) != std::string::npos) out += c;
    else if (c != '[' && c != ']' && c != ' ') out += '_';
  }
  return out;
}

// first-last in chunks of n frames (the last one shorter).
std::vector<Span> split_frames(int first, int last, int n) {
  std::vector<Span> out;
  for (int a = first; a <= last; a += n) out.push_back({a, std::min(a + n - 1, last)});
  return out;
}

std::vector<Variant> make_variants(const FarmOptions& o) {
  std::vector<Variant> out{{"", fs::absolute(o.out_dir).lexically_normal().string(), o.overrides}};
  for (const std::string& w : o.wedges) {
    const auto eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || w.find('.') > eq)
      throw Error("--wedge " + w + ": expected NODE.PARAM=v1,v2,... (e.g. solver.viscosity=0.001,0.01)");
    const std::string key = w.substr(0, eq);
    const std::vector<std::string> values = split_values(w.substr(eq + 1));
    for (const std::string& v : values)
      if (v.empty()) throw Error("--wedge " + w + ": an empty value");
    std::vector<Variant> next;
    for (const Variant& base : out)
      for (const std::string& v : values) {
        Variant n = base;
        n.label += (n.label.empty() ? "" : "_") + key + "=" + v;
        n.sets.push_back(key + "=" + v);
        next.push_back(n);
      }
    out = next;
  }
  std::map<std::string, std::string> folders;  // folder -> the variant that has it
  for (Variant& v : out) {
    if (!v.label.empty()) v.dir = (fs::path(v.dir) / folder_name(v.label)).string();
    const auto [it, fresh] = folders.emplace(v.dir, v.label);
    if (!fresh)
      throw Error("--wedge: variants " + it->second + " and " + v.label + " would share the folder " + v.dir +
                  " (a value given twice?)");
  }
  return out;
}

// Which frames are on disk: the markers each part's runs leave (--skip-done).
void read_disk(Plan& p, Registry& registry) {
  p.sims.assign(p.variants.size(), std::vector<Cell>(p.chunks.size()));
  p.posts.assign(p.variants.size(), std::vector<Cell>(p.post_chunks.size()));
  for (std::size_t v = 0; v < p.variants.size(); ++v) {
    PreparedGraph g;
    try {
      g = prepare_graph(registry, p.graph, p.variants[v].sets, p.o.frames);
    } catch (const Error& e) {
      // A wedge's value is named as the wedge gave it.
      std::string what = e.what();
      if (what.rfind("--set ", 0) == 0 && what.find(": ") != std::string::npos) what = what.substr(what.find(": ") + 2);
      throw Error("--wedge, variant " + p.variants[v].label + ": " + what);
    }
    CookEngine e(registry, std::move(g.graph));
    const std::vector<std::string> sim = part_targets(e, registry, "sim"), post = part_targets(e, registry, "post");
    p.stateful = !sim.empty();
    auto marked = [&](const std::string& part, const std::vector<std::string>& targets, const Span& span) {
      for (int f = span.first; f <= span.second; ++f)
        if (!DoneMarker(p.variants[v].dir, p.graph, part, e, targets, f).done()) return false;
      return true;
    };
    const std::string ck = (fs::path(p.variants[v].dir) / "checkpoints").string();
    for (std::size_t c = 0; c < p.chunks.size() && p.stateful; ++c) {
      // Simulated means the chunk's last checkpoints are there too (the
      // downstream reads them; a deleted checkpoints folder is simulated again).
      bool done = marked("sim", sim, p.chunks[c]);
      for (const std::string& id : sim) {
        if (!done) break;
        try {
          const int f = p.chunks[c].second;
          done = checkpoint_signature(checkpoint_path(ck, id, f)) == e.output_signature(id, f);
        } catch (const Error&) {
          done = false;
        }
      }
      p.sims[v][c].done = done;
    }
    for (std::size_t d = 0; d < p.post_chunks.size(); ++d) p.posts[v][d].done = marked("post", post, p.post_chunks[d]);
  }
}

// The submission's jobs in the queue: id, name and state per line (array tasks one by one).
struct Queued {
  std::string id, name, state;
};
// The ids submit.sh recorded (one per line).
std::set<std::string> submitted_ids(const std::string& jobs_dir) {
  std::set<std::string> ids;
  std::ifstream in(fs::path(jobs_dir) / "submitted");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) ids.insert(line);
  return ids;
}

std::vector<Queued> read_queue(const Plan& p) {
  std::string names = p.post_name();
  for (std::size_t v = 0; v < p.variants.size(); ++v)
    for (std::size_t c = 0; c < p.chunks.size(); ++c) names += "," + p.sim_name(v, c);
  const Ran r = shell("squeue -r --noheader --format='%i|%j|%T|%r' --name=" + quote(names));
  if (r.status != 0) throw Error("squeue failed: " + r.output);
  // Only this submission's jobs (another shot may use the same names), and
  // not those Slurm will cancel (a dependency that failed).
  const std::set<std::string> ours = submitted_ids(p.jobs_dir);
  std::vector<Queued> out;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f(1);
    for (char c : line) {
      if (c == '|') f.emplace_back();
      else f.back().push_back(c);
    }
    if (f.size() != 4 || !ours.count(f[0].substr(0, f[0].find('_')))) continue;
    if (f[3] == "DependencyNeverSatisfied") continue;
    out.push_back({f[0], f[1], f[2]});
  }
  return out;
}

void mark_queued(Plan& p, const std::vector<Queued>& queue) {
  for (const Queued& q : queue) {
    for (std::size_t v = 0; v < p.variants.size(); ++v)
      for (std::size_t c = 0; c < p.chunks.size(); ++c)
        if (q.name == p.sim_name(v, c)) p.sims[v][c].queued = q.id;
    const auto us = q.id.find('_');
    if (q.name == p.post_name() && us != std::string::npos && q.id.find('[') == std::string::npos) {
      const std::size_t t = std::stoul(q.id.substr(us + 1)), d = p.post_chunks.size();
      if (t < p.task(p.variants.size(), 0)) p.posts[t / d][t % d].queued = q.id;
    }
  }
}

json plan_json(const Plan& p) {
  json j;
  j["format"] = "eddy-farm-plan";
  j["name"] = p.o.name;
  j["graph"] = p.graph;
  j["eddy"] = p.exe;
  j["frames"] = {p.first, p.last};
  j["chunk"] = p.o.chunk;
  j["post_chunk"] = p.o.post_chunk;
  j["out"] = fs::absolute(p.o.out_dir).lexically_normal().string();
  j["partition"] = p.o.partition;
  j["threads"] = p.o.threads;
  j["set"] = p.o.overrides;
  j["wedge"] = p.o.wedges;
  j["jobs_dir"] = p.jobs_dir;
  j["variants"] = json::array();
  for (const Variant& v : p.variants) j["variants"].push_back({{"label", v.label}, {"dir", v.dir}, {"set", v.sets}});
  return j;
}

Plan make_plan(Registry& registry, const FarmOptions& o, const std::string& exe) {
  Plan p;
  p.o = o;
  if (o.chunk < 1) throw Error("--chunk " + std::to_string(o.chunk) + ": at least 1 frame per job");
  if (o.post_chunk < 0) throw Error("--post-chunk " + std::to_string(o.post_chunk) + ": at least 1 frame per task");
  if (p.o.post_chunk == 0) p.o.post_chunk = o.chunk;
  p.graph = fs::absolute(o.graph).lexically_normal().string();
  p.exe = exe;
  if (p.o.name.empty()) p.o.name = graph_stem(o.graph);
  for (char c : p.o.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      throw Error("--name " + p.o.name + ": letters, digits, _ and - only (it names the jobs)");
  p.jobs_dir = fs::absolute(o.jobs_dir.empty() ? fs::path(o.out_dir) / "farm" / p.o.name : fs::path(o.jobs_dir))
                   .lexically_normal()
                   .string();
  // Paths and names go into #SBATCH lines, which Slurm splits at spaces and expands at %.
  for (const auto& [what, text] : {std::pair<std::string, std::string>{"--out", fs::absolute(o.out_dir).string()},
                                   {"--jobs-dir", p.jobs_dir}})
    if (text.find_first_of(" \t\n%") != std::string::npos)
      throw Error(what + " " + text + ": Slurm's #SBATCH lines take no spaces or % in a path");
  for (char c : o.partition)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != ',')
      throw Error("--partition " + o.partition + ": letters, digits, _, - and , only");
  p.variants = make_variants(o);
  const PreparedGraph g = prepare_graph(registry, p.graph, o.overrides, o.frames);
  p.first = g.first;
  p.last = g.last;
  p.chunks = split_frames(p.first, p.last, o.chunk);
  p.post_chunks = split_frames(p.first, p.last, p.o.post_chunk);
  read_disk(p, registry);
  return p;
}

FarmOptions options_of(const json& j) {
  FarmOptions o;
  o.name = j.at("name");
  o.graph = j.at("graph");
  o.frames = std::to_string(j.at("frames")[0].get<int>()) + "-" + std::to_string(j.at("frames")[1].get<int>());
  o.chunk = j.at("chunk");
  o.post_chunk = j.value("post_chunk", 0);
  o.out_dir = j.at("out");
  o.partition = j.at("partition");
  o.threads = j.at("threads");
  o.overrides = j.at("set").get<std::vector<std::string>>();
  o.wedges = j.at("wedge").get<std::vector<std::string>>();
  o.jobs_dir = j.at("jobs_dir");
  return o;
}

json read_plan(const std::string& jobs_dir) {
  const std::string path = (fs::path(jobs_dir) / "plan.json").string();
  if (!fs::is_regular_file(path))
    throw Error(jobs_dir + ": no plan.json (not the jobs folder of an eddy farm submission)");
  try {
    const json j = json::parse(read_file(path, "plan"));
    if (j.value("format", "") != "eddy-farm-plan") throw Error("not an eddy farm plan");
    options_of(j);  // every field there
    return j;
  } catch (const json::exception& e) {
    throw Error(path + ": damaged plan: " + e.what());
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

void need_slurm(const std::string& what) {
  for (const char* p : {"sbatch", "squeue", "scontrol"})
    if (!have(p))
      throw Error(what + ": Slurm's " + p + " is not installed here (install slurm-client, or use --dry-run to write the jobs)");
}

}  // namespace

int farm_submit(Registry& registry, const FarmOptions& o, const std::string& exe) {
  Plan p = make_plan(registry, o, exe);
  if (!o.dry_run) {
    need_slurm("eddy farm submit");
    mark_queued(p, read_queue(p));
  }
  if (!o.dry_run) {
    // Slurm refuses array indices from MaxArraySize up (1001 by default).
    const Ran cfg = shell("scontrol show config");
    const auto at = cfg.output.find("MaxArraySize");
    const std::size_t limit = at == std::string::npos ? 1001 : std::stoul(cfg.output.substr(cfg.output.find('=', at) + 1));
    const std::size_t top = p.task(p.variants.size() - 1, p.post_chunks.size() - 1);
    if (top >= limit)
      throw Error("--chunk " + std::to_string(o.chunk) + ": " + std::to_string(top + 1) +
                  " downstream tasks (variants x chunks) are more than this Slurm's MaxArraySize " +
                  std::to_string(limit) + " allows: make the chunks longer");
  }
  const std::string sub = write_jobs(p);
  write_file_atomic((fs::path(p.jobs_dir) / "plan.json").string(), plan_json(p).dump(2) + "\n");
  // The same plan for the other farms' schedulers (docs/farm.md).
  fs::create_directories(fs::path(p.jobs_dir) / "openjd");
  write_file_atomic((fs::path(p.jobs_dir) / "openjd" / "template.json").string(), openjd_template(p));
  write_file_atomic((fs::path(p.jobs_dir) / "opencue.xml").string(), opencue_spec(p));
  std::size_t frames = 0, done = 0;
  for (const auto& row : p.posts)
    for (std::size_t d = 0; d < p.post_chunks.size(); ++d) {
      const std::size_t n = frame_count(p.post_chunks[d]);
      frames += n;
      if (row[d].done) done += n;
    }
  std::printf("submission %s: %zu variant(s) x frames %d-%d in %zu chunk(s) (downstream %zu); %zu of %zu frames done\n",
              p.o.name.c_str(), p.variants.size(), p.first, p.last, p.chunks.size(), p.post_chunks.size(), done, frames);
  std::printf("jobs folder: %s\n", p.jobs_dir.c_str());
  if (sub.empty()) {
    std::printf("nothing to submit: every frame is done or queued\n");
    return 0;
  }
  const std::string script = (fs::path(p.jobs_dir) / "submit.sh").string();
  write_file_atomic(script, sub);
  if (o.dry_run) {
    std::printf("dry run: the jobs are written; `bash %s` submits them:\n\n%s", script.c_str(), sub.c_str());
    return 0;
  }
  const Ran r = shell("bash " + quote(script));
  std::fputs(r.output.c_str(), stdout);
  if (r.status != 0) {
    std::fprintf(stderr, "eddy: error: submitting the jobs failed (%s exited with %d); what was submitted stays "
                         "queued: `eddy farm resubmit --jobs-dir %s` submits the rest\n",
                 script.c_str(), r.status, p.jobs_dir.c_str());
    return 2;
  }
  return 0;
}

std::string farm_graph(const std::string& jobs_dir) { return read_plan(jobs_dir).at("graph"); }

int farm_resubmit(Registry& registry, const std::string& jobs_dir, const std::string& exe) {
  const json j = read_plan(jobs_dir);
  FarmOptions o = options_of(j);
  return farm_submit(registry, o, exe);
}

int farm_status(Registry& registry, const std::string& jobs_dir) {
  const json j = read_plan(jobs_dir);
  Plan p = make_plan(registry, options_of(j), j.at("eddy"));
  std::string no_queue = have("squeue") ? "" : "squeue not found";
  std::vector<Queued> queue;
  if (no_queue.empty()) try {
      queue = read_queue(p);
      mark_queued(p, queue);
    } catch (const Error& e) {
      no_queue = e.what();
    }
  std::size_t done = 0, pending = 0, failed = 0;
  std::printf("submission %s: frames %d-%d in chunks of %d (downstream %d), %zu variant(s)\n", p.o.name.c_str(),
              p.first, p.last, p.o.chunk, p.o.post_chunk, p.variants.size());
  auto state = [&](const std::string& id) {
    for (const Queued& q : queue)
      if (q.id == id) return q.state;
    return std::string("?");
  };
  for (std::size_t v = 0; v < p.variants.size(); ++v) {
    std::size_t simulated = 0, finished = 0;
    std::string lines;
    for (std::size_t c = 0; c < p.chunks.size(); ++c) {
      const Cell& sim = p.sims[v][c];
      if (sim.done || !p.stateful) simulated += frame_count(p.chunks[c]);
      else if (!sim.queued.empty())
        lines += "  simulation of frames " + Plan::frames(p.chunks[c]) + ": " + state(sim.queued) + " (job " +
                 sim.queued + ")\n";
    }
    for (std::size_t d = 0; d < p.post_chunks.size(); ++d) {
      const Cell& cell = p.posts[v][d];
      const std::size_t n = frame_count(p.post_chunks[d]);
      if (cell.done) {
        finished += n;
        done += n;
      } else if (!cell.queued.empty()) {
        pending += n;
        lines += "  frames " + Plan::frames(p.post_chunks[d]) + ": " + state(cell.queued) + " (job " + cell.queued + ")\n";
      } else {  // no job will cook them
        failed += n;
        lines += "  frames " + Plan::frames(p.post_chunks[d]) + ": not done and not queued\n";
      }
    }
    std::printf("%s (%s): simulated %zu, finished %zu of %zu frames\n%s",
                p.variants[v].label.empty() ? "the graph" : p.variants[v].label.c_str(), p.variants[v].dir.c_str(),
                simulated, finished, std::size_t(p.last - p.first + 1), lines.c_str());
  }
  if (!no_queue.empty()) std::printf("(the queue is not shown: %s)\n", no_queue.c_str());
  std::printf("frames: %zu done, %zu pending, %zu failed%s\n", done, pending, failed,
              failed ? " (eddy farm resubmit submits them again)" : "");
  return 0;
}

int farm_cancel(const std::string& jobs_dir) {
  const json j = read_plan(jobs_dir);
  need_slurm("eddy farm cancel");
  // The names and ids of its jobs are all the queue needs: no graph is loaded.
  Plan p;
  p.o = options_of(j);
  p.jobs_dir = p.o.jobs_dir;
  for (const auto& v : j.at("variants")) p.variants.push_back({v.at("label"), v.at("dir"), {}});
  p.chunks = split_frames(j.at("frames")[0], j.at("frames")[1], p.o.chunk);
  std::vector<std::string> ids;
  for (const Queued& q : read_queue(p)) ids.push_back(q.id);
  if (ids.empty()) {
    std::printf("no job of submission %s in the queue\n", p.o.name.c_str());
    return 0;
  }
  std::string cmd = "scancel";
  for (const std::string& id : ids) cmd += " " + quote(id);
  const Ran r = shell(cmd);
  if (r.status != 0) throw Error("scancel failed: " + r.output);
  std::printf("cancelled %zu job(s) of submission %s\n", ids.size(), p.o.name.c_str());
  return 0;
}

}  // namespace eddy::app
