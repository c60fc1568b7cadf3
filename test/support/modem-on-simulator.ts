import {afterEach} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";
import {Modem, type ModemOptions} from "../../src/modem/modem.js";
import {ModemSimulator, type Dialect, type SimulatorScript} from "./modem-simulator.js";

/** The number the modem tests dial and text. */
export const NUMBER = "+4915112345678";

/** A started `Modem` on a simulator, with the log lines it wrote. */
export interface ModemOnSimulator {
  simulator: ModemSimulator;
  modem: Modem;
  logLines: string[];
}

/**
 * For a test file: stops every modem and simulator after each test, and returns the function that
 * starts one. Short timeouts: the simulator answers within milliseconds.
 */
export function useModemOnSimulator(): (
  dialect: Dialect,
  script?: Partial<SimulatorScript>,
  options?: Partial<ModemOptions>
) => Promise<ModemOnSimulator> {
  const started: {modem: Modem; simulator: ModemSimulator}[] = [];
  afterEach(async () => {
    for (const item of started.splice(0)) {
      await item.modem.stop();
      await item.simulator.stop();
    }
  });
  return async (dialect, script = {}, options = {}) => {
    const simulator = await ModemSimulator.start(dialect, script);
    const logLines: string[] = [];
    const modem = new Modem({
      path: simulator.devicePath,
      profile: dialect,
      clock: new ManualClock(Date.UTC(2026, 10, 22, 12)),
      logger: createLogger("debug", (line) => logLines.push(line)),
      lock: false,
      commandTimeoutMs: 300,
      callPollMs: 20,
      callEndGraceMs: 40,
      speechTimeoutMs: 1000,
      ringTimeoutMs: 2000,
      healthIntervalMs: 60_000,
      reconnectDelaysMs: [20, 50],
      ...options
    });
    started.push({modem, simulator});
    await modem.start();
    return {simulator, modem, logLines};
  };
}
