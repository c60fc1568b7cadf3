// The servers under test (Klaxon from a built main.js, run as the systemd unit runs it, and the
// baseline), the loopback SMTP sink Klaxon pages into, and Klaxon's side of a load run: its
// preparation (key, recipient, alert body) and the journal check afterwards.

import {existsSync, readFileSync} from "node:fs";
import {join, resolve} from "node:path";
import Database from "better-sqlite3";
import {SMTPServer} from "smtp-server";
import {CHANNEL, CPU_PROFILE_DIR, GATEWAY_EXTRA_FLAGS, ROOT} from "./harness-env.mjs";
import {request} from "./harness-processes.mjs";

export const GATEWAY_ENTRY = process.env.BENCH_GATEWAY
  ? resolve(process.env.BENCH_GATEWAY)
  : join(ROOT, "dist", "main.js");
const BASELINE_ENTRY = join(ROOT, "bench", "baseline-server.mjs");
const UNIT = readFileSync(join(ROOT, "systemd", "klaxon.service"), "utf8");
// The node flags the installed gateway runs with: those between node and main.js on the systemd unit's ExecStart line.
const GATEWAY_NODE_FLAGS = UNIT.match(/^ExecStart=\S+((?: --\S+)*) \S+main\.js$/m)[1]
  .split(" ")
  .filter(Boolean);
// The unit's environment apart from Klaxon's own settings (which each bench sets): NODE_ENV=production
// changes what the framework does at start-up (it builds the OpenAPI document then), so it counts.
const GATEWAY_RUNTIME_ENV = Object.fromEntries(
  [...UNIT.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)]
    .filter(([, name]) => !name.startsWith("KLAXON_"))
    .map(([, name, value]) => [name, value])
);
export const BODY_BYTES = 280;

// ---------------------------------------------------------------- the loopback SMTP sink

/**
 * Mail the sink took, over the whole bench (with storm grouping: one per step of the bench's storm),
 * and when the first mail since `firstAt` was last set to null arrived (ms since the epoch), and
 * when the first connection since `firstConnectAt` was set to null was opened (the page's SMTP
 * conversation began).
 */
export const mailSink = {received: 0, firstAt: null, firstConnectAt: null, server: null, port: 0};

/** Starts the sink once; the environment that points a Klaxon at it (none with BENCH_CHANNEL=none). */
async function mailEnvironment() {
  if (CHANNEL === "none") return {};
  if (!mailSink.server) {
    mailSink.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onConnect(_session, done) {
        mailSink.firstConnectAt ??= Date.now();
        done();
      },
      onData(stream, _session, done) {
        stream.resume();
        stream.on("end", () => {
          mailSink.received++;
          mailSink.firstAt ??= Date.now();
          done();
        });
      }
    });
    await new Promise((resolveListen) => mailSink.server.listen(0, "127.0.0.1", resolveListen));
    mailSink.server.server.unref();
    mailSink.port = mailSink.server.server.address().port;
  }
  return {
    KLAXON_SMTP_HOST: "127.0.0.1",
    KLAXON_SMTP_PORT: String(mailSink.port),
    KLAXON_SMTP_FROM: "klaxon-bench@example.com"
  };
}

/** One line for a bench's header: what the bench recipient's alerts do after they are accepted. */
export function describeChannel() {
  return CHANNEL === "email"
    ? "channel: the bench recipient's email goes to a loopback SMTP sink (storm grouping: the alerts share one page per step)"
    : "channel: none configured (BENCH_CHANNEL=none): each alert runs its whole chain at once, every step skipped (6 events per alert)";
}

// ---------------------------------------------------------------- subjects

/** Klaxon as a subject, run from a built main.js (`GATEWAY_ENTRY`, or another build to compare with). */
export function klaxonSubject(entry = GATEWAY_ENTRY, label = "klaxon") {
  return {
    label,
    readyPath: "/healthz",
    environment: mailEnvironment,
    command: (port, dataDir) => ({
      file: process.execPath,
      args: [
        ...GATEWAY_NODE_FLAGS,
        ...GATEWAY_EXTRA_FLAGS,
        ...(CPU_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${CPU_PROFILE_DIR}`] : []),
        entry
      ],
      env: {
        ...GATEWAY_RUNTIME_ENV,
        KLAXON_HOST: "127.0.0.1",
        KLAXON_PORT: String(port),
        KLAXON_DATA_DIR: dataDir,
        KLAXON_LOG_LEVEL: "warn",
        // The per-key limiter must not throttle the load.
        KLAXON_RATE_LIMIT_PER_SECOND: "1000000",
        KLAXON_RATE_LIMIT_BURST: "1000000",
        KLAXON_CONFIG: ""
      }
    }),
    journal: (dataDir) => join(dataDir, "journal.sqlite")
  };
}

/**
 * A server under test: how to spawn it (`command(port, dataDir)` gives the executable, its
 * arguments and environment), the path that answers 200 once it serves, and where its journal is.
 */
export const SUBJECTS = {
  klaxon: klaxonSubject(),
  baseline: {
    label: "baseline",
    readyPath: "/healthz",
    command: (port, dataDir) => ({
      file: process.execPath,
      args: [BASELINE_ENTRY],
      env: {BASELINE_PORT: String(port), BASELINE_DATA_DIR: dataDir}
    }),
    journal: (dataDir) => join(dataDir, "baseline.sqlite")
  }
};

export function assertGatewayBuilt() {
  if (!existsSync(GATEWAY_ENTRY))
    throw new Error(`${GATEWAY_ENTRY} is missing: run \`npm run build\` first (the npm bench scripts do)`);
}

// ---------------------------------------------------------------- Klaxon's side of a load run

export const SEND_PATH = "/api/v1/notifications/send";

/** Pads the message of `shell(message)` so the whole body is exactly `bytes` long. */
export function padBody(shell, head, bytes = BODY_BYTES) {
  let message = head;
  while (Buffer.byteLength(shell(message)) < bytes) message += "x";
  const body = shell(message.slice(0, message.length - (Buffer.byteLength(shell(message)) - bytes)));
  if (Buffer.byteLength(body) !== bytes) throw new Error(`cannot pad the body to ${bytes} bytes: ${body}`);
  return body;
}

export const ALERT_TEXT = "bench: disk /var/lib/postgresql on db-primary-01 is 97% full, writes will fail soon; ";

/** Klaxon's send body; `tag` (fixed width) makes each alert's message unique when wanted. */
export function alertBody(recipientUuid, tag = "") {
  return padBody(
    (message) =>
      JSON.stringify({recipient_uuid: recipientUuid, message: tag + message, priority: "high", source: "bench"}),
    ALERT_TEXT
  );
}

/** Reads the admin key the gateway wrote on first start and creates the bench recipient through the API. */
export async function prepareKlaxon(port, dataDir) {
  const keyFile = join(dataDir, "initial-admin-key");
  if (!existsSync(keyFile)) throw new Error(`the gateway wrote no ${keyFile}`);
  const key = readFileSync(keyFile, "utf8").trim();
  const res = await request(port, "POST", "/api/v1/recipients", {
    headers: {"X-API-Key": key},
    body: {name: "Bench", email: "bench@example.com"}
  });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`creating the bench recipient answered ${res.status}: ${res.text}`);
  return {headers: {"X-API-Key": key}, recipientUuid: JSON.parse(res.text).uuid};
}

/** Sends one request so a misconfigured target fails loudly before the load run. */
export async function probe(port, path, headers, body, expected) {
  const res = await request(port, "POST", path, {headers, body});
  if (res.status !== expected) throw new Error(`probe POST ${path} answered ${res.status}: ${res.text}`);
}

/** Row counts and notification ids of a stopped server's journal, opened read-only. */
export function countRows(dbFile) {
  const db = new Database(dbFile, {readonly: true, fileMustExist: true});
  try {
    const count = (table) => db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get().n;
    const ids = new Set(db.prepare("SELECT id FROM notifications").pluck().all());
    // Each accepted send commits exactly one escalation.started event; the escalation runner adds
    // step and attempt events later, so only that type is counted against the sends.
    const started = db.prepare("SELECT COUNT(*) AS n FROM events WHERE type = 'escalation.started'").get().n;
    return {notifications: count("notifications"), escalations: count("escalations"), events: started, ids};
  } finally {
    db.close();
  }
}
