// Soak test of `eddy serve`: many mixed requests from several clients at
// once, with cooks and cancels interleaved, graph edits, geometry fetches,
// event streams opened and dropped, and hostile requests (deep JSON,
// cross-site, no token). Rounds of REQUESTS each; the server's resident
// memory is read after a warm-up and after each round: once the caches are
// full (the first round cooks both graph variants) it must stay flat.
// Reports that every request got an answer, and the answers by status. Not
// a timed test: run by `make bench`, or by hand:
//
//   node bench/soak_server.mjs [EDDY_BINARY] [REQUESTS] [ROUNDS]     (10000, 5)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const eddy = process.argv[2] ?? path.join(repo, "build", "bin", "eddy");
const total = Number(process.argv[3] ?? 10000);
const rounds = Number(process.argv[4] ?? 5);
const clients = 8;
const root = fs.mkdtempSync(path.join(os.tmpdir(), "eddy_soak_"));
const graph = (r, last) => ({
  format: "eddy-graph", version: 1, frame_range: [1, last], fps: 24,
  nodes: [
    { id: "tank", type: "ColliderBox", params: { mode: "container", center: [0.2, 0.2, 0.2], size: [0.4, 0.4, 0.4] } },
    { id: "water", type: "FluidBox", params: { center: [0.1, 0.15, 0.1], size: [0.16, 0.24, 0.16], particle_radius: r } },
    { id: "solver", type: "PBFSolver" },
  ],
  links: [
    { from: "tank.colliders", to: "water.colliders" },
    { from: "water.particles", to: "solver.particles" },
    { from: "tank.colliders", to: "solver.colliders" },
  ],
});
fs.writeFileSync(path.join(root, "soak.eddy.json"), JSON.stringify(graph(0.01, 24)));

const proc = spawn(eddy, ["serve", "--port", "0", "--root", root, "--threads", "2"]);
const url = await new Promise((resolve, reject) => {
  let text = "";
  proc.stdout.on("data", (d) => {
    text += d;
    const m = /(http:\/\/127\.0\.0\.1:\d+\/)\?token=(\w+)/.exec(text);
    if (m) resolve({ base: m[1].slice(0, -1), token: m[2] });
  });
  proc.on("exit", () => reject(new Error("eddy serve exited")));
});
const { base, token } = url;
const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${proc.pid}/status`, "utf8"))[1]);

const statuses = new Map();
let answered = 0, unanswered = 0;
async function request(method, p, body, headers = {}) {
  try {
    const res = await fetch(base + p, {
      method,
      headers: { "X-Eddy-Token": token, ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(120000),
    });
    await res.arrayBuffer();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    answered++;
    return res.status;
  } catch (e) {
    unanswered++;
    return 0;
  }
}
// An event stream read for a moment, then dropped.
async function stream() {
  const ctl = new AbortController();
  try {
    const res = await fetch(`${base}/api/events`, { signal: ctl.signal });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    answered++;
    const reader = res.body.getReader();
    await reader.read();
    ctl.abort();
  } catch {
    /* dropped on purpose */
  }
}

const deep = "[".repeat(100000) + "]".repeat(100000);
const mix = [
  () => request("GET", "/api/catalog"),
  () => request("GET", "/api/graphs"),
  () => request("GET", "/api/status"),
  () => request("GET", "/api/graph"),
  () => request("GET", `/api/geometry?node=solver&frame=${1 + Math.floor(Math.random() * 4)}&attributes=v`),
  () => request("GET", `/api/geometry?node=water&frame=1`),
  () => request("POST", "/api/cook", { frames: [1, 1 + Math.floor(Math.random() * 24)] }),
  () => request("POST", "/api/cancel", {}),
  () => request("PUT", "/api/graph", graph(Math.random() < 0.5 ? 0.01 : 0.012, 24)),
  () => request("POST", "/api/graph/open", { path: "soak.eddy.json" }),
  () => request("PUT", "/api/graph", deep),
  () => request("POST", "/api/cancel", "{}", { Origin: "http://evil.example" }),
  () => request("POST", "/api/cook", { frames: [1, 2] }, { "X-Eddy-Token": "wrong" }),
  () => request("GET", "/api/geometry?node=solver&frame=1x"),
  () => request("POST", "/api/export", { node: "../x", path: "../../etc/passwd" }),
  () => stream(),
];

await request("POST", "/api/graph/open", { path: "soak.eddy.json" });
// Warm-up: every kind of request once, and a cook to the end, before the first reading.
for (const f of mix) await f();
await request("POST", "/api/cook", { frames: [1, 24] });
while ((await (await fetch(`${base}/api/status`)).json()).running) await new Promise((r) => setTimeout(r, 200));
const rss = [rssKiB()];
const t0 = performance.now();
for (let round = 0; round < rounds; round++) {
  let issued = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (issued < total) {
      issued++;
      await mix[Math.floor(Math.random() * mix.length)]();
    }
  }));
  await request("POST", "/api/cancel", {});
  await new Promise((r) => setTimeout(r, 2000));
  rss.push(rssKiB());
}
const seconds = (performance.now() - t0) / 1e3;
proc.kill("SIGTERM");
fs.rmSync(root, { recursive: true, force: true });

const byStatus = [...statuses.entries()].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}: ${n}`).join(", ");
const mib = (k) => (k / 1024).toFixed(1);
console.log(`eddy serve soak: ${rounds} rounds of ${total} mixed requests from ${clients} clients in ${seconds.toFixed(0)} s`);
console.log(`  answered ${answered}, unanswered ${unanswered}; by status ${byStatus}`);
console.log(`  resident memory (MiB) after the warm-up and each round: ${rss.map(mib).join(", ")}; ` +
            `from the first round's end to the last: ${(((rss.at(-1) - rss[1]) / rss[1]) * 100).toFixed(1)} %`);
if (unanswered > 0) process.exitCode = 1;
