import type {Adapter} from "lowdb";
import type {ReplicationRepository} from "../journal/replication.repository.js";
import type {ConfigData} from "./config-store.js";

/** The journal document that holds the config store when two boxes replicate the journal. */
export const CONFIG_DOCUMENT = "config";

/**
 * The config store's lowdb adapter when the configuration lives in the journal: one document,
 * written in a journal commit, so Litestream ships it with the alerts and a standby that takes
 * over has the recipients, keys and webhooks of the moment the active stopped.
 */
export class JournalConfigDocument implements Adapter<ConfigData> {
  constructor(private readonly documents: ReplicationRepository) {}

  // eslint-disable-next-line @typescript-eslint/require-await -- lowdb's Adapter wants a promise
  async read(): Promise<ConfigData | null> {
    const body = this.documents.document(CONFIG_DOCUMENT);
    return body === null ? null : (JSON.parse(body) as ConfigData);
  }

  write(data: ConfigData): Promise<void> {
    return this.documents.putDocument(CONFIG_DOCUMENT, JSON.stringify(data));
  }
}
