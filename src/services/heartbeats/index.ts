import type {Logger} from "../../lib/logger.js";
import {HeartbeatMonitor} from "./heartbeat-monitor.service.js";
import {HeartbeatsService, type HeartbeatsDeps} from "./heartbeats.service.js";

/** Heartbeats: the use cases, and the sweep that turns them late and down (tests drive `monitor.tick()`). */
export interface Heartbeats {
  service: HeartbeatsService;
  monitor: HeartbeatMonitor;
}

export function createHeartbeats(deps: Omit<HeartbeatsDeps, "onRescheduled" | "logger">, logger: Logger): Heartbeats {
  const child = logger.child({component: "heartbeats"});
  const service = new HeartbeatsService({...deps, logger: child, onRescheduled: () => monitor.arm()});
  const monitor = new HeartbeatMonitor(service, deps.clock, child);
  return {service, monitor};
}
