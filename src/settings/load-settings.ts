import {readFileSync} from "node:fs";
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
    if (!Number.isFinite(value) || String(raw).trim() === "") throw new SettingsError(`${where}: expected a number, got ${JSON.stringify(raw)}`);
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
  if (typeof raw === "object") throw new SettingsError(`${where}: expected a single value`);
  return String(raw);
}

function readConfigFile(path: string): Tree {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SettingsError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed = parseYaml(text) ?? {};
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
      if (!value || typeof value !== "object") throw new SettingsError(`config file ${path}: "${here.join(".")}" must be a section`);
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
    if (choices && !choices.includes(String(value))) throw new SettingsError(`${path.join(".")}: must be one of ${choices.join(", ")}, got "${value}"`);
    out[key] = value;
  }
  return out;
}

function validate(settings: Settings): void {
  if (!Number.isInteger(settings.port) || settings.port < 0 || settings.port > 65535) throw new SettingsError(`port: must be 0..65535, got ${settings.port}`);
  if (settings.rate_limit.per_second <= 0 || settings.rate_limit.burst < 1) throw new SettingsError("rate_limit: per_second must be > 0 and burst >= 1");
  if (settings.public_url && !/^https?:\/\//.test(settings.public_url)) throw new SettingsError(`public_url: must be an absolute http(s) URL`);
  if (!settings.data_dir) throw new SettingsError("data_dir: must not be empty");
}

/** The `device:inode` of the journal stream systemd connected stdout/stderr to (JOURNAL_STREAM), or null outside systemd. */
export function journalStream(env: NodeJS.ProcessEnv = process.env): string | null {
  return env.JOURNAL_STREAM || null;
}

/** Defaults, then the config file (KLAXON_CONFIG), then the environment, which wins. The only reader of process.env. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadedSettings {
  const configFile = env.KLAXON_CONFIG || null;
  const file = configFile ? readConfigFile(configFile) : {};
  if (configFile) rejectUnknown(file, DEFAULT_SETTINGS, [], configFile);
  const settings = merge(DEFAULT_SETTINGS, file, env, []) as unknown as Settings;
  validate(settings);
  return {settings, configFile};
}

/** Settings for code that builds them in-process (tests, benchmarks): defaults plus overrides, validated. */
export function settingsWith(overrides: {[K in keyof Settings]?: Settings[K] extends object ? Partial<Settings[K]> : Settings[K]}): Settings {
  const base = structuredClone(DEFAULT_SETTINGS) as Settings;
  for (const [key, value] of Object.entries(overrides)) {
    const current = (base as unknown as Tree)[key];
    (base as unknown as Tree)[key] = current && typeof current === "object" ? {...current, ...(value as Tree)} : value;
  }
  validate(base);
  return base;
}
