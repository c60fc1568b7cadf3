// The bench settings read from the environment (each documented in bench/harness.mjs), checked once.

import {dirname, join, resolve} from "node:path";
import {fileURLToPath} from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

export function envNumber(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

export const LOAD = {
  seconds: envNumber("BENCH_SECONDS", 10),
  warmupSeconds: envNumber("BENCH_WARMUP_SECONDS", 2),
  connections: Math.round(envNumber("BENCH_CONNECTIONS", 50))
};
export const KEEP_DATA = process.env.BENCH_KEEP_DATA === "1";
export const CHANNEL = process.env.BENCH_CHANNEL ?? "email";
if (!["email", "none"].includes(CHANNEL))
  throw new Error(`BENCH_CHANNEL must be email or none, got ${JSON.stringify(CHANNEL)}`);
export const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : null;
// Extra node flags for the gateway, after the unit's (e.g. `--trace-gc`, or a V8 setting being weighed).
export const GATEWAY_EXTRA_FLAGS = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
