import {spawn, type ChildProcess} from "node:child_process";
import {renameSync, rmSync} from "node:fs";
import {join} from "node:path";

// Every socat we start, so a crashed test run still kills them on exit.
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * A pseudo-terminal pair made by socat: `devicePath` is what the code under test opens as its
 * serial port, `peerPath` is the simulator's end. The device link appears only after `publish()`,
 * so the code under test cannot write before the simulator listens (socat creates links early).
 * `kill()` is an unplug; `start()` again is a re-plug on the same paths.
 */
export class PtyPair {
  private child: ChildProcess | null = null;

  constructor(readonly dir: string) {}

  get devicePath(): string {
    return join(this.dir, "modem");
  }

  get peerPath(): string {
    return join(this.dir, "peer");
  }

  private get pendingPath(): string {
    return join(this.dir, "modem.pending");
  }

  async start(): Promise<void> {
    const child = spawn(
      "socat",
      ["-d", "-d", `pty,raw,echo=0,link=${this.pendingPath}`, `pty,raw,echo=0,link=${this.peerPath}`],
      {stdio: ["ignore", "ignore", "pipe"]}
    );
    running.add(child);
    this.child = child;
    child.once("exit", () => running.delete(child));
    let stderr = "";
    // socat -d -d logs this line once both ptys (and their links) exist.
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("starting data transfer loop")) {
          child.stderr.off("data", onData);
          child.off("exit", onExit);
          resolve();
        }
      };
      const onExit = (code: number | null) =>
        reject(new Error(`socat exited (${code}) before the pty pair was ready: ${stderr}`));
      child.stderr.on("data", onData);
      child.once("exit", onExit);
      child.once("error", reject);
    });
    // Keep draining stderr so socat never blocks on a full pipe.
    child.stderr.resume();
  }

  /** Makes the device path appear, as udev would when the modem enumerates. */
  publish(): void {
    renameSync(this.pendingPath, this.devicePath);
  }

  async kill(): Promise<void> {
    rmSync(this.devicePath, {force: true});
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  }
}
