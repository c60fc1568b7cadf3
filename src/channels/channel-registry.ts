import type {Channel} from "../domain/vocabulary.js";
import type {ChannelDriver} from "./channel.js";

/** The drivers the gateway has, by channel. A channel without a driver is unavailable, with a reason. */
export class ChannelRegistry {
  private readonly drivers = new Map<Channel, ChannelDriver>();

  constructor(drivers: ChannelDriver[] = []) {
    for (const driver of drivers) this.drivers.set(driver.channel, driver);
  }

  get(channel: Channel): ChannelDriver | null {
    return this.drivers.get(channel) ?? null;
  }

  unavailableReason(channel: Channel): string | null {
    const driver = this.drivers.get(channel);
    return driver ? driver.unavailableReason() : `no ${channel} driver is installed in this gateway yet`;
  }

  all(): ChannelDriver[] {
    return [...this.drivers.values()];
  }

  details(channel: Channel): Record<string, unknown> | null {
    return this.drivers.get(channel)?.details?.() ?? null;
  }

  async start(): Promise<void> {
    await Promise.all(this.all().map((driver) => driver.start?.() ?? Promise.resolve()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((driver) => driver.stop?.() ?? Promise.resolve()));
  }
}
