import type {Channel} from "../../src/domain/vocabulary.js";
import {ChannelError, type ChannelDriver, type Delivery, type DeliveryResult} from "../../src/channels/channel.js";

/** What the scripted driver does with a delivery. */
export type Script =
  | {kind: "result"; result: DeliveryResult}
  | {kind: "acknowledge"; by: string; result: DeliveryResult}
  | {kind: "fail"; message: string; permanent: boolean}
  | {kind: "hold"}
  | {kind: "hang"};

interface Held {
  delivery: Delivery;
  release(result: DeliveryResult): void;
}

/**
 * A stand-in for the world behind a channel (a phone, a mailbox) until the real drivers and
 * their loopback peers exist: it records every delivery and answers as scripted. `hold` keeps
 * the delivery open until the test releases it (a call in progress); `hang` never answers and
 * honours only the abort signal, like a dead SMTP server.
 */
export class RecordingDriver implements ChannelDriver {
  readonly deliveries: Delivery[] = [];
  readonly aborted: Delivery[] = [];
  readonly held: Held[] = [];
  private readonly scripts: Script[] = [];
  unavailable: string | null = null;

  constructor(
    readonly channel: Channel,
    readonly concurrency = 1,
    private fallback: Script = {kind: "result", result: {outcome: "sent", detail: "recorded"}}
  ) {}

  /** The next deliveries get these scripts, in order; afterwards the fallback applies. */
  script(...scripts: Script[]): void {
    this.scripts.push(...scripts);
  }

  /** The channel works again and answers with the fallback from now on. */
  repair(): void {
    this.scripts.length = 0;
    this.unavailable = null;
  }

  unavailableReason(): string | null {
    return this.unavailable;
  }

  deliver(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    this.deliveries.push(delivery);
    const script = this.scripts.shift() ?? this.fallback;
    return new Promise((resolve, reject) => {
      signal.addEventListener("abort", () => {
        this.aborted.push(delivery);
        reject(new ChannelError(`aborted: ${signal.reason?.message ?? "no reason"}`, false));
      });
      if (script.kind === "result") resolve(script.result);
      if (script.kind === "acknowledge") delivery.acknowledge(script.by).then(() => resolve(script.result), reject);
      if (script.kind === "fail") reject(new ChannelError(script.message, script.permanent));
      if (script.kind === "hold") this.held.push({delivery, release: resolve});
    });
  }
}
