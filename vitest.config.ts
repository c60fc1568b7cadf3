import {availableParallelism} from "node:os";
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
    // The run's release cache: the install tests package each architecture's release once.
    globalSetup: ["test/support/release-cache.ts"],
    pool: "forks",
    // Vitest's default is one fork per core but one, which on a 2-core machine (CI's, and the
    // boxes') runs the files one at a time. Most files wait on processes, sockets and timers rather
    // than compute, so two forks halve the suite's wall time there (1208 s to 644 s measured).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A test's time limit catches a hang, not slowness: on a 2-core machine busy with two forks
    // (CI's), a whole-gateway test that takes 10 s alone took over 20 s beside the crash suite and
    // failed a run that was otherwise green. Timings are measured by benchmarks, never by limits.
    testTimeout: 60000,
    // expect.poll waits for something to become true (a page rendered after a scrypt-hashed
    // sign-in, a socket answered): its 1 s default failed such waits on a busy 2-core machine. A
    // longer limit costs nothing when the condition comes, and still fails when it never does.
    expect: {poll: {timeout: 20000}},
    hookTimeout: 90000
  }
});
