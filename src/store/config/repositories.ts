import {ConfigCollection, type ConfigStore} from "./config-store.js";
import {eventFilterMatches} from "../../domain/vocabulary.js";

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
