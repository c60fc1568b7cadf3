import type {OpenStoresOptions} from "../store/open-stores.js";
import type {Logger} from "../lib/logger.js";
import type {Clock} from "../lib/clock.js";
import type {ChannelDriver} from "../channels/channel.js";
import type {EscalationRunner, RunnerOptions} from "../services/escalation/escalation-runner.service.js";
import type {Settings} from "../settings/defaults.js";
import type {Journal} from "../store/journal/journal.js";
import type {ConfigStore} from "../store/config/config-store.js";
import type {ApiKeysService} from "../services/keys/api-keys.service.js";
import type {NotificationsService} from "../services/notifications/notifications.service.js";
import type {RecipientsService} from "../services/recipients/recipients.service.js";
import type {GroupsService} from "../services/recipients/groups.service.js";
import type {Maintenance} from "../services/maintenance/index.js";
import type {HandoffNotices} from "../services/recipients/handoff-notices.service.js";
import type {Heartbeats} from "../services/heartbeats/index.js";
import type {Webhooks} from "../outbox/index.js";
import type {DeviceIntake} from "../services/integrations/intake/device-intake.js";
import type {ParserWorkers} from "../lib/parser-workers.js";
import type {Operations} from "../ops/index.js";
import type {PlcLinkWorkers} from "../services/integrations/plc-worker/plc-link-workers.js";

/** With main's `--accept-wal-loss` and `--accept-journal-loss` (OpenStoresOptions). */
export interface GatewayOptions extends Pick<OpenStoresOptions, "acceptWalLoss" | "acceptJournalLoss"> {
  logger?: Logger;
  clock?: Clock;
  /** Channel drivers instead of the production ones built from settings (tests, development). */
  drivers?: ChannelDriver[];
  runner?: RunnerOptions;
}

export interface Gateway {
  url: string;
  settings: Settings;
  journal: Journal;
  config: ConfigStore;
  services: {
    keys: ApiKeysService;
    notifications: NotificationsService;
    recipients: RecipientsService;
    groups: GroupsService;
    runner: EscalationRunner;
    maintenance: Maintenance;
    handoffNotices: HandoffNotices;
  };
  initialAdminKeyFile: string | null;
  /** Heartbeat use cases and their sweep (tests drive `monitor.tick()` with a manual clock). */
  heartbeats: Heartbeats;
  /** The webhook outbox's sender (tests drive `dispatcher.tick()` with a manual clock). */
  webhooks: {dispatcher: Webhooks["dispatcher"]};
  /** Where device transports (email, MQTT, SNMP traps) hand their messages; tests call it as a listener does. */
  deviceIntake: DeviceIntake;
  /** The device doors' supervised parser workers, as /readyz shows them (tests pace a fuzzer by them). */
  parserWorkers: ParserWorkers;
  /** The PLC links' workers (tests end one to prove that its end costs its links only). */
  plcLinkWorkers: Pick<PlcLinkWorkers, "terminate">;
  /** Metrics, backups, retention, self-monitoring and the watchdog's liveness probe. */
  operations: Operations;
  stop(): Promise<void>;
}
