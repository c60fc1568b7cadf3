import {readdirSync, readFileSync, readlinkSync, realpathSync} from "node:fs";
import {join} from "node:path";

/** A process that has the modem's device open besides us. */
export interface PortHolder {
  pid: number;
  /** The process's name as the kernel keeps it (`/proc/<pid>/comm`), e.g. `ModemManager`. */
  name: string;
  /**
   * True when the process could not be seen holding the port (it belongs to another user) but is
   * the likely cause: a ModemManager running while the port is busy or the modem stops answering.
   */
  suspected?: true;
}

const PROC = "/proc";

/** The device a serial path stands for now: `/dev/serial/by-id/...` or `/dev/serial0` resolved. */
export function resolveDevice(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/**
 * Every other process with `device` open, found as lsof and fuser do: through the links in
 * `/proc/<pid>/fd`. Processes of another user cannot be looked into without privileges (the
 * service has none), so a root-owned ModemManager shows only through `runningProcessesNamed`.
 */
export function findPortHolders(device: string): PortHolder[] {
  const holders: PortHolder[] = [];
  for (const pid of processIds()) {
    if (pid === process.pid) continue;
    if (holdsDevice(pid, device)) holders.push({pid, name: processName(pid)});
  }
  return holders;
}

/** Processes whose name is `name` (readable for any user's process). */
export function runningProcessesNamed(name: string): number[] {
  return processIds().filter((pid) => processName(pid) === name);
}

function processIds(): number[] {
  try {
    return readdirSync(PROC)
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  } catch {
    return [];
  }
}

function holdsDevice(pid: number, device: string): boolean {
  const fdDir = join(PROC, String(pid), "fd");
  let fds: string[];
  try {
    fds = readdirSync(fdDir);
  } catch {
    // Gone meanwhile, or another user's: nothing to see.
    return false;
  }
  const targets = new Map(fds.map((fd) => [fd, linkTarget(join(fdDir, fd))]));
  if (![...targets.values()].includes(device)) return false;
  // The process that made a pseudo-terminal (socat or ser2net relaying a modem elsewhere, a
  // simulator) holds its master too: it provides the port rather than competing for it.
  const pty = /^\/dev\/pts\/(\d+)$/.exec(device)?.[1];
  return !(
    pty !== undefined && [...targets].some(([fd, target]) => target === "/dev/ptmx" && ptyIndex(pid, fd) === pty)
  );
}

function linkTarget(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

// The kernel names the pseudo-terminal a master fd belongs to in its fdinfo (`tty-index: 3`).
function ptyIndex(pid: number, fd: string): string | null {
  try {
    return /^tty-index:\s*(\d+)$/m.exec(readFileSync(join(PROC, String(pid), "fdinfo", fd), "utf8"))?.[1] ?? null;
  } catch {
    return null;
  }
}

function processName(pid: number): string {
  try {
    return readFileSync(join(PROC, String(pid), "comm"), "utf8").trim();
  } catch {
    return "?";
  }
}
