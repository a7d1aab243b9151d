#pragma once
// eddy farm: a graph's frames cooked as Slurm jobs (docs/farm.md).
//
// A submission splits frames A-B into chunks of N. Per variant (the wedge's
// values, each in its own output folder), the stateful nodes run as a chain
// of jobs, one per chunk, each resuming from the checkpoint the job before
// left (--dependency=afterok); everything downstream runs as one job array
// over (variant, chunk), each task waiting only on the chain job that
// simulated its frames. Every job passes --skip-done, so a rerun, a
// requeued job or a resubmission cooks only what is not on disk.
#include <string>
#include <vector>

#include "eddy/graph/registry.h"

namespace eddy::app {

struct FarmOptions {
  std::string graph;
  std::string frames;                  // A-B, A, or "" (the graph's range)
  int chunk = 10;                      // frames per simulation job
  int post_chunk = 0;                  // frames per downstream task (0: chunk)
  std::vector<std::string> wedges;     // NODE.PARAM=v1,v2,... (several: every combination)
  std::vector<std::string> overrides;  // NODE.PARAM=VALUE for every job
  std::string out_dir = "out";
  std::string jobs_dir;                // default OUT/farm/<name>
  std::string name;                    // default: the graph's file name without .eddy.json
  std::string partition;
  int threads = 0;                     // per job (--cpus-per-task); 0: Slurm's default
  bool dry_run = false;
};

// Writes the job scripts, the plan (plan.json) and submit.sh into the jobs
// folder; runs submit.sh unless dry_run (then prints it). Returns the exit status.
int farm_submit(Registry& registry, const FarmOptions& options, const std::string& eddy_exe);
// Frames done, pending and failed per variant, with the submission's jobs in the queue.
int farm_status(Registry& registry, const std::string& jobs_dir);
// Cancels the submission's jobs still in the queue.
int farm_cancel(const std::string& jobs_dir);
// The graph file a submission cooks (its assets load from beside it).
std::string farm_graph(const std::string& jobs_dir);
// Submits again what is neither done nor queued, with the plan's options.
int farm_resubmit(Registry& registry, const std::string& jobs_dir, const std::string& eddy_exe);

}  // namespace eddy::app
