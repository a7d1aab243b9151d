// Editor benchmark: a 1M-particle frame fetched over loopback from
// `eddy serve` (binary geometry: P and v), and the viewport's frame time
// with it in Chromium (sphere impostors and screen-space fluid). Run by
// `make bench` after the editor is built. Chromium here renders with
// SwiftShader on the CPU: the frame times are this machine's software GL,
// not a GPU's.
//
//   node bench/bench_editor.mjs [EDDY_BINARY]
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "../editor/node_modules/playwright-core/index.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const eddy = process.argv[2] ?? path.join(repo, "build", "bin", "eddy");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "eddy_bench_editor_"));
// 100^3 particles: a 1 m cube at radius 5 mm.
fs.writeFileSync(path.join(root, "million.eddy.json"), JSON.stringify({
  format: "eddy-graph", version: 1, frame_range: [1, 1], fps: 24,
  nodes: [{ id: "water", type: "FluidBox", params: { center: [0, 0.5, 0], size: [1, 1, 1], particle_radius: 0.005, jitter: 0.2 } }],
  links: [],
}));

// Scripted requests below: no token asked for.
const proc = spawn(eddy, ["serve", "--port", "0", "--root", root, "--static", path.join(repo, "editor", "dist"),
                          "--no-token"]);
const port = await new Promise((resolve, reject) => {
  let text = "";
  proc.stdout.on("data", (d) => {
    text += d;
    const m = /:(\d+)\//.exec(text);
    if (m) resolve(Number(m[1]));
  });
  proc.on("exit", () => reject(new Error("eddy serve exited")));
});
const base = `http://127.0.0.1:${port}`;
try {
  await fetch(`${base}/api/graph/open`, { method: "POST", body: JSON.stringify({ path: "million.eddy.json" }) });
  // The first request cooks the FluidBox; then fetches are of the cached frame.
  await (await fetch(`${base}/api/geometry?node=water&frame=1&attributes=v`)).arrayBuffer();
  const times = [];
  let bytes = 0;
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    const buf = await (await fetch(`${base}/api/geometry?node=water&frame=1&attributes=v`)).arrayBuffer();
    times.push(performance.now() - t0);
    bytes = buf.byteLength;
  }
  times.sort((a, b) => a - b);
  const ms = times[2];
  console.log(`1M-particle frame over loopback (Node's fetch): ${(bytes / 1e6).toFixed(1)} MB (P and v) in ${ms.toFixed(0)} ms median of 5 ` +
              `(${(bytes / 1e6 / (ms / 1e3)).toFixed(0)} MB/s)`);

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--use-angle=swiftshader"],
  });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(`${base}/`);
  // Before the viewport holds the million particles (software GL would keep both cores busy).
  const inBrowser = await page.evaluate(async () => {
    const t = [];
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      await (await fetch("/api/geometry?node=water&frame=1&attributes=v")).arrayBuffer();
      t.push(performance.now() - t0);
    }
    return t.sort((a, b) => a - b)[1];
  });
  console.log(`the same frame fetched by the editor in Chromium: ${inBrowser.toFixed(0)} ms median of 3`);
  await page.getByTestId("example-million.eddy.json").click();
  await page.getByTestId("node-water").waitFor();
  await page.getByTestId("cook-first").fill("1");
  await page.getByTestId("cook-last").fill("1");
  await page.getByTestId("cook").click();
  // Polled by timer: with a million points each animation frame is slow in software GL.
  await page.waitForFunction(() => document.querySelector('[data-testid="message"]')?.textContent === "cook finished",
                             null, { polling: 500, timeout: 60000 }).catch(async (e) => { console.log("message:", await page.getByTestId("message").textContent()); throw e; });
  await page.waitForTimeout(5000);  // the geometry arrives and uploads
  const frameTime = () => page.evaluate(() => new Promise((resolve) => {
    const t = [];
    const step = (now) => {
      t.push(now);
      if (t.length < 11) requestAnimationFrame(step);
      else resolve((t[t.length - 1] - t[0]) / (t.length - 1));
    };
    requestAnimationFrame(step);
  }));
  const spheres = await frameTime();
  await page.getByTestId("render-mode").click();
  await page.waitForTimeout(1000);
  const fluid = await frameTime();
  console.log(`viewport with 1M particles in Chromium (SwiftShader, ${(await page.getByTestId("viewport").boundingBox()).width.toFixed(0)} px wide): ` +
              `${spheres.toFixed(0)} ms per frame as spheres, ${fluid.toFixed(0)} ms as screen-space fluid`);
  await browser.close();
} finally {
  proc.kill("SIGINT");
  fs.rmSync(root, { recursive: true, force: true });
}
