import type {ServerResponse} from "node:http";
import {fail, ok} from "./telegram-bot-api-wire.js";

interface Update {
  update_id: number;
  callback_query: Record<string, unknown>;
}

interface Poll {
  offset: number;
  limit: number;
  response: ServerResponse;
  timer: NodeJS.Timeout;
}

/**
 * The fake Bot API's getUpdates: a queue of updates and at most one long poll. An update is
 * confirmed and forgotten once a call asks for a higher `offset`; a second poll ends the first
 * with 409 as Telegram does.
 */
export class UpdateQueue {
  private readonly updates: Update[] = [];
  private poll: Poll | null = null;
  private nextUpdateId = 1000;

  /** Queues a callback query, answering the waiting poll at once; returns its update_id. */
  push(callbackQuery: Record<string, unknown>): number {
    const update: Update = {update_id: this.nextUpdateId++, callback_query: callbackQuery};
    this.updates.push(update);
    this.flushPoll();
    return update.update_id;
  }

  getUpdates(params: Record<string, any>, response: ServerResponse): void {
    const offset = Number(params.offset ?? 0);
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    const timeoutSeconds = Number(params.timeout ?? 0);
    this.confirm(offset);
    if (this.poll) {
      clearTimeout(this.poll.timer);
      fail(
        this.poll.response,
        409,
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
      );
      this.poll = null;
    }
    const ready = this.pending(offset, limit);
    if (ready.length || timeoutSeconds <= 0) return ok(response, ready);
    const timer = setTimeout(() => {
      this.poll = null;
      ok(response, []);
    }, timeoutSeconds * 1000);
    this.poll = {offset, limit, response, timer};
    response.on("close", () => {
      if (this.poll?.response === response) {
        clearTimeout(this.poll.timer);
        this.poll = null;
      }
    });
  }

  /** Ends the waiting poll without an answer (the WAN went down); returns its response to leave hanging. */
  abandonPoll(): ServerResponse | null {
    if (!this.poll) return null;
    clearTimeout(this.poll.timer);
    const {response} = this.poll;
    this.poll = null;
    return response;
  }

  /** Stops the waiting poll's timer, for the fake's close. */
  close(): void {
    if (this.poll) clearTimeout(this.poll.timer);
  }

  // Forgets confirmed updates.
  private confirm(offset: number): void {
    if (offset < 0) this.updates.splice(0, Math.max(0, this.updates.length + offset));
    else while (this.updates.length && this.updates[0].update_id < offset) this.updates.shift();
  }

  private pending(offset: number, limit: number): Update[] {
    return this.updates.filter((update) => offset <= 0 || update.update_id >= offset).slice(0, limit);
  }

  // Answers the waiting poll if anything is there for it.
  private flushPoll(): void {
    if (!this.poll) return;
    const ready = this.pending(this.poll.offset, this.poll.limit);
    if (ready.length === 0) return;
    clearTimeout(this.poll.timer);
    ok(this.poll.response, ready);
    this.poll = null;
  }
}
