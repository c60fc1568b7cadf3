import {randomUUID} from "node:crypto";
import {definedFields, printResult, requiredOption, segment, stringOption, type Command} from "../command.js";
import {UsageError} from "../failures.js";
import {clip, fieldsText, list, tableText, timeText} from "../output.js";
import {targetOption, targetUuid} from "../targets.js";
import {fetchPages, morePagesHint, PAGE_OPTIONS} from "./pages.js";

const PRIORITIES = ["critical", "high", "medium", "low", "info"];

/** The long form of a notification (CONTRACT section 2), as far as the CLI shows it. */
interface Notification {
  id: string;
  status: string;
  recipient_uuid: string;
  message: string;
  priority: string;
  source: string | null;
  service: string | null;
  environment: string | null;
  link: string | null;
  dedup_key: string | null;
  channels_planned: string[];
  occurrences: number;
  created_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  acknowledged_via: string | null;
  acknowledged_note: string | null;
  resolved_at: string | null;
  escalation: {
    step: number;
    steps_total: number;
    next_step_at: string | null;
    waiting_for?: Array<{channel: string | null; reason: string}>;
  };
  attempts: Array<{
    channel: string;
    target: string;
    step: number;
    started_at: string;
    outcome: string;
    detail: string | null;
  }>;
}

interface ShortForm {
  status: string;
  notification_uuid: string;
  channels_planned: string[];
  escalation_chain_id: string;
}

function notificationText(n: Notification): string {
  const acknowledged = n.acknowledged_at
    ? `${timeText(n.acknowledged_at)} by ${n.acknowledged_by ?? "?"} via ${n.acknowledged_via ?? "?"}`
    : null;
  const escalation = n.escalation.steps_total
    ? `step ${n.escalation.step} of ${n.escalation.steps_total}${n.escalation.next_step_at ? `, next at ${timeText(n.escalation.next_step_at)}` : ""}`
    : "no steps";
  // Why nobody is being paged, in the gateway's words: the person reading this at 3 a.m. needs it more than the step count.
  const waiting = (n.escalation.waiting_for ?? []).map((w) => `; waiting: ${w.reason}`).join("");
  const fields = fieldsText([
    ["id", n.id],
    ["status", n.status],
    ["priority", n.priority],
    ["to", n.recipient_uuid],
    ["message", n.message],
    ["source", n.source],
    ["service", n.service],
    ["environment", n.environment],
    ["link", n.link],
    ["dedup key", n.dedup_key],
    ["occurrences", n.occurrences],
    ["channels planned", list(n.channels_planned)],
    ["escalation", escalation + waiting],
    ["created", timeText(n.created_at)],
    ["acknowledged", acknowledged],
    ["note", n.acknowledged_note],
    ["resolved", timeText(n.resolved_at)]
  ]);
  if (!n.attempts.length) return fields + "\n\nattempts: none yet";
  const attempts = tableText(
    ["STEP", "CHANNEL", "TARGET", "OUTCOME", "STARTED", "DETAIL"],
    n.attempts.map((a) => [a.step, a.channel, a.target, a.outcome, timeText(a.started_at), clip(a.detail, 60)])
  );
  return `${fields}\n\nattempts:\n${attempts}`;
}

async function readMessage(positionals: string[]): Promise<string> {
  if (positionals.length === 1 && positionals[0] === "-") {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8").trim();
  }
  return positionals.join(" ").trim();
}

const send: Command = {
  words: ["send"],
  summary: "send an alert to a recipient or group",
  args: "<message...>",
  arity: [1, Infinity],
  options: {
    to: {
      type: "string",
      value: "TARGET",
      description: "recipient, group or schedule: its name or uuid (required)"
    },
    priority: {type: "string", value: "P", description: `${PRIORITIES.join(", ")} (required)`},
    source: {type: "string", value: "S", description: "free label of the origin, e.g. the host"},
    "dedup-key": {type: "string", value: "K", description: "while an alert with this key is open, sends merge into it"},
    link: {type: "string", value: "URL", description: "http(s) link to the source system"},
    service: {type: "string", value: "S", description: "service name"},
    environment: {type: "string", value: "E", description: "environment, e.g. production"},
    "idempotency-key": {
      type: "string",
      value: "K",
      description: "your own Idempotency-Key (default: a new one per send, reused on retries)"
    }
  },
  async run(ctx) {
    const priority = requiredOption(ctx, "priority");
    if (!PRIORITIES.includes(priority)) throw new UsageError(`--priority must be one of ${PRIORITIES.join(", ")}`);
    const message = await readMessage(ctx.positionals);
    if (!message) throw new UsageError("the message is empty");
    const body = definedFields({
      recipient_uuid: await targetUuid(ctx, requiredOption(ctx, "to")),
      message,
      priority,
      source: stringOption(ctx, "source"),
      dedup_key: stringOption(ctx, "dedup-key"),
      link: stringOption(ctx, "link"),
      service: stringOption(ctx, "service"),
      environment: stringOption(ctx, "environment")
    });
    // One key for this logical send, reused by every retry: the gateway replays instead of paging twice.
    const idempotencyKey = stringOption(ctx, "idempotency-key") ?? `klaxon-cli-${randomUUID()}`;
    const answer = await ctx.api().request<ShortForm>({
      method: "POST",
      path: "api/v1/notifications/send",
      body,
      headers: {"Idempotency-Key": idempotencyKey},
      retry: "idempotent"
    });
    const replayed = answer.headers.get("idempotent-replayed") === "true";
    printResult(ctx, answer.body, () =>
      fieldsText([
        ["notification", answer.body.notification_uuid],
        ["status", answer.body.status + (replayed ? " (replayed: this send was already accepted)" : "")],
        ["channels planned", list(answer.body.channels_planned)],
        ["escalation chain", answer.body.escalation_chain_id]
      ])
    );
  }
};

const get: Command = {
  words: ["get"],
  summary: "show a notification: status, escalation, delivery attempts, acknowledgement",
  args: "<id>",
  arity: [1, 1],
  async run(ctx) {
    const answer = await ctx.api().request<Notification>({
      method: "GET",
      path: `api/v1/notifications/${segment(ctx.positionals[0])}`,
      retry: "idempotent"
    });
    printResult(ctx, answer.body, () => notificationText(answer.body));
  }
};

const listCommand: Command = {
  words: ["list"],
  summary: "list notifications, newest first",
  options: {
    status: {
      type: "string",
      value: "S",
      description: "queued, notifying, acknowledged, resolved, exhausted or suppressed"
    },
    to: {
      type: "string",
      value: "TARGET",
      description: "only those sent to this recipient, group or schedule (name or uuid)"
    },
    priority: {type: "string", value: "P", description: "only this priority"},
    ...PAGE_OPTIONS
  },
  async run(ctx) {
    const page = await fetchPages<Notification>(ctx, "api/v1/notifications", {
      status: stringOption(ctx, "status"),
      recipient_uuid: await targetOption(ctx, "to"),
      priority: stringOption(ctx, "priority")
    });
    printResult(ctx, page, () => {
      if (!page.items.length) return "no notifications";
      const table = tableText(
        ["ID", "STATUS", "PRIORITY", "CREATED", "MESSAGE"],
        page.items.map((n) => [n.id, n.status, n.priority, timeText(n.created_at), clip(n.message)])
      );
      const hint = morePagesHint("list", page);
      return hint ? `${table}\n${hint}` : table;
    });
  }
};

const ack: Command = {
  words: ["ack"],
  summary: "acknowledge a notification: stops its escalation",
  args: "<id>",
  arity: [1, 1],
  options: {
    by: {type: "string", value: "WHO", description: "who acknowledges (default: the API key's name)"},
    note: {type: "string", value: "N", description: "a note kept with the acknowledgement"}
  },
  async run(ctx) {
    const body = definedFields({by: stringOption(ctx, "by"), note: stringOption(ctx, "note")});
    const answer = await ctx.api().request<Notification>({
      method: "POST",
      path: `api/v1/notifications/${segment(ctx.positionals[0])}/ack`,
      body,
      retry: "idempotent"
    });
    printResult(
      ctx,
      answer.body,
      () => `acknowledged ${answer.body.id} at ${answer.body.acknowledged_at} by ${answer.body.acknowledged_by}`
    );
  }
};

const resolve: Command = {
  words: ["resolve"],
  summary: "resolve a notification: the problem is gone; stops its escalation",
  args: "<id>",
  arity: [1, 1],
  async run(ctx) {
    const answer = await ctx.api().request<Notification>({
      method: "POST",
      path: `api/v1/notifications/${segment(ctx.positionals[0])}/resolve`,
      retry: "idempotent"
    });
    printResult(ctx, answer.body, () => `resolved ${answer.body.id} at ${answer.body.resolved_at}`);
  }
};

export const notificationCommands: Command[] = [send, get, listCommand, ack, resolve];
