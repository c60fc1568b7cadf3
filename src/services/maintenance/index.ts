import type {Logger} from "../../lib/logger.js";
import {MaintenanceReleaser} from "./maintenance-releaser.service.js";
import {MaintenanceService, type MaintenanceDeps} from "./maintenance.service.js";

export {MaintenanceService} from "./maintenance.service.js";

/** Maintenance windows: the use cases, and the loop that releases what a window held when it ends (tests call `releaser.tick()`). */
export interface Maintenance {
  service: MaintenanceService;
  releaser: MaintenanceReleaser;
}

export function createMaintenance(deps: Omit<MaintenanceDeps, "onRescheduled">, logger: Logger): Maintenance {
  const service = new MaintenanceService({...deps, onRescheduled: () => releaser.arm()});
  const releaser = new MaintenanceReleaser(service, deps.clock, logger.child({component: "maintenance"}));
  return {service, releaser};
}
