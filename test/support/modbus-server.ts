import {spawn, type ChildProcess} from "node:child_process";
import {createInterface} from "node:readline";
import {fileURLToPath} from "node:url";
import {freePort} from "./mosquitto.js";

const PYTHON = fileURLToPath(new URL("../../.venv/bin/python", import.meta.url));
const SCRIPT = fileURLToPath(new URL("modbus-server.py", import.meta.url));

// Every server we start, so a crashed test run still ends them on exit.
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export type ModbusTableCode = "co" | "di" | "hr" | "ir";

/** Where the independent Modbus device listens: TCP on loopback, or RTU on a serial port (a pty). */
export type ModbusServerPlace = {tcpPort?: number} | {serialPort: string; baudRate: number; parity: "N" | "E" | "O"};

/**
 * pymodbus's server (test/support/modbus-server.py) as an independent Modbus device: every table
 * holds addresses 0-199, all 0, until `set`. `stop()` is an unplugged device; `start()` plugs it
 * back in on the same port (with its values as they were set).
 */
export class ModbusServer {
  private child: ChildProcess | null = null;
  private answers: ((line: string) => void)[] = [];
  private readonly values: string[] = [];

  private constructor(
    private readonly place: {tcpPort: number} | {serialPort: string; baudRate: number; parity: string},
    private readonly unitId: number
  ) {}

  static async start(place: ModbusServerPlace = {}, unitId = 1): Promise<ModbusServer> {
    const fixed = "serialPort" in place ? place : {tcpPort: place.tcpPort ?? (await freePort())};
    const server = new ModbusServer(fixed, unitId);
    await server.start();
    return server;
  }

  get port(): number {
    return "tcpPort" in this.place ? this.place.tcpPort : 0;
  }

  async start(): Promise<void> {
    const where =
      "tcpPort" in this.place
        ? ["--tcp", String(this.place.tcpPort)]
        : ["--serial", this.place.serialPort, "--baud", String(this.place.baudRate), "--parity", this.place.parity];
    const child = spawn(PYTHON, [SCRIPT, ...where, "--unit", String(this.unitId)], {stdio: ["pipe", "pipe", "pipe"]});
    this.child = child;
    running.add(child);
    child.once("exit", () => running.delete(child));
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const lines = createInterface({input: child.stdout});
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the Modbus server did not start: ${stderr}`)), 15_000);
      child.once("exit", (code) => reject(new Error(`the Modbus server exited (${code}): ${stderr}`)));
      lines.on("line", (line) => {
        if (line === "ready") {
          clearTimeout(timer);
          resolve();
        } else this.answers.shift()?.(line);
      });
    });
    // Plugged back in: the values it had.
    for (const command of this.values) await this.command(command);
  }

  /** A bit (0/1) or a raw 16-bit register. */
  set(table: ModbusTableCode, address: number, value: number): Promise<void> {
    const command = `set ${table} ${address} ${value}`;
    this.values.push(command);
    return this.command(command);
  }

  /** Reads covering the address answer Modbus exception `code`, until `heal()`. */
  fail(table: ModbusTableCode, address: number, code: number): Promise<void> {
    return this.command(`fail ${table} ${address} ${code}`);
  }

  heal(): Promise<void> {
    return this.command("heal");
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  }

  private command(line: string): Promise<void> {
    const child = this.child;
    if (!child) throw new Error("the Modbus server is stopped");
    return new Promise<void>((resolve) => {
      this.answers.push(() => resolve());
      child.stdin!.write(`${line}\n`);
    });
  }
}
