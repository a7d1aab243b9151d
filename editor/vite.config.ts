import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// `npm run build` writes dist/, which `eddy serve` serves; in development,
// `npx vite` proxies /api to a running `eddy serve` on its default port,
// as a request of the server's own origin (its Host and Origin checks:
// app/src/guard.h). Open the dev page with the server's ?token=... .
const server = "http://127.0.0.1:8188";
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 2000 },
  server: {
    proxy: {
      "/api": {
        target: server,
        changeOrigin: true,
        configure: (proxy) => proxy.on("proxyReq", (req) => req.removeHeader("origin")),
      },
    },
  },
});
