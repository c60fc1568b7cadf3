import {spawn, type ChildProcess} from "node:child_process";
import {join} from "node:path";

const ROOT = join(import.meta.dirname, "../..");

/** A gateway process as `npm start` runs it, from its spawn on, and its log lines so far. */
export interface LaunchedGateway {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the exit code (null when a signal ended it) once its output is read to the end. */
  exited: Promise<number | null>;
  /** Resolves with the URL once it logs "gateway serving"; rejects if it exits or is slower than the limit. */
  serving: Promise<string>;
}

/** How to run it beyond the environment: arguments to main, and the umask and open-files limit it starts under (through sh). */
export interface LaunchOptions {
  args?: string[];
  umask?: string;
  /** `ulimit -n`: the soft and hard limit on open files. */
  openFiles?: number;
  /** Leads a process group of its own (with its children, Litestream), so a test can kill the whole group as a power cut does. */
  ownGroup?: boolean;
}

/**
 * How long a start may take before the test calls it hung: a start compiles the sources with SWC,
 * 2-3 s alone but over 15 s on a 2-core machine busy with another whole-gateway test.
 */
export const START_LIMIT_MS = 45_000;

/**
 * Spawns `src/main.ts` with npm start's command on 127.0.0.1 and a free port, the given data dir
 * and extra environment (which wins), and collects its output line by line.
 */
export function launchGatewayProcess(
  dataDir: string,
  env: Record<string, string> = {},
  startLimitMs = START_LIMIT_MS,
  options: LaunchOptions = {}
): LaunchedGateway {
  const command = [
    process.execPath,
    "--import",
    "@swc-node/register/esm-register",
    "src/main.ts",
    ...(options.args ?? [])
  ];
  // With a umask or a limit, sh sets them and execs node in its place, so the child is still the gateway itself.
  const prelude = [
    ...(options.umask === undefined ? [] : [`umask ${options.umask}`]),
    ...(options.openFiles === undefined ? [] : [`ulimit -n ${options.openFiles}`])
  ];
  const [file, ...args] = prelude.length
    ? ["/bin/sh", "-c", `${prelude.join(" && ")} && exec "$@"`, "sh", ...command]
    : command;
  const child = spawn(file, args, {
    cwd: ROOT,
    env: {...process.env, KLAXON_HOST: "127.0.0.1", KLAXON_PORT: "0", KLAXON_DATA_DIR: dataDir, ...env},
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.ownGroup === true
  });
  const lines: string[] = [];
  // "close", not "exit": by then every line the process wrote has been collected.
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const serving = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gateway did not start within ${startLimitMs} ms:\n${lines.join("\n")}`)),
      startLimitMs
    );
    // Per stream, the unfinished end of the last chunk: a log line may arrive in two pieces.
    const collector = () => {
      let partial = "";
      return (chunk: Buffer) => {
        const pieces = (partial + chunk.toString()).split("\n");
        partial = pieces.pop() ?? "";
        for (const line of pieces.filter(Boolean)) {
          lines.push(line);
          if (line.includes('"gateway serving"')) {
            clearTimeout(timer);
            resolve(JSON.parse(line).url);
          }
        }
      };
    };
    child.stdout.on("data", collector());
    child.stderr.on("data", collector());
    child.on("exit", () => {
      clearTimeout(timer);
      reject(new Error(`gateway exited:\n${lines.join("\n")}`));
    });
  });
  // A caller that only waits for the exit (a start meant to fail, a kill during start) need not handle this.
  serving.catch(() => undefined);
  return {child, lines, exited, serving};
}

/** A gateway process that is serving, and where. */
export interface GatewayProcess extends LaunchedGateway {
  url: string;
}

/** Starts the gateway process and resolves once it serves, with the URL it serves on. */
export async function startGatewayProcess(
  dataDir: string,
  env: Record<string, string> = {},
  startLimitMs = START_LIMIT_MS,
  options: LaunchOptions = {}
): Promise<GatewayProcess> {
  const gateway = launchGatewayProcess(dataDir, env, startLimitMs, options);
  return {...gateway, url: await gateway.serving};
}

/** How a start meant to be refused ended: its exit code, its output, and whether it served after all. */
export interface RefusedStart {
  code: number | null;
  output: string;
  served: boolean;
}

/** Launches a start that should be refused; one that serves instead is killed at once (and reported), not waited on. */
export async function launchExpectingRefusal(
  dataDir: string,
  env: Record<string, string> = {},
  options: LaunchOptions = {}
): Promise<RefusedStart> {
  const gateway = launchGatewayProcess(dataDir, env, START_LIMIT_MS, options);
  const served = await Promise.race([
    gateway.serving.then(
      () => true,
      () => false
    ),
    gateway.exited.then(() => false)
  ]);
  if (served) gateway.child.kill("SIGKILL");
  return {code: await gateway.exited, output: gateway.lines.join("\n"), served};
}
