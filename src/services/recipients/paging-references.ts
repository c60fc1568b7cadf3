import type {HeartbeatsRepository, IntegrationsRepository} from "../../store/config/repositories.js";
import {AppError} from "../shared/errors.js";

/**
 * Heartbeats and integrations page a recipient or group by its uuid: deleting one they point at
 * would leave their next page with nowhere to go, so the delete is refused and names them.
 */
export class PagingReferences {
  constructor(
    private readonly heartbeats: HeartbeatsRepository,
    private readonly integrations: IntegrationsRepository
  ) {}

  refuseIfPaged(kind: "recipient" | "group", uuid: string): void {
    const pagers = [
      ...this.heartbeats.all().filter((heartbeat) => heartbeat.target === uuid).map((heartbeat) => `heartbeat ${heartbeat.name}`),
      ...this.integrations.all().filter((integration) => integration.target === uuid).map((integration) => `integration ${integration.name} (${integration.id})`)
    ];
    if (pagers.length) throw new AppError("in_use", `${kind} ${uuid} is paged by ${pagers.join(", ")}; point them elsewhere first`);
  }
}
