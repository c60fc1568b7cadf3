import {execFile} from "node:child_process";
import type {Logger} from "../lib/logger.js";

/** The part of systemd's environment the notify protocol uses (set by systemd for Type=notify units). */
export interface SystemdEnvironment {
  NOTIFY_SOCKET?: string;
  WATCHDOG_USEC?: string;
  WATCHDOG_PID?: string;
}

/**
 * Speaks systemd's sd_notify protocol (READY=1, WATCHDOG=1, STOPPING=1, STATUS=...).
 *
 * Node cannot send a unix datagram without a native module, so each message is handed to
 * `systemd-notify`, which ships with systemd itself. Its messages come from a child process,
 * hence `NotifyAccess=all` in the unit; since systemd 246 it waits until the manager has read
 * the message (a BARRIER=1 round trip), so the child exiting first cannot lose it.
 * Outside systemd (NOTIFY_SOCKET unset) every call does nothing.
 */
export class SystemdNotifier {
  constructor(
    private readonly environment: SystemdEnvironment,
    private readonly logger: Logger,
    private readonly command = "systemd-notify",
    private readonly pid = process.pid
  ) {}

  /** Reads the protocol's variables; they are systemd's, not Klaxon settings. */
  static fromEnvironment(logger: Logger, env: NodeJS.ProcessEnv = process.env): SystemdNotifier {
    return new SystemdNotifier(
      {NOTIFY_SOCKET: env.NOTIFY_SOCKET, WATCHDOG_USEC: env.WATCHDOG_USEC, WATCHDOG_PID: env.WATCHDOG_PID},
      logger
    );
  }

  get enabled(): boolean {
    return Boolean(this.environment.NOTIFY_SOCKET);
  }

  /**
   * How often to ping the watchdog: half of WatchdogSec, as sd_watchdog_enabled(3) advises, or
   * null when systemd runs no watchdog for this process.
   */
  get watchdogIntervalMs(): number | null {
    const usec = Number(this.environment.WATCHDOG_USEC);
    if (!this.enabled || !Number.isFinite(usec) || usec <= 0) return null;
    if (this.environment.WATCHDOG_PID && Number(this.environment.WATCHDOG_PID) !== this.pid) return null;
    return Math.max(1, Math.floor(usec / 2000));
  }

  ready(status: string): Promise<void> {
    return this.notify({READY: "1", STATUS: status});
  }

  watchdog(): Promise<void> {
    return this.notify({WATCHDOG: "1"});
  }

  stopping(): Promise<void> {
    return this.notify({STOPPING: "1", STATUS: "stopping"});
  }

  /** Sends one message. Never throws: a lost notification must not take the gateway down. */
  notify(assignments: Record<string, string>): Promise<void> {
    const socket = this.environment.NOTIFY_SOCKET;
    if (!socket) return Promise.resolve();
    const args = Object.entries(assignments).map(([name, value]) => `${name}=${value.replace(/\n/g, " ")}`);
    return new Promise((resolve) => {
      execFile(this.command, args, {env: {NOTIFY_SOCKET: socket}, timeout: 10_000}, (error, _stdout, stderr) => {
        if (error)
          this.logger.warn("systemd notification failed", {
            message: Object.keys(assignments).join(","),
            error: stderr.trim() || error.message
          });
        resolve();
      });
    });
  }
}
