#pragma once
// A farm submission's plan (farm.cpp makes it from the options, the disk and
// the queue) and the job files written from it (farm_jobs.cpp): Slurm
// scripts and submit.sh, an OpenJD template and an OpenCue spec. Internal
// to the app.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "farm.h"

namespace eddy::app::farm {

// 'text' for the shell, quotes inside escaped (plain words as they are).
std::string quote(const std::string& s);

struct Variant {
  std::string label;              // "solver.viscosity=0.01" (empty: no wedge)
  std::string dir;                // its output folder (absolute)
  std::vector<std::string> sets;  // the overrides of its jobs
};

// A job's frames of one variant: done (on disk), or queued (its job or array task id).
struct Cell {
  bool done = false;
  std::string queued;
};
using Span = std::pair<int, int>;  // frames first-last
inline std::size_t frame_count(const Span& s) { return std::size_t(s.second - s.first + 1); }

struct Plan {
  FarmOptions o;
  std::string exe, graph, jobs_dir;
  int first = 0, last = 0;
  bool stateful = false;
  std::vector<Variant> variants;
  std::vector<Span> chunks;       // the simulation's
  std::vector<Span> post_chunks;  // downstream's (--post-chunk)
  std::vector<std::vector<Cell>> sims, posts;  // [variant][chunk], [variant][post chunk]

  std::string sim_name(std::size_t v, std::size_t c) const {
    return "eddy." + o.name + ".sim.v" + std::to_string(v) + ".c" + std::to_string(c);
  }
  std::string post_name() const { return "eddy." + o.name + ".post"; }
  static std::string frames(const Span& s) { return std::to_string(s.first) + "-" + std::to_string(s.second); }
  std::size_t task(std::size_t v, std::size_t d) const { return v * post_chunks.size() + d; }
  // The simulation chunks whose frames downstream chunk d reads.
  std::vector<std::size_t> sims_of(std::size_t d) const {
    std::vector<std::size_t> out;
    for (std::size_t c = 0; c < chunks.size(); ++c)
      if (chunks[c].first <= post_chunks[d].second && chunks[c].second >= post_chunks[d].first) out.push_back(c);
    return out;
  }
};

// Writes the job scripts and returns submit.sh's text ("" when nothing is left to do).
std::string write_jobs(const Plan& p);
// The plan's pending jobs as an OpenJD job template (JSON).
std::string openjd_template(const Plan& p);
// The same as an OpenCue job spec (XML).
std::string opencue_spec(const Plan& p);

}  // namespace eddy::app::farm
