import {ConfigCollection, type ConfigStore} from "./config-store.js";
import {eventFilterMatches, type Channel} from "../../domain/vocabulary.js";

/** Recipients, by uuid. */
export class RecipientsRepository extends ConfigCollection<"recipients"> {
  constructor(store: ConfigStore) {
    super(store, "recipients", "uuid");
  }
}

/** Recipient groups, by uuid. */
export class GroupsRepository extends ConfigCollection<"groups"> {
  constructor(store: ConfigStore) {
    super(store, "groups", "uuid");
  }

  containing(recipientUuid: string) {
    return this.all().filter((group) => group.members.includes(recipientUuid));
  }
}

/** API keys (hashes only), by public id. */
export class ApiKeysRepository extends ConfigCollection<"api_keys"> {
  constructor(store: ConfigStore) {
    super(store, "api_keys", "id");
  }
}

/** Outbound webhook subscriptions, by id. */
export class WebhooksRepository extends ConfigCollection<"webhooks"> {
  constructor(store: ConfigStore) {
    super(store, "webhooks", "id");
  }

  /** Enabled subscriptions that want this event type. */
  subscribersOf(eventType: string): string[] {
    return this.all()
      .filter((hook) => hook.enabled && hook.events.some((filter) => eventFilterMatches(filter, eventType)))
      .map((hook) => hook.id);
  }
}

/** Heartbeat definitions, by name. */
export class HeartbeatsRepository extends ConfigCollection<"heartbeats"> {
  constructor(store: ConfigStore) {
    super(store, "heartbeats", "name");
  }
}

/** Inbound integrations, by id. */
export class IntegrationsRepository extends ConfigCollection<"integrations"> {
  constructor(store: ConfigStore) {
    super(store, "integrations", "id");
  }
}

/** On-call schedules, by uuid. */
export class SchedulesRepository extends ConfigCollection<"schedules"> {
  constructor(store: ConfigStore) {
    super(store, "schedules", "uuid");
  }

  /** Schedules that name `uuid` as a member, a crew, an override's recipient or the fallback. */
  referencing(uuid: string) {
    return this.all().filter(
      (schedule) =>
        schedule.fallback === uuid ||
        schedule.overrides.some((override) => override.recipient_uuid === uuid) ||
        schedule.layers.some((layer) =>
          layer.type === "rotation" ? layer.members.includes(uuid) : layer.crews.some((crew) => crew.target === uuid)
        )
    );
  }
}

/** Escalation policies, by uuid. */
export class EscalationPoliciesRepository extends ConfigCollection<"escalation_policies"> {
  constructor(store: ConfigStore) {
    super(store, "escalation_policies", "uuid");
  }

  /** Policies with a level that pages `uuid` (a recipient, group or schedule). */
  referencing(uuid: string) {
    return this.all().filter((policy) => policy.levels.some((level) => level.targets.includes(uuid)));
  }
}

/** Recipients' calendar feed tokens, by recipient uuid. */
export class CalendarFeedsRepository extends ConfigCollection<"calendar_feeds"> {
  constructor(store: ConfigStore) {
    super(store, "calendar_feeds", "recipient_uuid");
  }
}

/** When each recipient's contacts last passed a test page, by recipient uuid. */
export class ContactVerificationsRepository extends ConfigCollection<"contact_verifications"> {
  constructor(store: ConfigStore) {
    super(store, "contact_verifications", "recipient_uuid");
  }

  /** When `contact` passed a test on `channel`, or null: a time recorded for an earlier contact no longer counts. */
  verifiedAt(recipientUuid: string, channel: Channel, contact: string | null): string | null {
    const verified = this.get(recipientUuid)?.channels[channel];
    return verified && verified.contact === contact ? verified.verified_at : null;
  }

  /** Read and written inside one serialised update, so tests of several channels at once all count. */
  record(recipientUuid: string, channel: Channel, contact: string, at: string): Promise<void> {
    return this.store.update((draft) => {
      let entry = draft.contact_verifications.find((item) => item.recipient_uuid === recipientUuid);
      if (!entry) draft.contact_verifications.push((entry = {recipient_uuid: recipientUuid, channels: {}}));
      entry.channels[channel] = {contact, verified_at: at};
    });
  }
}

/** People who sign in to the dashboard, by id. */
export class DashboardUsersRepository extends ConfigCollection<"dashboard_users"> {
  constructor(store: ConfigStore) {
    super(store, "dashboard_users", "id");
  }

  /** The user with this name, regardless of case, or null. */
  named(name: string) {
    const wanted = name.trim().toLowerCase();
    return this.all().find((user) => user.name.toLowerCase() === wanted) ?? null;
  }
}
