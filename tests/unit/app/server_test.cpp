// The editor's server (`eddy serve`) in-process, over real HTTP on
// 127.0.0.1: every endpoint, malformed bodies, path traversal, concurrent
// requests, server-sent events, a cook cancelled midway, a failing node, and
// a client that goes away mid-stream.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "eddy/graph/registry.h"
#include "../../builtin_registry.h"
#include "../../temp_dir.h"
#include "jobs.h"
#include "sandbox.h"
#include "server.h"

namespace eddy::app {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

Registry& registry() { return test::builtin_registry(); }

// A tank with a block of water and a PBF solver: radius r, frames 1..last.
std::string small_graph(double r, int last, const std::string& extra_nodes = "", const std::string& extra_links = "") {
  return R"({"format": "eddy-graph", "version": 1, "frame_range": [1, )" + std::to_string(last) + R"(], "fps": 24,
  "nodes": [
    {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0.5, 0.5, 0.2], "size": [1, 1, 0.4]}},
    {"id": "water", "type": "FluidBox", "params": {"center": [0.2, 0.2, 0.2], "size": [0.4, 0.4, 0.4], "particle_radius": )" +
         std::to_string(r) + R"(}},
    {"id": "solver", "type": "PBFSolver"})" + extra_nodes + R"(
  ],
  "links": [
    {"from": "tank.colliders", "to": "water.colliders"},
    {"from": "water.particles", "to": "solver.particles"},
    {"from": "tank.colliders", "to": "solver.colliders"})" + extra_links + R"(
  ]})";
}

std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += char(ch);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      out += buf;
    }
  }
  return out;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { start(ServeOptions{}); }
  // A server on a free port over a fresh root; `o`'s limits are kept.
  void start(ServeOptions o) {
    if (server) server->stop();
    root = test::fresh_test_dir("eddy_serve_");
    fs::create_directories(root / "graphs");
    std::ofstream(root / "graphs" / "small.eddy.json") << small_graph(0.05, 10);
    std::ofstream(root / "notes.txt") << "not a graph";
    o.port = 0;
    o.root = root.string();
    o.threads = 2;
    server = std::make_unique<Server>(registry(), o);
    port = server->start();
  }
  void TearDown() override {
    server->stop();
    fs::remove_all(root);
  }
  // A client as the editor is one: it sends the run's token.
  httplib::Client client() {
    httplib::Client c = bare_client();
    c.set_default_headers({{"X-Eddy-Token", server->token()}});
    return c;
  }
  httplib::Client bare_client() {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    return c;
  }
  void open_small() {
    auto r = client().Post("/api/graph/open", R"({"path": "graphs/small.eddy.json"})", "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }

  fs::path root;
  std::unique_ptr<Server> server;
  int port = 0;
};

// Collects server-sent events on a thread until `until` matches one.
class EventReader {
 public:
  EventReader(int port, std::function<bool(const json&)> until) : until_(std::move(until)) {
    thread_ = std::thread([this, port] {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(60, 0);
      std::string buffer;
      c.Get("/api/events", [&](const char* data, std::size_t n) {
        buffer.append(data, n);
        for (std::size_t p; (p = buffer.find("\n\n")) != std::string::npos;) {
          const std::string block = buffer.substr(0, p);
          buffer.erase(0, p + 2);
          if (block.rfind("data: ", 0) != 0) continue;
          const json e = json::parse(block.substr(6));
          if (e["event"] == "connected") {
            connected_ = true;
            continue;
          }
          std::lock_guard<std::mutex> lock(mu_);
          events_.push_back(e);
          if (until_(e)) {
            done_ = true;
            return false;  // closes the stream
          }
        }
        return !stop_;
      });
    });
    // The stream is open (the server's first event) before the caller starts what it watches.
    const auto t0 = std::chrono::steady_clock::now();
    while (!connected_ && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_TRUE(connected_) << "the event stream did not open";
  }
  ~EventReader() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<json> wait() {
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  bool done() const { return done_; }

 private:
  std::function<bool(const json&)> until_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<json> events_;
  std::atomic<bool> stop_{false}, done_{false}, connected_{false};
};

TEST_F(ServerTest, CatalogGraphsOpenAndSave) {
  auto c = client();
  auto r = c.Get("/api/catalog");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("\"MPMSolver\""), std::string::npos);
  EXPECT_NE(r->body.find("\"FluidBox\""), std::string::npos);

  r = c.Get("/api/graphs");
  ASSERT_TRUE(r);
  const json list = json::parse(r->body);
  ASSERT_EQ(list.size(), 1u) << r->body;
  EXPECT_EQ(list[0]["path"], "graphs/small.eddy.json");

  r = c.Get("/api/graph");
  EXPECT_EQ(r->status, 409) << "no graph open yet";
  open_small();
  r = c.Get("/api/graph");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["nodes"].size(), 3u);

  r = c.Post("/api/graph/save", R"({"path": "graphs/copy.eddy.json"})", "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(fs::exists(root / "graphs" / "copy.eddy.json"));
  r = c.Get("/api/graphs/file?path=graphs/copy.eddy.json");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["nodes"].size(), 3u);
}

// The editor's "collapse into asset" and "reload": the water and its solver
// of the open graph become an asset file under the root's assets folder and
// one node in the graph; a refused collapse writes nothing; the file edited
// and reloaded changes what the node cooks.
TEST_F(ServerTest, ASelectionCollapsesIntoAnAssetAndTheAssetReloads) {
  auto c = client();
  open_small();
  auto r = c.Get("/api/geometry?node=solver&frame=2");
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string before = r->body;
  const json request = {{"nodes", {"water", "solver"}}, {"type", "ServeTestShot"}, {"promote", {"water.particle_radius"}}};
  r = c.Post("/api/asset/collapse", request.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  const json g = json::parse(r->body);
  ASSERT_EQ(g["nodes"].size(), 2u) << r->body;
  EXPECT_EQ(g["nodes"][1]["type"], "ServeTestShot");
  EXPECT_EQ(g["nodes"][1]["id"], "serve_test_shot");
  EXPECT_EQ(g["nodes"][1]["params"]["particle_radius"], 0.05);
  // The tank feeds both inner colliders inputs: two asset inputs, named by node.
  EXPECT_EQ(g["links"].size(), 2u) << r->body;
  EXPECT_EQ(g["links"][0]["to"], "serve_test_shot.water_colliders");
  EXPECT_EQ(g["links"][1]["to"], "serve_test_shot.solver_colliders");
  const fs::path file = root / "assets" / "serve_test_shot.eddy.json";
  ASSERT_TRUE(fs::exists(file));
  r = c.Get("/api/catalog");
  EXPECT_NE(r->body.find("\"ServeTestShot\""), std::string::npos);
  r = c.Get("/api/asset?type=ServeTestShot");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["graph"]["nodes"].size(), 2u);
  // The asset node cooks what the solver did: the same bytes.
  r = c.Get("/api/geometry?node=serve_test_shot&frame=2");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body, before);

  // Refused, with nothing written: the type is taken; the file exists; a node is unknown.
  r = c.Post("/api/asset/collapse", json{{"nodes", {"tank"}}, {"type", "ServeTestShot"}}.dump(), "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("exists already"), std::string::npos) << r->body;
  r = c.Post("/api/asset/collapse",
             json{{"nodes", {"tank"}}, {"type", "ServeTestTank"}, {"file", "assets/serve_test_shot.eddy.json"}}.dump(),
             "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("exists already; choose another file"), std::string::npos) << r->body;
  r = c.Post("/api/asset/collapse", json{{"nodes", {"tank", "nope"}}, {"type", "ServeTestNope"}}.dump(),
             "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find(R"(the graph has no node \"nope\")"), std::string::npos) << r->body;
  r = c.Post("/api/asset/collapse", json{{"nodes", {"tank"}}, {"type", "ServeTestOut"}, {"file", "../x.eddy.json"}}.dump(),
             "application/json");
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(std::distance(fs::directory_iterator(root / "assets"), fs::directory_iterator()), 1);
  EXPECT_EQ(json::parse(c.Get("/api/graph")->body)["nodes"].size(), 2u) << "the open graph is untouched";

  // The asset file edited by hand (the solver's gravity turned off) and reloaded.
  json asset = json::parse(std::ifstream(file));
  for (auto& n : asset["nodes"])
    if (n["id"] == "solver") n["params"]["gravity"] = {0, 0, 0};
  std::ofstream(file) << asset.dump(2);
  r = c.Post("/api/asset/reload", R"({"type": "ServeTestShot"})", "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  r = c.Get("/api/geometry?node=serve_test_shot&frame=2");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body, before) << "the reloaded contents cooked anew";
  r = c.Post("/api/asset/reload", R"({"type": "PBFSolver"})", "application/json");
  EXPECT_EQ(r->status, 404) << r->body;

  // New contents from the editor: gravity back, written into the file.
  for (auto& n : asset["nodes"])
    if (n["id"] == "solver") n["params"]["gravity"] = {0, -9.81, 0};
  const json edit = {{"type", "ServeTestShot"}, {"graph", {{"nodes", asset["nodes"]}, {"links", asset["links"]}}}};
  r = c.Put("/api/asset", edit.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(std::ifstream(file))["nodes"], asset["nodes"]);
  r = c.Get("/api/geometry?node=serve_test_shot&frame=2");
  EXPECT_EQ(r->body, before) << "the solver's own gravity again: the first cook's bytes";
  // Contents that name an unknown node type: refused, the file unchanged.
  json bad = edit;
  bad["graph"]["nodes"][0]["type"] = "NoSuchNode";
  r = c.Put("/api/asset", bad.dump(), "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("NoSuchNode"), std::string::npos) << r->body;
  EXPECT_EQ(json::parse(std::ifstream(file))["nodes"], asset["nodes"]);
  // An asset from outside the served folder (as from EDDY_ASSET_PATH) is
  // not written through the server: 403, its file untouched.
  const std::string outside = std::string(EDDY_SOURCE_DIR) + "/examples/assets/liquid_surface.eddy.json";
  registry().load_asset(outside);
  std::stringstream kept;
  kept << std::ifstream(outside).rdbuf();
  const json theirs = json::parse(kept.str());
  r = c.Put("/api/asset",
            json{{"type", "LiquidSurface"}, {"graph", {{"nodes", theirs["nodes"]}, {"links", json::array()}}}}.dump(),
            "application/json");
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_NE(r->body.find("outside the served folder"), std::string::npos) << r->body;
  std::stringstream now;
  now << std::ifstream(outside).rdbuf();
  EXPECT_EQ(now.str(), kept.str());
}

TEST_F(ServerTest, MalformedAndInvalidBodiesAreRefusedWithTheReason) {
  auto c = client();
  auto r = c.Put("/api/graph", "{not json", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("error"), std::string::npos);

  std::string bad = small_graph(0.05, 10);
  bad.replace(bad.find("\"particle_radius\": "), 19, "\"particle_radius\": -");
  r = c.Put("/api/graph", bad, "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(json::parse(r->body)["error"].get<std::string>().find("particle_radius"), std::string::npos) << r->body;

  open_small();
  r = c.Post("/api/cook", "[1, 2]", "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  r = c.Post("/api/cook", R"({"node": "nope", "frames": [1, 2]})", "application/json");
  EXPECT_EQ(r->status, 404) << r->body;
  r = c.Post("/api/cook", R"({"frames": [5, 2]})", "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  for (const char* frame : {"x", "1x", "", "99999999999", "1.5", "%00"}) {
    r = c.Get(std::string("/api/geometry?node=solver&frame=") + frame);
    EXPECT_EQ(r->status, 400) << frame << ": " << r->body;
    EXPECT_NE(r->body.find("'frame' must be an integer"), std::string::npos) << frame << ": " << r->body;
  }
  r = c.Get("/api/geometry?node=tank&frame=1");
  ASSERT_EQ(r->status, 200) << "colliders are drawn as wireframes: " << r->body;
  ASSERT_EQ(r->body.size(), 16u + 30u * 4u);  // header, count, one shape
  uint32_t head[6];
  std::memcpy(head, r->body.data(), sizeof head);
  EXPECT_EQ(head[2], 3u);  // colliders
  EXPECT_EQ(head[3], 1u);  // one shape
  EXPECT_EQ(head[4], 1u);  // a box
  EXPECT_EQ(head[5], 1u);  // a container
  r = c.Get("/api/geometry?node=solver&frame=1&output=nope");
  EXPECT_EQ(r->status, 404) << r->body;
  // Too large a body.
  r = c.Put("/api/graph", std::string(9 << 20, ' '), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  // Nesting far beyond any graph (400 KB of brackets): refused by depth, and the server lives on.
  for (const char* path : {"/api/graph", "/api/cook"}) {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    r = std::string(path) == "/api/graph" ? c.Put(path, deep, "application/json") : c.Post(path, deep, "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(r->body.find("the request body:1:129: JSON nested deeper than 128 levels"), std::string::npos)
        << path << ": " << r->body;
  }
  r = c.Get("/api/graph");
  ASSERT_TRUE(r) << "the server still answers";
  EXPECT_EQ(json::parse(r->body)["nodes"].size(), 3u) << "the open graph is untouched";
}

TEST_F(ServerTest, CrossSiteRebindingAndTokenlessRequestsAreRefused) {
  const std::string self = "127.0.0.1:" + std::to_string(port);
  ASSERT_EQ(server->token().size(), 32u);
  // A page on another site posting a "simple" request (no preflight), token or not.
  auto c = client();
  c.set_default_headers({{"X-Eddy-Token", server->token()}, {"Origin", "http://evil.example"}});
  auto r = c.Post("/api/graph/open", R"({"path": "graphs/small.eddy.json"})", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("Origin 'http://evil.example' is not this server's"), std::string::npos) << r->body;
  // DNS rebinding: the browser thinks it talks to evil.example.
  const std::string p = std::to_string(port);
  for (const std::string& host : std::vector<std::string>{"evil.example:" + p, "evil.example",
                                                          "localhost.evil.example:" + p,
                                                          "127.0.0.1:" + std::to_string(port + 1)}) {
    auto b = bare_client();
    b.set_default_headers({{"Host", host}, {"X-Eddy-Token", server->token()}});
    r = b.Get("/api/catalog");
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 403) << host;
    EXPECT_NE(r->body.find("Host '" + host + "' does not name this server"), std::string::npos) << r->body;
  }
  // No token, a wrong one: refused on what changes state or cooks, allowed on reads.
  auto bare = bare_client();
  r = bare.Post("/api/graph/open", R"({"path": "graphs/small.eddy.json"})", "application/json");
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("no token for POST /api/graph/open"), std::string::npos) << r->body;
  r = bare.Get("/api/geometry?node=tank&frame=1");
  EXPECT_EQ(r->status, 403) << "geometry cooks";
  bare.set_default_headers({{"X-Eddy-Token", std::string(32, '0')}});
  r = bare.Put("/api/graph", small_graph(0.05, 10), "application/json");
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("a wrong token"), std::string::npos) << r->body;
  r = bare_client().Get("/api/graph");
  EXPECT_EQ(r->status, 409) << "nothing refused above reached the graph: none is open";
  EXPECT_EQ(bare_client().Get("/api/catalog")->status, 200);
  // The server's own origin, by address or as localhost, with the token (header or query parameter).
  auto own = client();
  own.set_default_headers({{"X-Eddy-Token", server->token()}, {"Origin", "http://" + self}});
  r = own.Post("/api/graph/open", R"({"path": "graphs/small.eddy.json"})", "application/json");
  EXPECT_EQ(r->status, 200) << r->body;
  auto local = bare_client();
  local.set_default_headers({{"Host", "localhost:" + std::to_string(port)},
                             {"Origin", "http://localhost:" + std::to_string(port)}});
  r = local.Get("/api/geometry?node=tank&frame=1&token=" + server->token());
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST_F(ServerTest, TheTokenCanBeSwitchedOffButNotTheOriginCheck) {
  ServeOptions o;
  o.token = false;
  start(o);
  EXPECT_TRUE(server->token().empty());
  auto c = bare_client();
  auto r = c.Post("/api/graph/open", R"({"path": "graphs/small.eddy.json"})", "application/json");
  EXPECT_EQ(r->status, 200) << r->body;
  c.set_default_headers({{"Origin", "http://evil.example"}});
  r = c.Post("/api/cancel", "{}", "application/json");
  EXPECT_EQ(r->status, 403) << r->body;
}

TEST_F(ServerTest, TheEventStreamsAreBounded) {
  ServeOptions o;
  o.max_event_streams = 2;
  start(o);
  // Two streams open: a third is refused, and the server answers other requests.
  {
    EventReader a(port, [](const json&) { return false; });
    EventReader b(port, [](const json&) { return false; });
    auto r = bare_client().Get("/api/events");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_NE(r->body.find("too many event streams open (2)"), std::string::npos) << r->body;
    EXPECT_EQ(bare_client().Get("/api/catalog")->status, 200);
  }
  // The readers gone, their places come free (once the server's next
  // keep-alive, within a second, finds their connections closed).
  int status = 0;
  for (int k = 0; k < 50 && status != 200; ++k) {
    bare_client().Get(
        "/api/events", [&](const httplib::Response& res) { status = res.status; return false; },
        [](const char*, std::size_t) { return false; });
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 200) << "a stream opens again";
}

// The queue alone, without its worker: a flood of cook requests is refused
// past the bound (the routes answer the HttpError with its status, 429).
TEST(CookQueueBound, RequestsPastTheBoundAreRefused) {
  EventHub hub;
  HubObserver observer(hub);
  OpenGraph graph(registry(), CookOptions{}, observer);
  CookQueue jobs(graph, hub, 3);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(jobs.push("", {1, 2}).id, uint64_t(k + 1));
  try {
    jobs.push("", {1, 2});
    FAIL() << "a fourth job was queued";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status, 429);
    EXPECT_NE(std::string(e.what()).find("the cook queue is full (3 jobs waiting)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(jobs.status()["queued"], 3);
  EXPECT_EQ(jobs.cancel(), 3u);
  EXPECT_EQ(jobs.push("", {1, 2}).id, 4u) << "room again once the queue is emptied";
}

TEST_F(ServerTest, PathsOutsideTheRootAndOutputFolderAreRefused) {
  fs::create_directories(root.parent_path() / "eddy_outside");
  std::ofstream(root.parent_path() / "eddy_outside" / "x.eddy.json") << small_graph(0.05, 1);
  std::error_code ec;
  fs::create_directory_symlink(root.parent_path() / "eddy_outside", root / "link", ec);
  ASSERT_FALSE(ec) << ec.message();
  auto c = client();
  for (const std::string path : {"../eddy_outside/x.eddy.json", "/etc/passwd", "link/x.eddy.json",
                                 "graphs/../../eddy_outside/x.eddy.json"}) {
    auto r = c.Get(("/api/graphs/file?path=" + url_encode(path)).c_str());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << path << ": " << r->body;
    r = c.Post("/api/graph/open", json{{"path", path}}.dump(), "application/json");
    EXPECT_EQ(r->status, 403) << path;
  }
  auto r = c.Get("/api/graphs/file?path=notes.txt");
  EXPECT_EQ(r->status, 400) << "not a graph file";
  open_small();
  r = c.Post("/api/graph/save", R"({"path": "../escape.eddy.json"})", "application/json");
  EXPECT_EQ(r->status, 403);
  r = c.Post("/api/export", R"({"node": "solver", "frames": [1, 1], "path": "../../escape.ply"})", "application/json");
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_FALSE(fs::exists(root.parent_path() / "escape.eddy.json"));
  fs::remove_all(root.parent_path() / "eddy_outside");
}

TEST_F(ServerTest, CookStreamsEventsThenGeometryAndExport) {
  open_small();
  EventReader events(port, [](const json& e) { return e["event"] == "job_finished"; });
  auto c = client();
  auto r = c.Post("/api/cook", R"({"node": "solver", "frames": [1, 3]})", "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  const auto ev = events.wait();
  ASSERT_TRUE(events.done());
  int started = 0, finished = 0, frames = 0;
  for (const json& e : ev) {
    if (e["event"] == "node_started" && e["node"] == "solver") ++started;
    if (e["event"] == "node_finished" && e["node"] == "solver") {
      ++finished;
      EXPECT_GE(e["seconds"].get<double>(), 0.0);
      EXPECT_GT(e["bytes"].get<double>(), 0.0);
    }
    if (e["event"] == "frame_done") ++frames;
  }
  EXPECT_EQ(started, 3);
  EXPECT_EQ(finished, 3);
  EXPECT_EQ(frames, 3);
  EXPECT_FALSE(ev.back()["cancelled"].get<bool>());
  EXPECT_FALSE(ev.back()["failed"].get<bool>());

  r = c.Get("/api/status");
  const json st = json::parse(r->body);
  EXPECT_EQ(st["cached"]["solver"], json::parse("[[1, 3]]")) << r->body;

  // Geometry: the header, the count, P and the chosen attribute.
  r = c.Get("/api/geometry?node=solver&frame=3&attributes=v");
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string& g = r->body;
  ASSERT_GE(g.size(), 28u);
  EXPECT_EQ(g.substr(0, 4), "EDGY");
  uint32_t u[6];
  std::memcpy(u, g.data(), sizeof u);
  EXPECT_EQ(u[1], 1u);  // version
  EXPECT_EQ(u[2], 1u);  // points
  const uint32_t n = u[3];
  EXPECT_EQ(n, 64u);    // 4 x 4 x 4 at spacing 0.1 m
  EXPECT_EQ(u[5], 1u);  // one attribute
  // header 24 + P + (name length, "v" padded, type) + v
  EXPECT_EQ(g.size(), 24u + n * 12 + 4 + 4 + 4 + n * 12);
  r = c.Get("/api/geometry?node=solver&frame=3&attributes=nope");
  EXPECT_EQ(r->status, 400) << r->body;

  r = c.Post("/api/export", R"({"node": "solver", "frames": [2, 3], "path": "exports/water.$F4.ply"})",
             "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["files"].size(), 2u);
  EXPECT_TRUE(fs::exists(root / "out" / "exports" / "water.0002.ply"));
  EXPECT_TRUE(fs::exists(root / "out" / "exports" / "water.0003.ply"));
  r = c.Post("/api/export", R"({"node": "solver", "frames": [2, 3], "path": "exports/water.ply"})", "application/json");
  EXPECT_EQ(r->status, 400) << "a range needs a frame token: " << r->body;
}

TEST_F(ServerTest, ACookIsCancelledMidway) {
  // Longer: 512 particles over 200 frames.
  std::ofstream(root / "graphs" / "long.eddy.json") << small_graph(0.025, 200);
  auto c = client();
  ASSERT_EQ(c.Post("/api/graph/open", R"({"path": "graphs/long.eddy.json"})", "application/json")->status, 200);
  EventReader first(port, [](const json& e) { return e["event"] == "frame_done" && e["frame"] == 2; });
  ASSERT_EQ(c.Post("/api/cook", R"({"node": "solver", "frames": [1, 200]})", "application/json")->status, 200);
  first.wait();
  EventReader rest(port, [](const json& e) { return e["event"] == "job_finished"; });
  ASSERT_EQ(c.Post("/api/cancel", "", "application/json")->status, 200);
  const auto ev = rest.wait();
  ASSERT_FALSE(ev.empty());
  EXPECT_TRUE(ev.back()["cancelled"].get<bool>());
  int last = 0;
  for (const json& e : ev)
    if (e["event"] == "frame_done") last = e["frame"];
  EXPECT_LT(last, 200);
  const json st = json::parse(c.Get("/api/status")->body);
  EXPECT_TRUE(st["running"].is_null());
  // The engine takes new work after a cancel.
  EventReader again(port, [](const json& e) { return e["event"] == "job_finished"; });
  ASSERT_EQ(c.Post("/api/cook", R"({"node": "solver", "frames": [1, 1]})", "application/json")->status, 200);
  EXPECT_FALSE(again.wait().back()["cancelled"].get<bool>());
}

TEST_F(ServerTest, BodiesAreDrawnAsTheirShapesMesh) {
  const std::string graph = small_graph(0.05, 5, R"(,
    {"id": "crate", "type": "RigidBody", "params": {"size": [0.2, 0.2, 0.2]}},
    {"id": "sim", "type": "RigidBodySolver"})",
                                        R"(,
    {"from": "crate.bodies", "to": "sim.bodies"})");
  auto c = client();
  ASSERT_EQ(c.Put("/api/graph", graph, "application/json")->status, 200);
  const auto r = c.Get("/api/geometry?node=sim&frame=1&attributes=v");
  ASSERT_EQ(r->status, 200) << r->body;
  uint32_t head[6];
  std::memcpy(head, r->body.data(), sizeof head);
  EXPECT_EQ(head[2], 2u);   // a mesh
  EXPECT_EQ(head[3], 8u);   // a box's corners
  EXPECT_EQ(head[4], 12u);  // its six quads as triangles
}

TEST_F(ServerTest, AFailingNodeIsAnErrorEventAndTheServerLivesOn) {
  const std::string graph = small_graph(0.05, 5, R"(,
    {"id": "mesh", "type": "ReadMesh", "params": {"path": "missing/lemon.obj"}})");
  auto c = client();
  auto r = c.Put("/api/graph", graph, "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EventReader events(port, [](const json& e) { return e["event"] == "job_finished"; });
  ASSERT_EQ(c.Post("/api/cook", R"({"node": "mesh", "frames": [1, 2]})", "application/json")->status, 200);
  const auto ev = events.wait();
  bool error = false;
  for (const json& e : ev)
    if (e["event"] == "error") {
      error = true;
      EXPECT_EQ(e["node"], "mesh");
      EXPECT_NE(e["message"].get<std::string>().find("lemon.obj"), std::string::npos) << e.dump();
    }
  EXPECT_TRUE(error);
  EXPECT_TRUE(ev.back()["failed"].get<bool>());
  r = c.Get("/api/geometry?node=mesh&frame=1");
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(json::parse(r->body)["node"], "mesh");
  EXPECT_EQ(c.Get("/api/catalog")->status, 200);
}

TEST_F(ServerTest, ConcurrentRequestsAndAClientLeavingMidStream) {
  open_small();
  // A client opens the event stream and goes away after its first bytes.
  {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(5, 0);
    c.Get("/api/events", [](const char*, std::size_t) { return false; });
  }
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", port);
      for (int k = 0; k < 10; ++k) {
        auto a = c.Get("/api/status");
        auto b = c.Get("/api/graph");
        if (a && a->status == 200 && b && b->status == 200) ++ok;
      }
    });
  EventReader events(port, [](const json& e) { return e["event"] == "job_finished"; });
  auto c = client();
  ASSERT_EQ(c.Post("/api/cook", R"({"node": "solver", "frames": [1, 2]})", "application/json")->status, 200);
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
  EXPECT_FALSE(events.wait().empty());
}

}  // namespace
}  // namespace eddy::app
