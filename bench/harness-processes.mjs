// The benches' child processes (spawned on 127.0.0.1 with fresh data directories, every one killed
// and every directory removed when the bench exits) and the loopback HTTP client that waits for them.

import {spawn} from "node:child_process";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {createServer} from "node:net";
import http from "node:http";
import {performance} from "node:perf_hooks";
import {KEEP_DATA, ROOT} from "./harness-env.mjs";

const START_TIMEOUT_MS = 20_000;

// ---------------------------------------------------------------- child processes

const children = new Set();
const dataDirs = [];

function freshDataDir(label) {
  const dir = mkdtempSync(join(tmpdir(), `klaxon-bench-${label}-`));
  dataDirs.push(dir);
  return dir;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Spawns a command; keeps the last 16 KiB of its output for error reports. */
function startChild(label, command, args, env) {
  const child = spawn(command, args, {cwd: ROOT, env: {...process.env, ...env}, stdio: ["ignore", "pipe", "pipe"]});
  const record = {label, child, output: "", exited: null};
  const keep = (chunk) => {
    record.output = (record.output + chunk.toString()).slice(-16_384);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  record.exit = new Promise((resolveExit) => {
    child.on("exit", (code, signal) => {
      record.exited = {code, signal};
      children.delete(record);
      resolveExit(record.exited);
    });
  });
  children.add(record);
  return record;
}

export async function stopChild(record, timeoutMs = 15_000) {
  if (record.exited) return record.exited;
  record.child.kill("SIGTERM");
  const timer = setTimeout(() => {
    if (!record.exited) {
      console.error(`  ${record.label}: no exit ${timeoutMs} ms after SIGTERM; sending SIGKILL`);
      record.child.kill("SIGKILL");
    }
  }, timeoutMs);
  const exited = await record.exit;
  clearTimeout(timer);
  return exited;
}

/** Stops a child that must shut down cleanly; a non-zero exit is a failed run. */
export async function stopCleanly(record) {
  const exited = await stopChild(record);
  if (exited.code !== 0)
    throw new Error(`${record.label} exited with ${JSON.stringify(exited)} on SIGTERM:\n${record.output}`);
}

function killAllChildren() {
  for (const record of children) {
    try {
      record.child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}

process.on("exit", killAllChildren);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    killAllChildren();
    process.exit(130);
  });
}

/** Runs a bench's main(): reports a crash with exit code 1, and always cleans up. */
export async function runBench(name, main) {
  try {
    await main();
  } catch (error) {
    console.error(`\n${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
    process.exitCode = 1;
  } finally {
    killAllChildren();
    if (KEEP_DATA) console.log(`\ndata directories kept: ${dataDirs.join(" ")}`);
    else for (const dir of dataDirs) rmSync(dir, {recursive: true, force: true});
  }
}

// ---------------------------------------------------------------- HTTP helpers (loopback only)

/** One request on loopback; a new connection each unless `agent` (an http.Agent) keeps one alive. */
export function request(port, method, path, {headers = {}, body, agent = false} = {}) {
  return new Promise((resolveResponse, reject) => {
    const payload =
      body === undefined ? undefined : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent,
        headers: {
          ...headers,
          ...(payload ? {"content-type": "application/json", "content-length": payload.length} : {})
        }
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () =>
          resolveResponse({status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8")})
        );
      }
    );
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** Polls `path` until it answers 200; returns ms since `startedAt`. */
async function waitReady(record, port, path, startedAt) {
  const deadline = startedAt + START_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (record.exited)
      throw new Error(`${record.label} exited during start (${JSON.stringify(record.exited)}):\n${record.output}`);
    try {
      const res = await request(port, "GET", path);
      if (res.status === 200) return performance.now() - startedAt;
    } catch {
      // not listening yet
    }
    await new Promise((resolveTimer) => setTimeout(resolveTimer, 5));
  }
  throw new Error(`${record.label} did not answer 200 on ${path} within ${START_TIMEOUT_MS} ms:\n${record.output}`);
}

/** Starts a subject with a fresh data dir; returns the record, port, dir and ms to first 200. */
export async function startSubject(subject) {
  const dataDir = freshDataDir(subject.label);
  const port = await freePort();
  const {file, args, env} = subject.command(port, dataDir);
  const extraEnv = subject.environment ? await subject.environment() : {};
  const startedAt = performance.now();
  const record = startChild(subject.label, file, args, {...env, ...extraEnv});
  const startMs = await waitReady(record, port, subject.readyPath, startedAt);
  return {record, port, dataDir, startMs};
}
