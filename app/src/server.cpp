// `eddy serve`: see server.h for the API. The server's parts: sandbox.h
// (what a request may ask), events.h (server-sent events), jobs.h (the open
// graph and its cook queue), routes.cpp and outputs.cpp (the endpoints),
// server_impl.h (the Impl that holds them).
#include "server.h"

#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "eddy/core/error.h"
#include "eddy/graph/graph.h"
#include "sandbox.h"
#include "server_impl.h"

namespace eddy::app {

namespace fs = std::filesystem;

namespace {

CookOptions cook_options(const fs::path& out, int threads) {
  CookOptions opts;
  opts.output_dir = out.string();
  opts.threads = threads;
  return opts;
}

}  // namespace

Server::Impl::Impl(Registry& r, ServeOptions o)
    : registry(r),
      options(std::move(o)),
      root(fs::weakly_canonical(options.root.empty() ? "." : options.root)),
      out(options.out.empty() ? root / "out" : fs::weakly_canonical(options.out)),
      token(options.token ? RequestGuard::new_token() : std::string()),
      observer(hub),
      graph(registry, cook_options(out, options.threads), observer),
      jobs(graph, hub, options.max_queued_jobs) {}

Server::Server(Registry& registry, ServeOptions options)
    : impl_(std::make_unique<Impl>(registry, std::move(options))) {}

Server::~Server() { stop(); }

int Server::start() {
  Impl& s = *impl_;
  if (!fs::is_directory(s.root)) throw Error("--root: '" + s.options.root + "' is not a folder");
  if (!s.options.graph.empty()) {
    const fs::path p = inside(s.root, s.options.graph, "--graph");
    s.graph.set(load_graph(p.string(), s.registry, ValidateOptions{false}));
  }
  s.http.set_payload_max_length(s.options.max_body);
  // Every open event stream holds a worker: room for many editors at once.
  s.http.new_task_queue = [] { return new httplib::ThreadPool(64); };
  s.routes();
  if (s.options.port == 0) {
    s.bound_port = s.http.bind_to_any_port(s.options.host.c_str());
    if (s.bound_port <= 0) throw Error("cannot listen on " + s.options.host);
  } else {
    if (!s.http.bind_to_port(s.options.host.c_str(), s.options.port))
      throw Error("cannot listen on " + s.options.host + ":" + std::to_string(s.options.port) +
                  " (in use? pick another with --port)");
    s.bound_port = s.options.port;
  }
  // Every request is checked before it is routed (guard.h).
  s.guard = std::make_unique<RequestGuard>(s.bound_port, s.token);
  s.http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    if (const auto refused = s.guard->refusal(req)) {
      reply_error(res, refused->status, refused->what());
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.jobs.start();
  s.listener = std::thread([&s] { s.http.listen_after_bind(); });
  // Returns once the listener runs: httplib's stop() before that is lost,
  // and a stop() right after start() would then wait on it for ever.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!s.http.is_running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!s.http.is_running()) throw Error("cannot listen on " + s.options.host + ":" + std::to_string(s.bound_port));
  return s.bound_port;
}

int Server::port() const { return impl_->bound_port; }

const std::string& Server::token() const { return impl_->token; }

void Server::wait() {
  std::unique_lock<std::mutex> lock(impl_->stop_mu);
  impl_->stop_cv.wait(lock, [&] { return impl_->stopped; });
}

void Server::stop() {
  Impl& s = *impl_;
  if (!s.jobs.quit()) return;
  s.hub.stop();
  s.http.stop();
  if (s.listener.joinable()) s.listener.join();
  s.jobs.join();
  std::lock_guard<std::mutex> lock(s.stop_mu);
  s.stopped = true;
  s.stop_cv.notify_all();
}

int serve(Registry& registry, const ServeOptions& options) {
  // SIGINT and SIGTERM are taken by a thread of their own (sigwait), which
  // stops the server: the threads started below inherit the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Server server(registry, options);
  const int port = server.start();
  const std::string& token = server.token();
  std::printf("eddy serve: http://%s:%d/%s (root %s)\n", options.host.c_str(), port,
              token.empty() ? "" : ("?token=" + token).c_str(), fs::weakly_canonical(options.root).c_str());
  std::fflush(stdout);
  std::thread([&server, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  }).detach();
  server.wait();
  return 0;
}

}  // namespace eddy::app
