import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {AckLinkSigner} from "../lib/ack-link.js";
import type {Settings} from "../settings/defaults.js";
import type {Journal} from "../store/journal/journal.js";
import type {AcknowledgementPort, RemoteControlPort} from "./channel.js";

// Kept out of index.ts: every channel's factory takes it, and index.ts imports every factory.
/** What the production drivers are built from. */
export interface ChannelContext {
  settings: Settings;
  dataDir: string;
  logger: Logger;
  clock: Clock;
  journal: Journal;
  acknowledgements: AcknowledgementPort;
  /** What a known phone may do by SMS command or by calling the modem. */
  remoteControl: RemoteControlPort;
  /** Signs the Acknowledge links in emails. */
  ackLinks: AckLinkSigner;
}
