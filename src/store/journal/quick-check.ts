import {Worker} from "node:worker_threads";
import {createRequire} from "node:module";

// Plain CommonJS, as the checkpointer's worker (checkpointer.ts): its own read-only connection, so
// the main thread serves while SQLite reads every page. A pragma that throws (a page it cannot
// parse at all) is a finding too.
const WORKER_SOURCE = `
const {parentPort, workerData} = require("node:worker_threads");
const Database = require(workerData.betterSqlite3);
let findings;
try {
  const db = new Database(workerData.path, {readonly: true, fileMustExist: true});
  try {
    findings = db.prepare("PRAGMA quick_check(5)").pluck().all();
  } finally {
    db.close();
  }
} catch (error) {
  if (!String(error && error.code).match(/^SQLITE_(CORRUPT|NOTADB)/)) throw error;
  findings = [String(error.message)];
}
parentPort.postMessage(findings.length === 1 && findings[0] === "ok" ? null : findings.join("; "));
`;

/**
 * SQLite's page-level self-check of the journal at `path` (b-tree structure, free list, page
 * counts; not index contents, which `integrity_check` adds), on a worker thread: resolves with
 * null when it finds nothing, else its first findings on one line. About 9 s a GB on a busy
 * 2-core box (docs/benchmarks.md).
 */
export function quickCheckOffThread(path: string): Promise<string | null> {
  const betterSqlite3 = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER_SOURCE, {eval: true, workerData: {path, betterSqlite3}});
  worker.unref();
  return new Promise((resolve, reject) => {
    worker.once("message", (findings: string | null) => resolve(findings));
    worker.once("error", reject);
    worker.once("exit", (code) =>
      reject(new Error(`journal quick_check worker ended (exit ${code}) without an answer`))
    );
  });
}
