// eddy: cook saved graphs headless, list node types, validate graphs.
//   eddy run GRAPH [--frames A-B] [--out DIR] [--set NODE.PARAM=VALUE ...] [--threads N]
//            [--checkpoints DIR] [--part all|sim|post] [--skip-done]
//   eddy nodes [TYPE] [--json]
//   eddy farm submit GRAPH --frames A-B --chunk N [--wedge NODE.PARAM=v1,v2] [--dry-run] ...
//   eddy farm status|cancel|resubmit --jobs-dir DIR
//   eddy validate GRAPH
//   eddy serve [--port P] [--graph FILE] [--root DIR] [--out DIR] [--static DIR] [--no-token]
// A user's mistake prints one clear message and exits with status 2.
#include <tbb/global_control.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "farm.h"
#include "server.h"
#include "eddy/core/error.h"
#include "eddy/core/huge_pages.h"

namespace {
std::string exe_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}
}  // namespace

int main(int argc, char** argv) {
  // malloc on huge pages (OpenVDB's leaves, volumeToMesh): about a tenth off
  // a frame of a million particles at Dx = r/2 (bench/bench_surfacing.cpp).
  eddy::restart_with_huge_page_malloc(argv);
  CLI::App app{"Eddy: node graphs for liquid simulation and surfacing"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "eddy 0.1.0");

  eddy::app::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "Cook a graph's output nodes frame by frame");
  run_cmd->add_option("graph", run.graph, "Graph file (.eddy.json)")->required();
  run_cmd->add_option("--frames", run.frames, "Frames to cook, A-B or A (default: the graph's range)");
  run_cmd->add_option("--out", run.out_dir, "Folder where relative output paths resolve")->default_val("out");
  run_cmd->add_option("--set", run.overrides, "Override a parameter: NODE.PARAM=VALUE (repeatable)");
  run_cmd->add_option("--threads", run.threads, "Worker threads (default: all cores)")->check(CLI::Range(1, 1000000));
  run_cmd->add_flag("--quiet", run.quiet, "Print only errors and the summary");
  run_cmd->add_option("--checkpoints", run.checkpoints,
                      "Folder where stateful nodes keep a checkpoint of every frame, and resume from one");
  run_cmd->add_option("--part", run.part,
                      "What cooks: all (the output nodes), sim (the stateful nodes only), post (the output nodes, "
                      "with the stateful ones taken from their checkpoints)")
      ->check(CLI::IsMember({"all", "sim", "post"}))
      ->default_val("all");
  run_cmd->add_flag("--skip-done", run.skip_done,
                    "Skip the frames a run of the same part and graph finished before (their markers under "
                    "OUT/.eddy/done)");

  std::string node_type;
  bool nodes_json = false;
  auto* nodes_cmd = app.add_subcommand("nodes", "Describe every node type, or one");
  nodes_cmd->add_option("type", node_type, "Node type");
  nodes_cmd->add_flag("--json", nodes_json, "Print the node catalog as JSON");

  eddy::app::ServeOptions serve;
  auto* serve_cmd = app.add_subcommand("serve", "Serve the node editor and its HTTP API");
  serve_cmd->add_option("--port", serve.port, "Port (0: any free one)")->default_val(8188);
  serve_cmd->add_option("--host", serve.host, "Address to listen on")->default_val("127.0.0.1");
  serve_cmd->add_option("--root", serve.root, "Folder the graphs are read from and saved to")->default_val(".");
  serve_cmd->add_option("--out", serve.out, "Folder for exports and cooked files (default: ROOT/out)");
  serve_cmd->add_option("--graph", serve.graph, "Graph to open at start, relative to the root");
  serve_cmd->add_option("--static", serve.static_dir, "The built editor (editor/dist)");
  serve_cmd->add_option("--threads", serve.threads, "Cook threads (default: all cores)")->check(CLI::Range(1, 1000000));
  bool no_token = false;
  serve_cmd->add_flag("--no-token", no_token,
                      "Do not ask for the per-run token on requests that change state (scripted use on a trusted "
                      "machine); the Host and Origin checks stay");

  eddy::app::FarmOptions farm;
  std::string farm_jobs;
  auto* farm_cmd = app.add_subcommand("farm", "Cook a graph's frames as Slurm jobs (docs/farm.md)");
  farm_cmd->require_subcommand(1);
  auto* submit_cmd = farm_cmd->add_subcommand(
      "submit", "Split the frames into jobs: a simulation chain per variant, an array for what lies downstream");
  submit_cmd->add_option("graph", farm.graph, "Graph file (.eddy.json)")->required();
  submit_cmd->add_option("--frames", farm.frames, "Frames, A-B (default: the graph's range)");
  submit_cmd->add_option("--chunk", farm.chunk, "Frames per simulation job")->default_val(10)->check(CLI::Range(1, 1000000));
  submit_cmd->add_option("--post-chunk", farm.post_chunk,
                         "Frames per downstream task (surfacing, writers; default: --chunk)")
      ->check(CLI::Range(1, 1000000));
  submit_cmd->add_option("--wedge", farm.wedges,
                         "NODE.PARAM=v1,v2,...: a variant per value, each in its own output folder (repeatable: "
                         "every combination)");
  submit_cmd->add_option("--set", farm.overrides, "Override a parameter in every job: NODE.PARAM=VALUE (repeatable)");
  submit_cmd->add_option("--out", farm.out_dir, "Output folder (shared by the farm's nodes)")->default_val("out");
  submit_cmd->add_option("--jobs-dir", farm.jobs_dir, "Where the job scripts, plan and logs go (default: OUT/farm/NAME)");
  submit_cmd->add_option("--name", farm.name, "The submission's name, in its jobs' names (default: the graph's)");
  submit_cmd->add_option("--partition", farm.partition, "Slurm partition");
  submit_cmd->add_option("--threads", farm.threads, "Cores per job (--cpus-per-task)")->check(CLI::Range(1, 1000000));
  submit_cmd->add_flag("--dry-run", farm.dry_run, "Write the jobs and print the commands that submit them");
  auto* status_cmd = farm_cmd->add_subcommand("status", "Frames done, pending and failed, and the jobs in the queue");
  auto* cancel_cmd = farm_cmd->add_subcommand("cancel", "Cancel the submission's jobs still in the queue");
  auto* resubmit_cmd =
      farm_cmd->add_subcommand("resubmit", "Submit again what is neither done nor queued (after a failed job)");
  for (auto* c : {status_cmd, cancel_cmd, resubmit_cmd})
    c->add_option("--jobs-dir", farm_jobs, "The submission's jobs folder (as submit printed it)")->required();

  std::string validate_graph;
  auto* validate_cmd = app.add_subcommand("validate", "Load and validate a graph without cooking it");
  validate_cmd->add_option("graph", validate_graph, "Graph file (.eddy.json)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  std::unique_ptr<tbb::global_control> threads;
  if (run.threads > 0)
    threads = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, run.threads);
  try {
    eddy::Registry registry;
    registry.load_default_plugins(exe_path());
    // Assets (subnetworks as node types): EDDY_ASSET_PATH, and the "assets"
    // folder beside the graph (or the served root).
    if (*run_cmd) registry.load_default_assets(run.graph);
    if (*submit_cmd) registry.load_default_assets(farm.graph);
    if (*validate_cmd) registry.load_default_assets(validate_graph);
    if (*serve_cmd) registry.load_default_assets((std::filesystem::path(serve.root) / "graph").string());
    if (*nodes_cmd) registry.load_default_assets("");
    if (*run_cmd) return eddy::app::run(registry, run);
    if (*submit_cmd) return eddy::app::farm_submit(registry, farm, exe_path());
    if (*status_cmd || *resubmit_cmd) {
      registry.load_default_assets(eddy::app::farm_graph(farm_jobs));
      if (*status_cmd) return eddy::app::farm_status(registry, farm_jobs);
      return eddy::app::farm_resubmit(registry, farm_jobs, exe_path());
    }
    if (*cancel_cmd) return eddy::app::farm_cancel(farm_jobs);
    if (*nodes_cmd) return eddy::app::nodes(registry, node_type, nodes_json);
    if (*validate_cmd) return eddy::app::validate(registry, validate_graph);
    if (*serve_cmd) {
      // The editor built in this checkout (editor/dist beside the build folder), unless told otherwise.
      if (serve.static_dir.empty()) {
        const auto dist = std::filesystem::path(exe_path()).parent_path() / ".." / ".." / "editor" / "dist";
        if (std::filesystem::is_regular_file(dist / "index.html")) serve.static_dir = dist.lexically_normal().string();
      }
      serve.token = !no_token;
      return eddy::app::serve(registry, serve);
    }
  } catch (const eddy::Error& e) {
    std::fprintf(stderr, "eddy: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eddy: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
