import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {TimedSweep} from "../../lib/timed-sweep.js";
import type {MaintenanceService} from "./maintenance.service.js";

/**
 * Releases what maintenance windows held when they end. `tick()` runs one pass; a timer aims at
 * the earliest end not yet handled (stored, so a window that ended while the gateway was off is
 * handled by the first pass after the start).
 */
export class MaintenanceReleaser extends TimedSweep {
  constructor(maintenance: MaintenanceService, clock: Clock, logger: Logger) {
    super(clock, {
      pass: () => maintenance.releaseEnded(),
      nextDue: () => maintenance.earliestEnd(),
      failed: (error) => logger.error("releasing ended maintenance windows failed", {error})
    });
  }
}
