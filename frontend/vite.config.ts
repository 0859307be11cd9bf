/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The gateway listens on 2026 by default; override with PRONGHORN_GATEWAY_URL.
const gateway = process.env.PRONGHORN_GATEWAY_URL ?? "http://127.0.0.1:2026";

export default defineConfig({
  plugins: [react()],
  server: {
    host: "127.0.0.1",
    port: 5173,
    proxy: {
      // SSE must not be buffered; http-proxy streams by default.
      "/api": { target: gateway, changeOrigin: false },
      "/health": { target: gateway, changeOrigin: false },
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    // Hashed file names under assets/ so the gateway can cache them for a long time.
    assetsDir: "assets",
    rolldownOptions: {
      treeshake: {
        // The LangGraph SDK and LangChain core declare no `sideEffects`, so every module the
        // SDK's entry touches (LangSmith tracing, message classes) would land in the first
        // chunk beside the small Client the shell uses. Their modules are side-effect free.
        moduleSideEffects: (id: string) => !/node_modules\/(@langchain\/|langsmith\/)/.test(id),
      },
    },
  },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    css: false,
  },
});
