import type {
  EscalationPoliciesRepository,
  HeartbeatsRepository,
  IntegrationsRepository,
  SchedulesRepository
} from "../../store/config/repositories.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import {AppError} from "../shared/errors.js";

/** What an alert, heartbeat or integration can page. */
export type PagedKind = "recipient" | "group" | "schedule" | "escalation policy";

// Enough to find them in the dashboard or with `klaxon ack`; the count says how many more there are.
const NAMED_OPEN_NOTIFICATIONS = 20;

/**
 * An open notification pages its target by uuid until it is closed, so deleting the target is
 * refused; the answer names the oldest 20, so whoever deletes can close them first.
 */
export function refuseIfOpenNotifications(notifications: NotificationsRepository, kind: PagedKind, uuid: string): void {
  const open = notifications.countOpenForTarget(uuid);
  if (open === 0) return;
  const ids = notifications.openIdsForTarget(uuid, NAMED_OPEN_NOTIFICATIONS);
  const named = open > ids.length ? `${ids.join(", ")} and ${open - ids.length} more` : ids.join(", ");
  throw new AppError(
    "in_use",
    `${kind} ${uuid} has ${open} open notification(s): ${named}; acknowledge or resolve them first`,
    {blocking_notifications: ids}
  );
}

/**
 * Heartbeats and integrations page a recipient, group, schedule or escalation policy by its uuid,
 * schedules put recipients and groups on call, and policies' levels page all three: deleting one
 * they point at would leave their next page with nowhere to go, so the delete is refused and names them.
 */
export class PagingReferences {
  constructor(
    private readonly heartbeats: HeartbeatsRepository,
    private readonly integrations: IntegrationsRepository,
    private readonly schedules: SchedulesRepository,
    private readonly policies: EscalationPoliciesRepository
  ) {}

  refuseIfPaged(kind: PagedKind, uuid: string): void {
    const pagers = [
      ...this.heartbeats
        .all()
        .filter((heartbeat) => heartbeat.target === uuid)
        .map((heartbeat) => `heartbeat ${heartbeat.name}`),
      ...this.integrations
        .all()
        .filter((integration) => integration.target === uuid)
        .map((integration) => `integration ${integration.name} (${integration.id})`),
      ...this.schedules.referencing(uuid).map((schedule) => `schedule ${schedule.name} (${schedule.uuid})`),
      ...this.policies.referencing(uuid).map((policy) => `escalation policy ${policy.name} (${policy.uuid})`)
    ];
    if (pagers.length)
      throw new AppError("in_use", `${kind} ${uuid} is paged by ${pagers.join(", ")}; point them elsewhere first`);
  }
}
