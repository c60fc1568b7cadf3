import {spawn} from "node:child_process";
import {dirname, join} from "node:path";
import {createInterface} from "node:readline";
import {fileURLToPath} from "node:url";
import {freePort} from "./mosquitto.js";

// The test command's virtual environment (test/run-all.sh installs asyncua into it).
const PYTHON = fileURLToPath(new URL("../../.venv/bin/python", import.meta.url));
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "asyncua-server.py");

/** asyncua's OPC UA server (python) on a free loopback port: an implementation that shares no code with ours. */
export interface AsyncuaServer {
  readonly endpointUrl: string;
  /** Writes a variable of ns "urn:klaxon:test" (Boiler.Temperature, Boiler.Running); resolves once written. */
  set(name: string, value: number | boolean): Promise<void>;
  stop(): Promise<void>;
}

/**
 * None/None by default. `secure` serves only Basic256Sha256 SignAndEncrypt with the server's own
 * certificate made in `pkiDir`, letting in only the client certificate found at `trustFile`.
 * `user`: a session is anonymous or logs in with exactly that user name and password.
 */
export async function startAsyncuaServer(
  options: {port?: number; secure?: {pkiDir: string; trustFile: string}; user?: {name: string; password: string}} = {}
): Promise<AsyncuaServer> {
  const {secure, user} = options;
  const port = options.port ?? (await freePort());
  const args = [
    SCRIPT,
    String(port),
    ...(secure ? ["--secure", secure.pkiDir, "--trust", secure.trustFile] : []),
    ...(user ? ["--user", `${user.name}:${user.password}`] : [])
  ];
  const child = spawn(PYTHON, args, {stdio: ["pipe", "pipe", "pipe"]});
  const errors: string[] = [];
  child.stderr.on("data", (chunk: Buffer) => errors.push(chunk.toString()));
  const lines = createInterface({input: child.stdout})[Symbol.asyncIterator]();
  const nextLine = async (what: string): Promise<string> => {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      lines.next(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`asyncua server: no ${what}:\n${errors.join("")}`)), 30_000);
      })
    ]).finally(() => clearTimeout(timer));
    if (next.done) throw new Error(`asyncua server exited before ${what}:\n${errors.join("")}`);
    return next.value;
  };
  await nextLine("ready");
  return {
    endpointUrl: `opc.tcp://127.0.0.1:${port}/klaxon-test`,
    async set(name, value) {
      child.stdin.write(`set ${name} ${String(value)}\n`);
      await nextLine("ok");
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
    }
  };
}
