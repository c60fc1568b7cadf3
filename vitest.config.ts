import swc from "unplugin-swc";
import {defineConfig} from "vitest/config";

// SWC, not esbuild: Ts.ED reads decorator metadata at run time, and esbuild emits none
// (validation would then be silently off).
export default defineConfig({
  plugins: [
    swc.vite({
      jsc: {
        parser: {syntax: "typescript", decorators: true},
        transform: {legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false},
        target: "es2022"
      }
    })
  ],
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 20000,
    hookTimeout: 30000
  }
});
