import type {Actor} from "../../domain/actor.js";
import type {ConfigData} from "../../store/config/config-store.js";

/** An actor as the audit log shows it: with the name of who it was, where one is known. */
export type NamedActor = Actor & {name: string | null};

/**
 * Names the actors of audit entries when they are read: a dashboard user by their name, an API
 * key by its name (and owner), a recipient and an integration by theirs. Read, not recorded, so a
 * renamed user shows their current name; one deleted since shows its id alone.
 */
export class ActorNamesService {
  constructor(private readonly config: {readonly data: Readonly<ConfigData>}) {}

  named(actor: Actor): NamedActor {
    return {...actor, name: actor.id === null ? null : this.nameOf(actor.type, actor.id)};
  }

  private nameOf(type: Actor["type"], id: string): string | null {
    const data = this.config.data;
    switch (type) {
      case "dashboard":
        return data.dashboard_users.find((user) => user.id === id)?.name ?? null;
      case "api_key": {
        const key = data.api_keys.find((item) => item.id === id);
        if (!key) return null;
        return key.owner ? `${key.name} (${key.owner})` : key.name;
      }
      case "recipient":
        return data.recipients.find((recipient) => recipient.uuid === id)?.name ?? null;
      case "integration":
        return data.integrations.find((integration) => integration.id === id)?.name ?? null;
      default:
        return null;
    }
  }
}
