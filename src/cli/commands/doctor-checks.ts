import {accessSync, constants, openSync, readSync, closeSync, statSync} from "node:fs";
import {join, resolve} from "node:path";
import nodemailer from "nodemailer";
import type {Settings} from "../../settings/defaults.js";
import {waitingWords} from "../../domain/notification.js";
import type {PlanWarning} from "../../domain/plan-coverage.js";
import type {Channel} from "../../domain/vocabulary.js";

/** The result of one check; `skip` when the thing checked is not configured. */
export interface CheckResult {
  name: string;
  status: "ok" | "warn" | "fail" | "skip";
  detail: string;
}

const CHECK_TIMEOUT_MS = 5_000;
const SQLITE_HEADER = "SQLite format 3\u0000";

const check = (name: string, status: CheckResult["status"], detail: string): CheckResult => ({name, status, detail});

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(3, "0");
}

/** The data dir holds the journal, the config store with key hashes, and the initial admin key: nobody else may read it. */
export function checkDataDir(settings: Settings): CheckResult[] {
  const dir = resolve(settings.data_dir);
  let mode: number;
  try {
    const stat = statSync(dir);
    if (!stat.isDirectory()) return [check("data dir", "fail", `${dir} is not a directory`)];
    mode = stat.mode;
  } catch {
    return [check("data dir", "fail", `${dir} does not exist (set data_dir or KLAXON_DATA_DIR)`)];
  }
  const results = [
    mode & 0o077
      ? check("data dir", "fail", `${dir} is open to other users (mode ${octal(mode)}); run: chmod 700 ${dir}`)
      : check("data dir", "ok", `${dir} (mode ${octal(mode)})`)
  ];
  const keyFile = join(dir, "initial-admin-key");
  try {
    const keyMode = statSync(keyFile).mode;
    if (keyMode & 0o077)
      results.push(
        check(
          "admin key file",
          "fail",
          `${keyFile} is readable by other users (mode ${octal(keyMode)}); run: chmod 600 ${keyFile}`
        )
      );
  } catch {
    // Absent once the operator has stored the key elsewhere and deleted the file: nothing to check.
  }
  return results;
}

/** Node 22 and 24 call node:sqlite experimental and say so on stderr; the doctor's table is where its words go. */
async function loadSqlite(): Promise<typeof import("node:sqlite")> {
  const emitWarning = Object.getOwnPropertyDescriptor(process, "emitWarning");
  process.emitWarning = () => undefined;
  try {
    return await import("node:sqlite");
  } finally {
    if (emitWarning) Object.defineProperty(process, "emitWarning", emitWarning);
  }
}

/**
 * SQLite's full self-check (every page, and every index against its table): slower than the
 * start's quick_check (about 100 s a GB on a busy 2-core box, docs/benchmarks.md), so it is here.
 * Read-only: it runs beside a serving gateway.
 */
async function integrityCheck(path: string): Promise<CheckResult> {
  try {
    const {DatabaseSync} = await loadSqlite();
    const db = new DatabaseSync(path, {readOnly: true});
    try {
      const rows = db.prepare("PRAGMA integrity_check(5)").all() as Array<{integrity_check: string}>;
      const findings = rows.map((row) => row.integrity_check);
      return findings.join() === "ok"
        ? check("journal", "ok", `${path} passes integrity_check`)
        : check("journal", "fail", `${path} is damaged (integrity_check: ${findings.join("; ")}); restore a backup`);
    } finally {
      db.close();
    }
  } catch (error) {
    // SQLITE_CORRUPT, SQLITE_NOTADB: pages so damaged that the check itself stops on them.
    const damaged = [11, 26].includes(((error as {errcode?: number}).errcode ?? 0) & 0xff);
    const words = (error as Error).message;
    return damaged
      ? check("journal", "fail", `${path} is damaged (integrity_check: ${words}); restore a backup`)
      : check("journal", "fail", `${path} cannot be checked (${words})`);
  }
}

export async function checkJournal(settings: Settings): Promise<CheckResult> {
  const path = join(resolve(settings.data_dir), "journal.sqlite");
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return check(
      "journal",
      "fail",
      code === "ENOENT"
        ? `${path} not found (has the gateway started with this data dir?)`
        : `${path} cannot be read (${code})`
    );
  }
  const header = Buffer.alloc(SQLITE_HEADER.length);
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  return header.toString("latin1") === SQLITE_HEADER
    ? integrityCheck(path)
    : check("journal", "fail", `${path} is not a SQLite database`);
}

export function checkModemPort(settings: Settings): CheckResult {
  const port = settings.modem.port;
  if (!port) return check("modem port", "skip", "no modem configured (modem.port)");
  try {
    const stat = statSync(port);
    if (!stat.isCharacterDevice()) return check("modem port", "fail", `${port} is not a serial device`);
    accessSync(port, constants.R_OK | constants.W_OK);
    return check("modem port", "ok", `${port} exists and is readable and writable (profile ${settings.modem.profile})`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return check("modem port", "fail", `${port} does not exist (is the modem plugged in?)`);
    return check(
      "modem port",
      "fail",
      `${port} cannot be opened for reading and writing (${code}); is this user in the dialout group?`
    );
  }
}

/** Logs in to the SMTP server the way the email channel will, without sending anything. */
export async function checkSmtp(settings: Settings): Promise<CheckResult> {
  const smtp = settings.smtp;
  if (!smtp.host) return check("smtp", "skip", "no SMTP server configured (smtp.host)");
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.user ? {user: smtp.user, pass: smtp.password} : undefined,
    connectionTimeout: CHECK_TIMEOUT_MS,
    greetingTimeout: CHECK_TIMEOUT_MS,
    socketTimeout: CHECK_TIMEOUT_MS
  });
  try {
    await transport.verify();
    return check(
      "smtp",
      "ok",
      `${smtp.host}:${smtp.port} accepted the connection${smtp.user ? ` and the login of ${smtp.user}` : ""}`
    );
  } catch (error) {
    return check("smtp", "fail", `${smtp.host}:${smtp.port}: ${(error as Error).message}`);
  } finally {
    transport.close();
  }
}

/** Asks the Bot API who the token belongs to (getMe); the token itself never appears in the result. */
export async function checkTelegram(settings: Settings): Promise<CheckResult> {
  const {bot_token: token, api_url: apiUrl} = settings.telegram;
  if (!token) return check("telegram", "skip", "no bot token configured (telegram.bot_token)");
  try {
    const response = await fetch(`${apiUrl.replace(/\/$/, "")}/bot${token}/getMe`, {
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS)
    });
    const body = (await response.json().catch(() => null)) as {
      ok?: boolean;
      result?: {username?: string};
      description?: string;
    } | null;
    if (response.ok && body?.ok)
      return check("telegram", "ok", `the token belongs to @${body.result?.username ?? "?"} (${apiUrl})`);
    return check(
      "telegram",
      "fail",
      `${apiUrl} refused the token: ${response.status} ${body?.description ?? response.statusText}`
    );
  } catch (error) {
    const cause = (error as {cause?: {code?: string}}).cause?.code;
    return check("telegram", "fail", `cannot reach ${apiUrl}: ${cause ?? (error as Error).message}`);
  }
}

interface Readiness {
  ready?: boolean;
  journal?: {can_commit?: boolean; schema_version?: number; error?: string | null};
  channels?: Array<{channel: string; available: boolean; reason: string | null}>;
  outbox?: {pending?: number};
  counts?: {outbox_pending?: number};
  undeliverable?: {
    count: number;
    reasons: Array<{channel: Channel | null; reason: string; notifications: number; reached?: number}>;
  };
  plan_warnings?: PlanWarning[];
}

// Which setting turns a channel on: a channel whose setting is empty is not expected to work.
const CHANNEL_SETTING: Record<string, (settings: Settings) => string> = {
  telegram_voice: (s) => s.telegram.bot_token,
  voice_call: (s) => s.modem.port,
  sms: (s) => s.modem.port,
  email: (s) => s.smtp.host
};

/** Open alerts waiting for a channel: each reason is the fix (configure SMTP, check the modem). */
function undeliverableCheck(undeliverable: Readiness["undeliverable"]): CheckResult | null {
  // An older gateway does not report it; -1 means its journal cannot be read, which the journal check names.
  if (!undeliverable || undeliverable.count < 0) return null;
  if (undeliverable.count === 0) return check("undeliverable", "ok", "every open alert can reach someone");
  // An older gateway does not count the alerts that paged someone: they then read as reaching nobody.
  const reasons = undeliverable.reasons.map(
    (entry) =>
      `${waitingWords({...entry, reached: entry.reached ?? 0})} (${entry.channel ? `${entry.channel}, ` : ""}${entry.notifications} waiting)`
  );
  return check("undeliverable", "fail", reasons.join("; "));
}

/**
 * The running gateway's own view: /healthz, then /readyz with the journal and each channel (with
 * `apiKey`, the details; without, what /readyz tells anyone).
 */
export async function checkGateway(
  settings: Settings,
  baseUrl: string,
  apiKey: string | undefined,
  readFrom: string
): Promise<CheckResult[]> {
  const at = (path: string) => new URL(path, baseUrl.replace(/\/?$/, "/")).toString();
  try {
    const health = await fetch(at("healthz"), {signal: AbortSignal.timeout(CHECK_TIMEOUT_MS)});
    if (health.status !== 200) return [check("gateway", "fail", `${baseUrl}/healthz answered ${health.status}`)];
  } catch (error) {
    const cause = (error as {cause?: {code?: string}}).cause?.code;
    return [check("gateway", "fail", `no gateway answers at ${baseUrl} (${cause ?? (error as Error).message})`)];
  }
  let readiness: Readiness;
  let status: number;
  try {
    const response = await fetch(at("readyz"), {
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      headers: apiKey ? {"X-API-Key": apiKey} : {}
    });
    status = response.status;
    readiness = (await response.json()) as Readiness;
  } catch (error) {
    return [check("gateway", "fail", `${baseUrl}/readyz did not answer with JSON: ${(error as Error).message}`)];
  }
  const results = [
    check(
      "gateway",
      status === 200 ? "ok" : "fail",
      `${baseUrl} is serving${status === 200 ? " and ready" : `, but not ready (${status})`}`
    )
  ];
  const journal = readiness.journal;
  results.push(
    journal?.can_commit
      ? check(
          "gateway journal",
          "ok",
          `can commit (schema ${journal.schema_version ?? "?"}), ${readiness.counts?.outbox_pending ?? readiness.outbox?.pending ?? 0} webhook deliveries pending`
        )
      : check("gateway journal", "fail", `cannot commit: ${journal?.error ?? "unknown reason"}`)
  );
  const undeliverable = undeliverableCheck(readiness.undeliverable);
  if (undeliverable) results.push(undeliverable);
  // Targets some priority would page on no channel, and contacts for channels this box lacks.
  for (const warning of readiness.plan_warnings ?? []) results.push(check("plans", "warn", warning.detail));
  const unseen: string[] = [];
  for (const channel of readiness.channels ?? []) {
    const configured = CHANNEL_SETTING[channel.channel]?.(settings) ?? "";
    const name = `channel ${channel.channel}`;
    if (channel.available) results.push(check(name, "ok", "available"));
    else results.push(check(name, configured ? "fail" : "skip", channel.reason ?? "unavailable"));
    if (channel.available && !configured) unseen.push(channel.channel);
  }
  // The gateway runs a channel these settings lack: the checks below test another configuration.
  if (unseen.length)
    results.push(
      check(
        "config mismatch",
        "warn",
        `the gateway at ${baseUrl} has ${unseen.join(", ")} working, but the settings read here (${readFrom}) do not configure ${unseen.length === 1 ? "it" : "them"}: run with KLAXON_CONFIG set to the gateway's config file (or --config FILE) so the checks test what it runs`
      )
    );
  return results;
}
