import type {Channel} from "../../domain/vocabulary.js";
import type {Logger} from "../../lib/logger.js";
import type {ChannelDriver, Delivery, DeliveryResult} from "../channel.js";

/**
 * Writes deliveries to the log instead of delivering them: for development and tests only,
 * never registered by the production gateway. Its outcome says so, so nothing it "sends" can
 * be mistaken for a delivery.
 */
export class LogDriver implements ChannelDriver {
  readonly concurrency = 4;

  constructor(
    readonly channel: Channel,
    private readonly logger: Logger
  ) {}

  unavailableReason(): string | null {
    return null;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the queue chains deliver() with .then: a throw must reject, not escape
  async deliver(delivery: Delivery): Promise<DeliveryResult> {
    this.logger.info("log driver: delivery not sent anywhere", {
      channel: this.channel,
      recipient: delivery.recipient.uuid,
      alerts: delivery.alerts.map((alert) => alert.notification_id)
    });
    return {outcome: "sent", detail: "logged only (development driver, nothing was delivered)"};
  }
}
