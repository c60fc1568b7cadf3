import type {Ledger} from "./ledger.js";
import type {SeededRandom} from "./seeded-random.js";

/** What the load sends alerts to: recipients and groups created before the first cycle. */
export interface LoadTargets {
  recipients: string[];
  groups: string[];
}

/** Answers counted in one cycle, for the suite's per-cycle line. */
export interface LoadCounts {
  sends: number;
  replays: number;
  closes: number;
  adminWrites: number;
  /** Requests cut off by the kill (or refused because the gateway was gone). */
  unanswered: number;
}

export interface RunningLoad {
  /** Stops every client once its request in flight has ended; call after the kill. */
  stop(): Promise<LoadCounts>;
}

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

const PRIORITIES = ["critical", "high", "medium"] as const;
/** How recent an alert must be for the closer to pick it: recent ones are still escalating. */
const RECENT = 40;

/**
 * Drives the gateway the way a busy site does, at a steady rate, until stopped: three senders
 * (plain; with Idempotency-Key, sometimes replaying an answered key; long form to groups), a
 * closer acknowledging or resolving recent alerts while new ones arrive, and an admin creating
 * and deleting recipients and keys so the config file is being rewritten when the kill comes.
 * Every 2xx answer goes into the ledger; a request the kill cut off leaves its subject in doubt.
 */
export function startLoad(
  url: string,
  adminKey: string,
  targets: LoadTargets,
  ledger: Ledger,
  random: SeededRandom,
  cycle: number
): RunningLoad {
  let stopped = false;
  let sequence = 0;
  const counts: LoadCounts = {sends: 0, replays: 0, closes: 0, adminWrites: 0, unanswered: 0};
  const allTargets = [...targets.recipients, ...targets.groups];

  async function call(
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {}
  ): Promise<Reply | null> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(url + path, {
        method,
        body,
        headers: {
          "X-API-Key": adminKey,
          ...(body === undefined ? {} : {"Content-Type": "application/json"}),
          ...headers
        }
      });
      text = await response.text();
    } catch {
      counts.unanswered++;
      return null;
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: kept as text, so the anomaly shows what came back
    }
    return {status: response.status, headers: response.headers, body: parsed};
  }

  function unexpected(what: string, reply: Reply): void {
    ledger.anomalies.push(`cycle ${cycle}: ${what} answered ${reply.status} ${JSON.stringify(reply.body)}`);
  }

  function alertBody(target: string): string {
    const n = ++sequence;
    return JSON.stringify({
      recipient_uuid: target,
      message: `crash cycle ${cycle} alert ${n}`,
      priority: random.pick(PRIORITIES),
      source: "crash-suite"
    });
  }

  function remember(id: string, target: string, idempotency: {key: string; body: string} | null): void {
    ledger.sends.set(id, {id, target, idempotency});
    ledger.sendOrder.push(id);
    counts.sends++;
  }

  async function sendPlain(): Promise<void> {
    const target = random.pick(targets.recipients);
    const reply = await call("POST", "/api/v1/notifications/send", alertBody(target));
    if (!reply) return;
    if (reply.status !== 202) return unexpected("a plain send", reply);
    remember(reply.body.notification_uuid, target, null);
  }

  async function sendKeyed(): Promise<void> {
    const keyed = ledger.sendOrder
      .slice(-200)
      .map((id) => ledger.sends.get(id)!)
      .filter((sent) => sent.idempotency !== null);
    if (keyed.length > 0 && random.chance(0.25)) {
      // A client retrying an alert it already got an answer for, possibly across restarts.
      const earlier = random.pick(keyed);
      const reply = await call("POST", "/api/v1/notifications/send", earlier.idempotency!.body, {
        "Idempotency-Key": earlier.idempotency!.key
      });
      if (!reply) return;
      if (
        reply.status !== 202 ||
        reply.body.notification_uuid !== earlier.id ||
        reply.headers.get("idempotent-replayed") !== "true"
      )
        return unexpected(`the replay of ${earlier.id}`, reply);
      counts.replays++;
      return;
    }
    const target = random.pick(allTargets);
    const body = alertBody(target);
    const key = `crash-${random.seed}-${cycle}-${sequence}`;
    const reply = await call("POST", "/api/v1/notifications/send", body, {"Idempotency-Key": key});
    if (!reply) return;
    if (reply.status !== 202) return unexpected("a keyed send", reply);
    remember(reply.body.notification_uuid, target, {key, body});
  }

  async function sendLongForm(): Promise<void> {
    const target = random.pick(targets.groups);
    const reply = await call("POST", "/api/v1/notifications/send", alertBody(target), {
      Prefer: "return=representation"
    });
    if (!reply) return;
    if (reply.status !== 200 || reply.body.status !== "queued") return unexpected("a long-form send", reply);
    remember(reply.body.id, target, null);
  }

  async function close(): Promise<void> {
    const open = ledger.sendOrder.slice(-RECENT).filter((id) => !ledger.closed.has(id) && !ledger.closeInDoubt.has(id));
    if (open.length === 0) return;
    const id = random.pick(open);
    const as = random.chance(0.7) ? "acknowledged" : "resolved";
    ledger.closeInDoubt.add(id);
    const reply =
      as === "acknowledged"
        ? await call("POST", `/api/v1/notifications/${id}/ack`, JSON.stringify({by: "crash-suite"}))
        : await call("POST", `/api/v1/notifications/${id}/resolve`);
    if (!reply) return;
    if (reply.status !== 200 || reply.body.status !== as) return unexpected(`closing ${id} as ${as}`, reply);
    ledger.closeInDoubt.delete(id);
    ledger.closed.set(id, as);
    counts.closes++;
  }

  async function administer(): Promise<void> {
    const present = [...ledger.recipients]
      .filter(([uuid, state]) => state === "present" && !ledger.adminInDoubt.has(uuid))
      .map(([uuid]) => uuid);
    const active = [...ledger.keys]
      .filter(([id, key]) => key.state === "active" && !ledger.adminInDoubt.has(id))
      .map(([id]) => id);
    const roll = random.next();
    if (roll < 0.2 && present.length > 0) {
      const uuid = random.pick(present);
      ledger.adminInDoubt.add(uuid);
      const reply = await call("DELETE", `/api/v1/recipients/${uuid}`);
      if (!reply) return;
      if (reply.status !== 204) return unexpected(`deleting recipient ${uuid}`, reply);
      ledger.recipients.set(uuid, "deleted");
      ledger.adminInDoubt.delete(uuid);
    } else if (roll < 0.3 && active.length > 0) {
      const id = random.pick(active);
      ledger.adminInDoubt.add(id);
      const reply = await call("DELETE", `/api/v1/keys/${id}`);
      if (!reply) return;
      if (reply.status !== 204) return unexpected(`revoking key ${id}`, reply);
      ledger.keys.set(id, {...ledger.keys.get(id)!, state: "revoked"});
      ledger.adminInDoubt.delete(id);
    } else if (roll < 0.55) {
      const reply = await call(
        "POST",
        "/api/v1/keys",
        JSON.stringify({name: `crash-${cycle}-${++sequence}`, scopes: ["notifications:read"]})
      );
      if (!reply) return;
      if (reply.status !== 201) return unexpected("creating a key", reply);
      ledger.keys.set(reply.body.id, {key: reply.body.key, state: "active"});
    } else {
      const n = ++sequence;
      const reply = await call(
        "POST",
        "/api/v1/recipients",
        JSON.stringify({name: `Crash ${cycle}-${n}`, email: `crash-${n}@factory.lan`})
      );
      if (!reply) return;
      if (reply.status !== 201) return unexpected("creating a recipient", reply);
      ledger.recipients.set(reply.body.uuid, "present");
    }
    counts.adminWrites++;
  }

  const client = async (work: () => Promise<void>, pauseMs: [number, number]) => {
    while (!stopped) {
      await work();
      await new Promise((resolve) => setTimeout(resolve, random.between(...pauseMs)));
    }
  };
  const clients = [
    client(sendPlain, [5, 20]),
    client(sendKeyed, [5, 20]),
    client(sendLongForm, [5, 20]),
    client(close, [20, 60]),
    client(administer, [10, 40])
  ];
  return {
    async stop() {
      stopped = true;
      await Promise.all(clients);
      return counts;
    }
  };
}
