// The job files of a farm submission (farm_plan.h): one Slurm script per
// simulation chunk, chained by --dependency=afterok, one job array for
// everything downstream, submit.sh to queue them; and the same plan as an
// OpenJD template and an OpenCue spec.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "eddy/core/io.h"
#include "farm_plan.h"

namespace eddy::app::farm {

namespace fs = std::filesystem;
using nlohmann::json;

// 'text' for the shell, quotes inside escaped (plain words as they are).
std::string quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,:+@-") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

std::string header(const Plan& p, const std::string& name, const std::string& log) {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" + name + "\n";
  s += "#SBATCH --output=" + (fs::path(p.jobs_dir) / "logs" / log).string() + "\n";
  s += "#SBATCH --open-mode=append\n";  // a requeued job's log goes on
  s += "#SBATCH --requeue\n";           // a preempted job comes back, and resumes
  s += "#SBATCH --kill-on-invalid-dep=yes\n";
  if (!p.o.partition.empty()) s += "#SBATCH --partition=" + p.o.partition + "\n";
  if (p.o.threads > 0) s += "#SBATCH --cpus-per-task=" + std::to_string(p.o.threads) + "\n";
  s += "# Written by eddy farm submit (docs/farm.md).\nset -euo pipefail\n";
  // A failed run (a crash, a killed process: any status but 0, or 2, bad
  // input, which another try would not mend) puts the job back in the
  // queue, twice at most; it then resumes from its last complete frame.
  s += "cook() {\n"
       "  local rc=0\n"
       "  \"$@\" || rc=$?\n"
       "  if [[ $rc != 0 && $rc != 2 && -n ${SLURM_JOB_ID:-} && ${SLURM_RESTART_COUNT:-0} -lt 2 ]]; then\n"
       "    echo \"eddy farm: eddy exited with status $rc: requeued to resume\" >&2\n"
       "    scontrol requeue \"$SLURM_JOB_ID\"\n"
       "  fi\n"
       "  exit $rc\n"
       "}\n";
  return s;
}

// The arguments of a job's `eddy run` (after the program), the same for every scheduler.
std::vector<std::string> run_args(const Plan& p, const Variant& v, const std::string& part, const Span& frames) {
  std::vector<std::string> a{"run",     p.graph, "--part",        part,
                             "--frames", Plan::frames(frames), "--out",       v.dir,
                             "--checkpoints", (fs::path(v.dir) / "checkpoints").string(), "--skip-done"};
  for (const std::string& set : v.sets) a.insert(a.end(), {"--set", set});
  if (p.o.threads > 0) a.insert(a.end(), {"--threads", std::to_string(p.o.threads)});
  return a;
}

// The same as one shell command line.
std::string run_line(const Plan& p, const Variant& v, const std::string& part, const Span& frames) {
  std::string s = quote(p.exe);
  for (const std::string& a : run_args(p, v, part, frames)) s += " " + quote(a);
  return s;
}

// What the plan leaves to do, for the schedulers whose templates are
// written from it (OpenJD, OpenCue): every simulation and downstream job
// not done, each with the jobs it waits on.
struct Task {
  std::string name, part;
  std::vector<std::string> after;
  std::size_t v = 0;
  Span frames;
};
std::vector<Task> pending_tasks(const Plan& p) {
  std::vector<Task> out;
  for (std::size_t v = 0; v < p.variants.size(); ++v) {
    std::vector<std::string> sim(p.chunks.size());  // the step each simulation chunk's frames wait on ("" none)
    for (std::size_t c = 0; c < p.chunks.size() && p.stateful; ++c) {
      if (p.sims[v][c].done) continue;
      sim[c] = "sim-v" + std::to_string(v) + "-c" + std::to_string(c);
      std::vector<std::string> after;
      if (c > 0 && !sim[c - 1].empty()) after.push_back(sim[c - 1]);
      out.push_back({sim[c], "sim", after, v, p.chunks[c]});
    }
    for (std::size_t d = 0; d < p.post_chunks.size(); ++d) {
      if (p.posts[v][d].done) continue;
      std::vector<std::string> after;
      for (std::size_t c : p.sims_of(d))
        if (!sim[c].empty()) after.push_back(sim[c]);
      out.push_back({"post-v" + std::to_string(v) + "-c" + std::to_string(d), "post", after, v, p.post_chunks[d]});
    }
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

}  // namespace

// An Open Job Description template (specification jobtemplate-2023-09; a
// Deadline Cloud job bundle is the folder that holds it as template.json):
// a step per job, each depending on the step its frames wait on.
std::string openjd_template(const Plan& p) {
  json steps = json::array();
  for (const Task& t : pending_tasks(p)) {
    json step;
    step["name"] = t.name;
    step["script"]["actions"]["onRun"]["command"] = p.exe;
    step["script"]["actions"]["onRun"]["args"] = run_args(p, p.variants[t.v], t.part, t.frames);
    for (const std::string& a : t.after) step["dependencies"].push_back(json{{"dependsOn", a}});
    steps.push_back(step);
  }
  json j;
  j["specificationVersion"] = "jobtemplate-2023-09";
  j["name"] = "eddy " + p.o.name;
  j["steps"] = steps;
  return j.dump(2) + "\n";
}

// An OpenCue job specification (cjsl 1.12): a layer per job, each waiting
// (LAYER_ON_LAYER) on the layer its frames wait on.
std::string opencue_spec(const Plan& p) {
  const char* user = std::getenv("USER");
  std::string x = "<?xml version=\"1.0\"?>\n<!DOCTYPE spec PUBLIC \"SPI Cue Specification Language\" "
                  "\"http://localhost:8080/spcue/dtd/cjsl-1.12.dtd\">\n<spec>\n  <facility>local</facility>\n"
                  "  <show>eddy</show>\n  <shot>" + xml_escape(p.o.name) + "</shot>\n  <user>" +
                  xml_escape(user && *user ? user : "eddy") + "</user>\n  <job name=\"" + xml_escape(p.o.name) +
                  "\">\n    <paused>false</paused>\n    <maxretries>2</maxretries>\n    <autoeat>false</autoeat>\n"
                  "    <env/>\n    <layers>\n";
  std::string depends;
  const std::vector<Task> tasks = pending_tasks(p);
  for (const Task& t : tasks) {
    const std::string layer = t.name;
    x += "      <layer name=\"" + layer + "\" type=\"Render\">\n        <cmd>" +
         xml_escape(run_line(p, p.variants[t.v], t.part, t.frames)) + "</cmd>\n        <range>" + Plan::frames(t.frames) +
         "</range>\n        <chunk>" + std::to_string(frame_count(t.frames)) +
         "</chunk>\n" + (p.o.threads > 0 ? "        <cores>" + std::to_string(p.o.threads) + "</cores>\n" : "") +
         "        <services>\n          <service>shell</service>\n        </services>\n      </layer>\n";
    for (const std::string& a : t.after)
      depends += "    <depend type=\"LAYER_ON_LAYER\" anyframe=\"False\">\n      <depjob>" + xml_escape(p.o.name) +
                 "</depjob>\n      <deplayer>" + layer + "</deplayer>\n      <onjob>" + xml_escape(p.o.name) +
                 "</onjob>\n      <onlayer>" + a + "</onlayer>\n    </depend>\n";
  }
  x += "    </layers>\n  </job>\n";
  if (!depends.empty()) x += "  <depends>\n" + depends + "  </depends>\n";
  return x + "</spec>\n";
}

std::string write_jobs(const Plan& p) {
  fs::create_directories(fs::path(p.jobs_dir) / "logs");
  std::string sub = "#!/bin/bash\n# Submission '" + p.o.name + "' of " + p.graph + ": frames " +
                    std::to_string(p.first) + "-" + std::to_string(p.last) + " in chunks of " +
                    std::to_string(p.o.chunk) + ", " + std::to_string(p.variants.size()) +
                    " variant(s). Written by eddy farm submit.\nset -euo pipefail\ncd " + quote(p.jobs_dir) + "\n";
  // Each job's id goes to `submitted`: the queue's jobs are this submission's by id, not only by name.
  sub += "job() { local id; id=$(sbatch --parsable \"$@\"); id=${id%%;*}; echo \"$id\" >> submitted; echo \"$id\"; }\n";
  std::map<std::pair<std::size_t, std::size_t>, std::string> sim_dep;  // what a chunk's frames wait on ("" none)
  int jobs = 0;
  for (std::size_t v = 0; v < p.variants.size() && p.stateful; ++v) {
    std::string prev;
    for (std::size_t c = 0; c < p.chunks.size(); ++c) {
      const Cell& cell = p.sims[v][c];
      std::string dep;
      if (cell.done) dep = "";
      else if (!cell.queued.empty()) dep = cell.queued;
      else {
        const std::string script = "sim.v" + std::to_string(v) + ".c" + std::to_string(c) + ".sh";
        write_file_atomic((fs::path(p.jobs_dir) / script).string(),
                          header(p, p.sim_name(v, c), "%x.%j.log") + "cook " +
                              run_line(p, p.variants[v], "sim", p.chunks[c]) + "\n");
        const std::string var = "sim_v" + std::to_string(v) + "_c" + std::to_string(c);
        sub += var + "=$(job" + (prev.empty() ? "" : " --dependency=afterok:" + prev) + " " + script + ")\n";
        sub += "echo \"" + p.sim_name(v, c) + " (frames " + Plan::frames(p.chunks[c]) + "): job $" + var + "\"\n";
        dep = "$" + var;
        ++jobs;
      }
      sim_dep[{v, c}] = dep;
      prev = dep;
    }
  }
  // Downstream: one array over (variant, post chunk), the tasks neither done
  // nor queued, each waiting on the simulation jobs of its own frames.
  std::string cases, indices, updates;
  for (std::size_t v = 0; v < p.variants.size(); ++v)
    for (std::size_t d = 0; d < p.post_chunks.size(); ++d) {
      const Cell& cell = p.posts[v][d];
      if (cell.done || !cell.queued.empty()) continue;
      const std::string t = std::to_string(p.task(v, d));
      indices += (indices.empty() ? "" : ",") + t;
      cases += "  " + t + ") cook " + run_line(p, p.variants[v], "post", p.post_chunks[d]) + " ;;\n";
      std::string deps;
      for (std::size_t c : p.sims_of(d))
        if (!sim_dep[{v, c}].empty()) deps += ":" + sim_dep[{v, c}];
      if (!deps.empty()) updates += "scontrol update JobId=${post}_" + t + " Dependency=afterok" + deps + "\n";
      ++jobs;
    }
  if (!indices.empty()) {
    write_file_atomic((fs::path(p.jobs_dir) / "post.sh").string(),
                      header(p, p.post_name(), "%x.%A_%a.log") + "case \"$SLURM_ARRAY_TASK_ID\" in\n" + cases +
                          "  *) echo \"eddy farm: no task $SLURM_ARRAY_TASK_ID in this array\" >&2; exit 2 ;;\nesac\n");
    // Held while each task is told which chain job it waits on, then released.
    sub += "post=$(job --hold --array=" + indices + " post.sh)\n";
    // Released whatever happens next: a failed update must not leave it held for ever.
    sub += "trap 'scontrol release \"$post\"' EXIT\n" + updates;
    sub += "echo \"" + p.post_name() + " (tasks " + indices + "): job array $post\"\n";
  }
  return jobs ? sub : "";
}

}  // namespace eddy::app::farm
