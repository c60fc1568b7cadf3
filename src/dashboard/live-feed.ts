import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {PeriodicTask} from "../lib/periodic-task.js";
import type {EventFeedRepository, FeedEntry} from "./event-feed.repository.js";

/** One open event stream (a browser tab). */
export interface FeedSubscriber {
  /** Whether its session still holds; a stream whose session ended is closed. */
  isLive(): boolean;
  send(entry: FeedEntry): void;
  /** A comment line, so proxies and browsers keep an idle stream open. */
  keepAlive(): void;
  close(reason: "signed_out" | "stopping"): void;
}

const BATCH = 500;
const KEEP_ALIVE_MS = 25_000;

/**
 * Tells open dashboards what changed, by tailing the journal's event log: one cheap indexed read
 * per interval however many tabs are open, and it sees changes made by the escalation runner and
 * the channels as well as by the API. Pages reload what they show when told.
 */
export class LiveFeed {
  private readonly subscribers = new Set<FeedSubscriber>();
  private readonly task: PeriodicTask;
  private lastSeq = 0;
  private lastKeepAliveMs = 0;
  private stopped = false;

  constructor(
    private readonly events: EventFeedRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    intervalMs = 1000
  ) {
    this.task = new PeriodicTask("dashboard-live-feed", intervalMs, () => this.tick(), logger);
  }

  get size(): number {
    return this.subscribers.size;
  }

  subscribe(subscriber: FeedSubscriber): () => void {
    if (this.stopped) {
      subscriber.close("stopping");
      return () => undefined;
    }
    this.subscribers.add(subscriber);
    this.logger.debug("dashboard stream opened", {streams: this.subscribers.size});
    return () => {
      this.subscribers.delete(subscriber);
      this.logger.debug("dashboard stream closed", {streams: this.subscribers.size});
    };
  }

  /** One pass: close streams whose session ended, then send what was committed since the last pass. */
  tick(): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.isLive()) continue;
      this.subscribers.delete(subscriber);
      subscriber.close("signed_out");
    }
    if (this.subscribers.size === 0) {
      // Nobody is watching: skip what happened meanwhile instead of replaying it to the next tab.
      this.lastSeq = this.events.lastSeq();
      return;
    }
    for (
      let entries = this.events.after(this.lastSeq, BATCH);
      entries.length > 0;
      entries = this.events.after(this.lastSeq, BATCH)
    ) {
      for (const entry of entries) for (const subscriber of this.subscribers) subscriber.send(entry);
      this.lastSeq = entries[entries.length - 1].seq;
    }
    const now = this.clock.now();
    if (now - this.lastKeepAliveMs >= KEEP_ALIVE_MS) {
      this.lastKeepAliveMs = now;
      for (const subscriber of this.subscribers) subscriber.keepAlive();
    }
  }

  start(): void {
    this.lastSeq = this.events.lastSeq();
    this.task.start();
  }

  /** Ends every stream, so the HTTP server can close (an open stream would hold it open). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task.stop();
    for (const subscriber of this.subscribers) subscriber.close("stopping");
    this.subscribers.clear();
  }
}
