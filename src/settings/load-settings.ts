import {readFileSync} from "node:fs";
import {isIPv4} from "node:net";
import {parse as parseYaml} from "yaml";
import {DEFAULT_SETTINGS, SETTING_CHOICES, type Settings} from "./defaults.js";

export class SettingsError extends Error {
  override name = "SettingsError";
}

type Leaf = string | number | boolean;
type Tree = Record<string, unknown>;

/** Where a setting came from, so `klaxon doctor` and the startup log can explain a value. */
export interface LoadedSettings {
  settings: Settings;
  configFile: string | null;
}

function envName(path: string[]): string {
  return "KLAXON_" + path.join("_").toUpperCase();
}

function coerce(raw: unknown, example: Leaf, where: string): Leaf {
  if (typeof example === "number") {
    const value = typeof raw === "number" ? raw : Number(String(raw).trim());
    if (!Number.isFinite(value) || String(raw).trim() === "")
      throw new SettingsError(`${where}: expected a number, got ${JSON.stringify(raw)}`);
    return value;
  }
  if (typeof example === "boolean") {
    if (typeof raw === "boolean") return raw;
    const text = String(raw).trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(text)) return true;
    if (["false", "0", "no", "off", ""].includes(text)) return false;
    throw new SettingsError(`${where}: expected true or false, got ${JSON.stringify(raw)}`);
  }
  if (raw === null || raw === undefined) return "";
  if (typeof raw === "string" || typeof raw === "number" || typeof raw === "boolean") return String(raw);
  throw new SettingsError(`${where}: expected a single value`);
}

function readConfigFile(path: string): Tree {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SettingsError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed: unknown = parseYaml(text) ?? {};
    if (typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("top level must be a mapping");
    return parsed as Tree;
  } catch (error) {
    throw new SettingsError(`config file ${path} is not valid YAML: ${(error as Error).message}`);
  }
}

function rejectUnknown(file: Tree, defaults: Tree, prefix: string[], path: string): void {
  for (const [key, value] of Object.entries(file)) {
    const here = [...prefix, key];
    if (!(key in defaults)) throw new SettingsError(`config file ${path}: unknown setting "${here.join(".")}"`);
    const expected = defaults[key];
    if (expected && typeof expected === "object") {
      if (!value || typeof value !== "object")
        throw new SettingsError(`config file ${path}: "${here.join(".")}" must be a section`);
      rejectUnknown(value as Tree, expected as Tree, here, path);
    }
  }
}

function merge(defaults: Tree, file: Tree, env: NodeJS.ProcessEnv, prefix: string[]): Tree {
  const out: Tree = {};
  for (const [key, example] of Object.entries(defaults)) {
    const path = [...prefix, key];
    if (example && typeof example === "object") {
      out[key] = merge(example as Tree, (file[key] as Tree) ?? {}, env, path);
      continue;
    }
    const name = envName(path);
    let value = example as Leaf;
    if (file[key] !== undefined) value = coerce(file[key], example as Leaf, path.join("."));
    if (env[name] !== undefined) value = coerce(env[name], example as Leaf, name);
    const choices = SETTING_CHOICES[path.join(".")];
    if (choices && !choices.includes(String(value)))
      throw new SettingsError(`${path.join(".")}: must be one of ${choices.join(", ")}, got "${value}"`);
    out[key] = value;
  }
  return out;
}

/**
 * KLAXON_* variables that are not settings but are read by other tools sharing the environment:
 * the gateway starts with them set, and every other KLAXON_* name is a typo.
 */
const OTHER_TOOLS_VARIABLES = [
  // This loader: where the config file is.
  "KLAXON_CONFIG",
  // The klaxon CLI (docs/clients.md) and its build.
  "KLAXON_URL",
  "KLAXON_API_KEY",
  "KLAXON_RETRIES",
  "KLAXON_CLI_VERSION",
  // install.sh.
  "KLAXON_NODE",
  // The test and benchmark tooling, whose gateway processes inherit its environment.
  "KLAXON_CRASH_SEED",
  "KLAXON_CRASH_CYCLES",
  "KLAXON_BINARY",
  "KLAXON_SCREENSHOTS",
  "KLAXON_PYTHON",
  "KLAXON_NODE24",
  "KLAXON_MODEL_SEED",
  "KLAXON_MODEL_RUNS"
];

function settingVariables(defaults: Tree, prefix: string[]): string[] {
  return Object.entries(defaults).flatMap(([key, example]) =>
    example && typeof example === "object"
      ? settingVariables(example as Tree, [...prefix, key])
      : [envName([...prefix, key])]
  );
}

/** Levenshtein distance: how many one-character edits turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({length: b.length + 1}, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

// A typo in the environment must stop the start as it does in the file, not leave a default in place.
function rejectUnknownVariables(env: NodeJS.ProcessEnv): void {
  const known = [...settingVariables(DEFAULT_SETTINGS, []), ...OTHER_TOOLS_VARIABLES];
  for (const name of Object.keys(env)
    .filter((key) => key.startsWith("KLAXON_"))
    .sort()) {
    if (known.includes(name)) continue;
    const closest = known.reduce((best, candidate) =>
      editDistance(name, candidate) < editDistance(name, best) ? candidate : best
    );
    throw new SettingsError(
      `unknown environment variable ${name}: did you mean ${closest}? (every setting and its variable: config/klaxon.yaml)`
    );
  }
}

function validate(settings: Settings): void {
  if (!Number.isInteger(settings.port) || settings.port < 0 || settings.port > 65535)
    throw new SettingsError(`port: must be 0..65535, got ${settings.port}`);
  if (settings.rate_limit.per_second <= 0 || settings.rate_limit.burst < 1)
    throw new SettingsError("rate_limit: per_second must be > 0 and burst >= 1");
  if (settings.public_url && !/^https?:\/\//.test(settings.public_url))
    throw new SettingsError(`public_url: must be an absolute http(s) URL`);
  const http = settings.http;
  if (!Number.isInteger(http.max_connections) || http.max_connections < 1)
    throw new SettingsError(`http.max_connections: must be a whole number >= 1, got ${http.max_connections}`);
  if (!Number.isInteger(http.max_connections_per_address) || http.max_connections_per_address < 1)
    throw new SettingsError(
      `http.max_connections_per_address: must be a whole number >= 1, got ${http.max_connections_per_address}`
    );
  if (!Number.isInteger(http.max_requests_in_flight) || http.max_requests_in_flight < 1)
    throw new SettingsError(
      `http.max_requests_in_flight: must be a whole number >= 1, got ${http.max_requests_in_flight}`
    );
  if (!(http.headers_timeout_seconds > 0 && http.headers_timeout_seconds <= http.request_timeout_seconds))
    throw new SettingsError("http: headers_timeout_seconds must be > 0 and at most request_timeout_seconds");
  if (!(http.keep_alive_timeout_seconds > 0)) throw new SettingsError("http.keep_alive_timeout_seconds: must be > 0");
  if (!settings.data_dir) throw new SettingsError("data_dir: must not be empty");
  const joinDelay = settings.storm.max_join_delay_seconds;
  if (!Number.isInteger(joinDelay) || joinDelay < 0 || joinDelay > 600)
    throw new SettingsError(`storm.max_join_delay_seconds: must be a whole number 0..600, got ${joinDelay}`);
  const snmp = settings.snmp;
  if (!Number.isInteger(snmp.trap_port) || snmp.trap_port < 0 || snmp.trap_port > 65535)
    throw new SettingsError(`snmp.trap_port: must be 0 (off) or a port 1..65535, got ${snmp.trap_port}`);
  if (!isIPv4(snmp.trap_address))
    throw new SettingsError(
      `snmp.trap_address: must be an IPv4 address (0.0.0.0: every interface), got "${snmp.trap_address}"`
    );
  const deadline = settings.paging.first_attempt_deadline_seconds;
  if (!Number.isInteger(deadline) || deadline < 1)
    throw new SettingsError(`paging.first_attempt_deadline_seconds: must be a whole number >= 1, got ${deadline}`);
  validateReplication(settings.replication);
  validateInboundEmail(settings.inbound_email);
}

function validateInboundEmail(email: Settings["inbound_email"]): void {
  for (const key of ["max_sessions_per_address", "session_max_seconds", "auth_failures_per_minute"] as const)
    if (!(Number.isInteger(email[key]) && email[key] >= 1))
      throw new SettingsError(`inbound_email.${key}: must be a whole number >= 1, got ${email[key]}`);
}

function validateReplication(replication: Settings["replication"]): void {
  if (replication.role === "off") return;
  const missing = (["peer", "replica", "incoming"] as const).filter((key) => !replication[key]);
  if (missing.length)
    throw new SettingsError(
      `replication: role ${replication.role} needs ${missing.map((key) => `replication.${key}`).join(", ")}`
    );
  if (!/^https?:\/\//.test(replication.peer))
    throw new SettingsError("replication.peer: must be an absolute http(s) URL");
  if (replication.replica.startsWith("sftp://") && !(replication.sftp_key_file && replication.sftp_host_key))
    throw new SettingsError(
      "replication: an sftp replica needs replication.sftp_key_file and replication.sftp_host_key"
    );
  if (!(replication.takeover_after_seconds >= 1 && replication.lag_alarm_seconds >= 1))
    throw new SettingsError("replication: takeover_after_seconds and lag_alarm_seconds must be at least 1");
}

/** The `device:inode` of the journal stream systemd connected stdout/stderr to (JOURNAL_STREAM), or null outside systemd. */
export function journalStream(env: NodeJS.ProcessEnv = process.env): string | null {
  return env.JOURNAL_STREAM || null;
}

/**
 * Defaults, then the config file (KLAXON_CONFIG), then the environment, which wins; an unknown
 * KLAXON_* variable is refused like an unknown key in the file. The only reader of process.env.
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadedSettings {
  rejectUnknownVariables(env);
  const configFile = env.KLAXON_CONFIG || null;
  const file = configFile ? readConfigFile(configFile) : {};
  if (configFile) rejectUnknown(file, DEFAULT_SETTINGS, [], configFile);
  const settings = merge(DEFAULT_SETTINGS, file, env, []) as unknown as Settings;
  validate(settings);
  return {settings, configFile};
}

/** Settings for code that builds them in-process (tests, benchmarks): defaults plus overrides, validated. */
export function settingsWith(overrides: {
  [K in keyof Settings]?: Settings[K] extends object ? Partial<Settings[K]> : Settings[K];
}): Settings {
  const base = structuredClone<Settings>(DEFAULT_SETTINGS);
  for (const [key, value] of Object.entries(overrides)) {
    const current = (base as unknown as Tree)[key];
    (base as unknown as Tree)[key] = current && typeof current === "object" ? {...current, ...(value as Tree)} : value;
  }
  validate(base);
  return base;
}
