import {spawn, type ChildProcess} from "node:child_process";
import {closeSync, constants, copyFileSync, openSync, renameSync, rmSync} from "node:fs";
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
 * `kill()` is an unplug; `start()` again is a re-plug on the same device path; `replace()` is a
 * USB re-enumeration: a new pair, the device link moved to it, the old pair left silent.
 */
export class PtyPair {
  private child: ChildProcess | null = null;
  // Pairs replaced by a re-enumeration, and programs holding the port: ended with the current pair.
  private readonly replaced: ChildProcess[] = [];
  private readonly holders = new Set<ChildProcess>();
  // Each pair gets links of its own, so a new pair can exist beside the one it replaces.
  private generation = 0;

  constructor(readonly dir: string) {}

  get devicePath(): string {
    return join(this.dir, "modem");
  }

  get peerPath(): string {
    return join(this.dir, `peer.${this.generation}`);
  }

  private get pendingPath(): string {
    return join(this.dir, `modem.pending.${this.generation}`);
  }

  async start(): Promise<void> {
    this.generation += 1;
    this.child = await this.spawnPair();
  }

  /**
   * A new pair beside the current one; `publish()` then moves the device link to it, as udev
   * re-points a by-id link when the modem comes back as another ttyUSB. The old pair stays until
   * `kill()`, as the old tty lingers, silent, while a process still holds it open.
   */
  async replace(): Promise<void> {
    if (this.child) this.replaced.push(this.child);
    this.generation += 1;
    this.child = await this.spawnPair();
  }

  /**
   * Another program opening the device (ModemManager probing a new modem): a process named
   * `name` that holds `path` (the device unless told otherwise) open until `release()`, read by nobody.
   */
  async hold(name: string, path = this.devicePath): Promise<{pid: number; release(): Promise<void>}> {
    // The kernel names a process after its executable: a copy of sleep called `name`.
    const executable = join(this.dir, name);
    copyFileSync("/bin/sleep", executable);
    const fd = openSync(path, constants.O_RDWR | constants.O_NOCTTY);
    const child = spawn(executable, ["600"], {stdio: [fd, "ignore", "ignore"]});
    closeSync(fd);
    running.add(child);
    this.holders.add(child);
    child.once("exit", () => {
      running.delete(child);
      this.holders.delete(child);
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    return {pid: child.pid!, release: () => stopChild(child)};
  }

  private async spawnPair(): Promise<ChildProcess> {
    const child = spawn(
      "socat",
      ["-d", "-d", `pty,raw,echo=0,link=${this.pendingPath}`, `pty,raw,echo=0,link=${this.peerPath}`],
      {stdio: ["ignore", "ignore", "pipe"]}
    );
    running.add(child);
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
    return child;
  }

  /** Makes the device path appear, as udev would when the modem enumerates. */
  publish(): void {
    renameSync(this.pendingPath, this.devicePath);
  }

  async kill(): Promise<void> {
    rmSync(this.devicePath, {force: true});
    const children = [...this.holders, ...this.replaced.splice(0), ...(this.child ? [this.child] : [])];
    this.child = null;
    for (const child of children) await stopChild(child);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
