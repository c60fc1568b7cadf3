import {
  definedFields,
  integerOption,
  jsonObjectOption,
  listOption,
  printResult,
  segment,
  stringOption,
  type Command,
  type CommandContext,
  type OptionSpec
} from "../command.js";
import {UsageError} from "../failures.js";
import {fieldsText, list, tableText, timeText} from "../output.js";
import {fetchPages, morePagesHint, PAGE_OPTIONS} from "./pages.js";

/** A recipient (CONTRACT section 4), as far as the CLI shows it. */
interface Recipient {
  uuid: string;
  name: string;
  phone: string | null;
  email: string | null;
  telegram_id: string | null;
  channel_order: string[];
  escalation: {ack_timeout_seconds: number; repeat: number};
  quiet_hours: {start: string; end: string; timezone: string; allow_priorities?: string[]} | null;
  routing_rules: Array<{priorities: string[]; channels: string[]}>;
  channels: Array<{channel: string; available: boolean; reason: string | null}>;
  created_at: string;
  updated_at: string;
}

const FIELD_OPTIONS: Record<string, OptionSpec> = {
  name: {type: "string", value: "NAME", description: "display name"},
  phone: {type: "string", value: "E164", description: "phone number, e.g. +4915112345678"},
  email: {type: "string", value: "ADDR", description: "email address"},
  "telegram-id": {type: "string", value: "ID", description: "Telegram chat id"},
  "channel-order": {
    type: "string",
    multiple: true,
    value: "CH,CH",
    description: "channels in the order they are tried"
  },
  "ack-timeout": {
    type: "string",
    value: "SECONDS",
    description: "seconds to wait for an acknowledgement before the next step (15-3600)"
  },
  repeat: {type: "string", value: "N", description: "how many more times the chain runs after the first pass (0-10)"},
  data: {
    type: "string",
    value: "JSON",
    description: "further fields as a JSON object (quiet_hours, routing_rules, ...); flags win"
  }
};

/** The recipient fields given on the command line; `--data` first, so explicit flags win over it. */
function recipientFields(ctx: CommandContext): Record<string, unknown> {
  const data = jsonObjectOption(ctx, "data");
  const ackTimeout = integerOption(ctx, "ack-timeout");
  const repeat = integerOption(ctx, "repeat");
  const escalation =
    ackTimeout === undefined && repeat === undefined
      ? undefined
      : definedFields({...(data.escalation as object | undefined), ack_timeout_seconds: ackTimeout, repeat});
  return {
    ...data,
    ...definedFields({
      name: stringOption(ctx, "name"),
      phone: stringOption(ctx, "phone"),
      email: stringOption(ctx, "email"),
      telegram_id: stringOption(ctx, "telegram-id"),
      channel_order: listOption(ctx, "channel-order"),
      escalation
    })
  };
}

function quietHoursText(quiet: Recipient["quiet_hours"]): string | null {
  if (!quiet) return null;
  return `${quiet.start}-${quiet.end} ${quiet.timezone}, still paging ${list(quiet.allow_priorities ?? ["critical"])}`;
}

function recipientText(r: Recipient): string {
  const fields = fieldsText([
    ["uuid", r.uuid],
    ["name", r.name],
    ["phone", r.phone],
    ["email", r.email],
    ["telegram id", r.telegram_id],
    ["channel order", list(r.channel_order)],
    ["escalation", `ack timeout ${r.escalation.ack_timeout_seconds} s, repeat ${r.escalation.repeat}`],
    ["quiet hours", quietHoursText(r.quiet_hours)],
    [
      "routing rules",
      r.routing_rules.map((rule) => `${rule.priorities.join("/")} -> ${list(rule.channels)}`).join("; ")
    ],
    ["created", timeText(r.created_at, r.quiet_hours?.timezone)],
    ["updated", timeText(r.updated_at, r.quiet_hours?.timezone)]
  ]);
  const channels = tableText(
    ["CHANNEL", "AVAILABLE", "REASON"],
    r.channels.map((c) => [c.channel, c.available ? "yes" : "no", c.reason])
  );
  return `${fields}\n\nchannels:\n${channels}`;
}

const path = (uuid?: string) => (uuid ? `api/v1/recipients/${segment(uuid)}` : "api/v1/recipients");

export const recipientCommands: Command[] = [
  {
    words: ["recipients", "list"],
    summary: "list recipients with their channel capabilities",
    options: PAGE_OPTIONS,
    async run(ctx) {
      const page = await fetchPages<Recipient>(ctx, path());
      printResult(ctx, page, () => {
        if (!page.items.length) return "no recipients";
        const rows = page.items.map((r) => [
          r.uuid,
          r.name,
          r.phone,
          r.email,
          r.telegram_id,
          list(r.channels.filter((c) => c.available).map((c) => c.channel))
        ]);
        const table = tableText(["UUID", "NAME", "PHONE", "EMAIL", "TELEGRAM", "AVAILABLE CHANNELS"], rows);
        const hint = morePagesHint("recipients list", page);
        return hint ? `${table}\n${hint}` : table;
      });
    }
  },
  {
    words: ["recipients", "get"],
    summary: "show one recipient",
    args: "<uuid>",
    arity: [1, 1],
    async run(ctx) {
      const answer = await ctx
        .api()
        .request<Recipient>({method: "GET", path: path(ctx.positionals[0]), retry: "idempotent"});
      printResult(ctx, answer.body, () => recipientText(answer.body));
    }
  },
  {
    words: ["recipients", "create"],
    summary: "create a recipient (at least one of --phone, --email, --telegram-id)",
    options: FIELD_OPTIONS,
    async run(ctx) {
      const body = recipientFields(ctx);
      if (!body.phone && !body.email && !body.telegram_id)
        throw new UsageError("give at least one contact: --phone, --email or --telegram-id");
      const answer = await ctx.api().request<Recipient>({method: "POST", path: path(), body, retry: "create"});
      printResult(ctx, answer.body, () => `created recipient ${answer.body.uuid}\n\n${recipientText(answer.body)}`);
    }
  },
  {
    words: ["recipients", "update"],
    summary:
      "change a recipient (a merge patch: only the fields given change; --data '{\"quiet_hours\": null}' clears one)",
    args: "<uuid>",
    arity: [1, 1],
    options: FIELD_OPTIONS,
    async run(ctx) {
      const patch = recipientFields(ctx);
      if (!Object.keys(patch).length) throw new UsageError("nothing to change: give at least one field flag or --data");
      const answer = await ctx.api().request<Recipient>({
        method: "PATCH",
        path: path(ctx.positionals[0]),
        body: patch,
        headers: {"Content-Type": "application/merge-patch+json"},
        retry: "idempotent"
      });
      printResult(ctx, answer.body, () => `updated recipient ${answer.body.uuid}\n\n${recipientText(answer.body)}`);
    }
  },
  {
    words: ["recipients", "delete"],
    summary: "delete a recipient (refused while in a group or on an open notification)",
    args: "<uuid>",
    arity: [1, 1],
    async run(ctx) {
      await ctx.api().request({method: "DELETE", path: path(ctx.positionals[0]), retry: "idempotent"});
      printResult(ctx, {deleted: ctx.positionals[0]}, () => `deleted recipient ${ctx.positionals[0]}`);
    }
  }
];
