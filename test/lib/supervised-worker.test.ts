import {execFile} from "node:child_process";
import {mkdirSync, mkdtempSync, readFileSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {dirname, join, resolve} from "node:path";
import {pathToFileURL} from "node:url";
import {promisify} from "node:util";
import {transformSync} from "@swc/core";
import {afterEach, describe, expect, it} from "vitest";
import {createLogger} from "../../src/lib/logger.js";
import {
  SupervisedWorker,
  workerModule,
  type SupervisedWorkerOptions,
  type WorkerCrash
} from "../../src/lib/supervised-worker.js";
import {eventually} from "../support/eventually.js";
import type {MisbehavingWork} from "../support/misbehaving.worker.js";

const run = promisify(execFile);
const FIXTURE = workerModule(new URL("../support/x.test.ts", import.meta.url).href, "./misbehaving.worker");

/** A supervisor of the misbehaving worker that records its events, crashes and log lines. */
function supervise(options: Partial<SupervisedWorkerOptions<string>> = {}) {
  const events: string[] = [];
  const crashes: WorkerCrash[] = [];
  const lines: string[] = [];
  const worker = new SupervisedWorker<MisbehavingWork, string>({
    name: "test-parser",
    module: FIXTURE,
    data: {greeting: "parsed"},
    onEvent: (event) => events.push(event),
    onCrash: (crash) => crashes.push(crash),
    logger: createLogger("info", (line) => lines.push(line)),
    heartbeatMs: 25,
    hangAfterMs: 300,
    backoff: {firstMs: 20, maxMs: 1_000, stableMs: 60_000},
    ...options
  });
  started.push(worker);
  return {worker, events, crashes, lines};
}
const started: SupervisedWorker<MisbehavingWork, string>[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((worker) => worker.stop()));
});

/** Posts an echo and waits for its answer: the worker (first or restarted) is serving. */
async function serves(worker: SupervisedWorker<MisbehavingWork, string>, events: string[], text: string) {
  await eventually("a running worker", () => worker.stats().running, Boolean);
  expect(worker.post({do: "echo", text})).toBe(true);
  await eventually("the echo", () => events.includes(`parsed ${text}`), Boolean);
}

describe("SupervisedWorker", () => {
  it("hands work to a TypeScript worker under vitest and its events back", async () => {
    const {worker, events} = supervise();
    await worker.start();
    await serves(worker, events, "one");
    expect(worker.stats()).toMatchObject({running: true, restarts: 0, dropped: 0, inFlight: 0});
  });

  it("ends a worker that throws, rejects, hangs or eats memory; counts, logs and restarts each", async () => {
    // One supervisor through all four, so the file starts one worker per crash rather than two.
    const {worker, events, crashes, lines} = supervise({
      resourceLimits: {maxOldGenerationSizeMb: 16},
      backoff: {firstMs: 20, maxMs: 20, stableMs: 60_000}
    });
    await worker.start();
    const cases = [
      ["throw", "throw", /Unknown type '3'/],
      ["reject", "throw", /async parser bug/],
      ["hang", "hang", /exit code/],
      ["eat", "memory", /memory/i]
    ] as const;
    for (const [index, [what, kind, detail]] of cases.entries()) {
      worker.post({do: what});
      await eventually(
        "the crash",
        () => crashes.length,
        (count) => count === index + 1,
        10_000
      );
      expect(crashes[index]).toMatchObject({name: "test-parser", kind, inFlight: 1, restartInMs: 20});
      expect(crashes[index].detail).toMatch(detail);
      expect(lines.some((line) => line.includes("a supervised parser worker ended") && line.includes(kind))).toBe(true);
      await serves(worker, events, `after ${what}`);
    }
    expect(worker.stats()).toMatchObject({
      restarts: 4,
      lostInCrash: 4,
      crashes: {throw: 2, hang: 1, memory: 1, exit: 0},
      lastCrash: {kind: "memory"}
    });
  });

  it("backs off more after each crash and drops work while no worker runs", async () => {
    const {worker, events, crashes} = supervise({backoff: {firstMs: 100, maxMs: 200, stableMs: 60_000}});
    await worker.start();
    for (const expected of [100, 200]) {
      await eventually("a running worker", () => worker.stats().running, Boolean);
      worker.post({do: "throw"});
      await eventually(
        "the crash",
        () => crashes.at(-1)?.restartInMs,
        (pause) => pause === expected
      );
      expect(worker.post({do: "echo", text: "lost"})).toBe(false);
      crashes.length = 0;
    }
    await serves(worker, events, "back");
    expect(worker.stats()).toMatchObject({restarts: 2, dropped: 2, crashes: {throw: 2}});
  });

  it("drops work beyond maxInFlight rather than queueing without bound", async () => {
    const {worker} = supervise({maxInFlight: 2});
    await worker.start();
    worker.post({do: "hang"});
    worker.post({do: "echo", text: "queued"});
    expect(worker.post({do: "echo", text: "one too many"})).toBe(false);
    expect(worker.stats()).toMatchObject({inFlight: 2, dropped: 1});
  });

  it("refuses to start when the worker module does not load", async () => {
    const broken = new URL("broken.worker.ts", pathToFileURL(mkdtempSync(join(tmpdir(), "klaxon-sw-")) + "/"));
    writeFileSync(broken, "throw new Error('cannot load');\n");
    const {worker} = supervise({module: broken});
    await expect(worker.start()).rejects.toThrow(/ended before it was ready.*cannot load/);
  });
});

// The same worker file must load however the gateway runs: from TypeScript under `npm start`'s
// loader, and as JavaScript from the build (dist/), where no TypeScript loader exists.
describe("SupervisedWorker outside vitest", () => {
  const root = resolve(import.meta.dirname, "../..");
  const script = (supervisorUrl: string, callerUrl: string) => `
    import {SupervisedWorker, workerModule} from ${JSON.stringify(supervisorUrl)};
    const worker = new SupervisedWorker({
      name: "t", module: workerModule(${JSON.stringify(callerUrl)}, "./misbehaving.worker"), data: {greeting: "parsed"},
      logger: {error: (m) => console.error(m)}, onEvent: (event) => { console.log(event); void worker.stop(); }
    });
    await worker.start();
    worker.post({do: "echo", text: "outside"});
  `;

  it("loads a .ts worker under npm start's loader", async () => {
    const dir = mkdtempSync(join(tmpdir(), "klaxon-sw-"));
    const file = join(dir, "run.ts");
    const caller = pathToFileURL(join(root, "test/support/x.ts")).href;
    writeFileSync(file, script(pathToFileURL(join(root, "src/lib/supervised-worker.ts")).href, caller));
    const {stdout} = await run(process.execPath, ["--import", "@swc-node/register/esm-register", file], {
      cwd: root,
      timeout: 30_000
    });
    expect(stdout.trim()).toBe("parsed outside");
  });

  it("loads the .js worker beside the built supervisor", async () => {
    const dist = mkdtempSync(join(tmpdir(), "klaxon-sw-dist-"));
    for (const source of ["src/lib/supervised-worker.ts", "test/support/misbehaving.worker.ts"]) {
      const {code} = transformSync(readFileSync(join(root, source), "utf8"), {
        filename: source,
        jsc: {parser: {syntax: "typescript"}, target: "es2022"},
        module: {type: "es6"}
      });
      mkdirSync(dirname(join(dist, source)), {recursive: true});
      writeFileSync(join(dist, source.replace(/\.ts$/, ".js")), code);
    }
    const file = join(dist, "test/support/run.mjs");
    writeFileSync(file, script("../../src/lib/supervised-worker.js", pathToFileURL(file).href));
    const {stdout} = await run(process.execPath, [file], {cwd: dist, timeout: 30_000});
    expect(stdout.trim()).toBe("parsed outside");
  });
});
