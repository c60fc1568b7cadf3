// `node bench/journal-check.bench.mjs`: how long the start's `PRAGMA quick_check` and the doctor's
// `PRAGMA integrity_check` take on a big journal (BENCH_JOURNAL_MB, default 1024). The journal is
// filled with rows shaped like alerts (a text body, a dedup key, a time) under two indexes, as the
// notifications and events tables are; the figure is each pragma's time over the whole file, first
// with the file in the page cache (a restart) and, when BENCH_DROP_CACHES=1 and this runs as root,
// with it dropped (a boot). Not a test: it prints. BENCH_KEEP_DATA=1 keeps the file.
import Database from "better-sqlite3";
import {mkdtempSync, rmSync, statSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {performance} from "node:perf_hooks";

const targetBytes = Number(process.env.BENCH_JOURNAL_MB ?? 1024) * 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "klaxon-journal-check-"));
const path = join(dir, "journal.sqlite");

const db = new Database(path);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec(`
  CREATE TABLE alerts (id INTEGER PRIMARY KEY, uuid TEXT NOT NULL, dedup_key TEXT, created_at TEXT NOT NULL, body TEXT NOT NULL) STRICT;
  CREATE UNIQUE INDEX alerts_uuid ON alerts(uuid);
  CREATE INDEX alerts_by_key ON alerts(dedup_key, created_at);
`);
const insert = db.prepare("INSERT INTO alerts (uuid, dedup_key, created_at, body) VALUES (?, ?, ?, ?)");
const fill = db.transaction((from, count) => {
  for (let index = from; index < from + count; index++) {
    const body = `alert ${index}: ` + "boiler 3 pressure high, line 2 stopped; ".repeat(12);
    insert.run(
      crypto.randomUUID(),
      `plc-${index % 5000}`,
      new Date(1_700_000_000_000 + index * 1000).toISOString(),
      body
    );
  }
});
const filling = performance.now();
let rows = 0;
for (;;) {
  fill(rows, 20_000);
  rows += 20_000;
  db.pragma("wal_checkpoint(TRUNCATE)");
  if (statSync(path).size >= targetBytes) break;
}
db.close();
const bytes = statSync(path).size;
console.log(
  `filled ${(bytes / 2 ** 20).toFixed(0)} MiB, ${rows} rows, in ${((performance.now() - filling) / 1000).toFixed(1)} s`
);

function timed(pragma) {
  const reader = new Database(path, {readonly: true});
  const started = performance.now();
  const result = reader.pragma(pragma, {simple: true});
  const seconds = (performance.now() - started) / 1000;
  reader.close();
  return {seconds, result};
}

function dropCaches() {
  if (process.env.BENCH_DROP_CACHES !== "1") return false;
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "3\n");
    return true;
  } catch {
    return false;
  }
}

for (const pragma of ["quick_check", "integrity_check"]) {
  const warm = timed(pragma);
  console.log(`${pragma}, file in the page cache: ${warm.seconds.toFixed(2)} s (${warm.result})`);
  if (dropCaches()) {
    const cold = timed(pragma);
    console.log(`${pragma}, caches dropped: ${cold.seconds.toFixed(2)} s (${cold.result})`);
  }
}
if (process.env.BENCH_KEEP_DATA === "1") console.log(`kept ${path}`);
else rmSync(dir, {recursive: true, force: true});
