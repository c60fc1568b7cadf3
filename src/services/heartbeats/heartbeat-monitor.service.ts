import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import {TimedSweep} from "../../lib/timed-sweep.js";
import type {HeartbeatsService} from "./heartbeats.service.js";

/**
 * The heartbeat sweep. `tick()` runs one pass (every due heartbeat turns late or down, each
 * exactly once); a timer aims at the earliest stored sweep time, so nothing polls. On start,
 * every heartbeat first gets a fresh grace time: the gateway was not there to be pinged.
 */
export class HeartbeatMonitor extends TimedSweep {
  constructor(
    private readonly heartbeats: HeartbeatsService,
    clock: Clock,
    private readonly logger: Logger
  ) {
    super(clock, {
      pass: () => heartbeats.sweep(),
      nextDue: () => heartbeats.earliestDue(),
      failed: (error) => logger.error("heartbeat sweep failed", {error})
    });
  }

  /** Call once the gateway serves: the fresh grace counts from that moment. */
  override async start(): Promise<void> {
    const moved = await this.heartbeats.recoverAfterRestart();
    if (moved) this.logger.info("heartbeats given a fresh grace time after the restart", {count: moved});
    await super.start();
  }
}
