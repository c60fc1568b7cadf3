import {
  listOption,
  printResult,
  requiredOption,
  segment,
  stringOption,
  type Command,
  type CommandContext
} from "../command.js";
import {UsageError} from "../failures.js";
import {clip, fieldsText, list, tableText, timeText, type Cell} from "../output.js";
import {targetUuid} from "../targets.js";
import {fetchPages, PAGE_OPTIONS} from "./pages.js";

// The commands the device CLI has (oncall, maintenance) and the box's listings of schedules,
// heartbeats and integrations: same flags, --json and exit codes as the Go `klaxon`.

const ISO_WITH_ZONE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;
const MAINTENANCE_STATUSES = ["upcoming", "active", "ended"];
const DURATION_UNITS_MS: Record<string, number> = {h: 3_600_000, m: 60_000, s: 1000};

interface Person {
  name: string;
}
interface OnCall {
  at: string;
  recipients: Person[];
  shift: {
    starts_at: string;
    ends_at: string;
    target: {name: string; kind: string};
    source: string;
    layer_name: string | null;
    shift_name: string | null;
    crew: string | null;
  } | null;
  fallback: {name: string} | null;
}
interface Window {
  uuid: string;
  status: string;
  starts_at: string;
  ends_at: string;
  reason: string;
  targets: string[];
  sources: string[];
  integrations: string[];
  heartbeats: string[];
}

function isoOption(name: string, value: string): string {
  if (!ISO_WITH_ZONE.test(value) || Number.isNaN(Date.parse(value)))
    throw new UsageError(
      `--${name} must be an ISO 8601 time with a zone, e.g. 2026-11-26T06:00:00+01:00, got "${value}"`
    );
  return new Date(value).toISOString();
}

/** "2h", "90m", "1h30m" as the Go CLI reads them. */
function durationMs(value: string): number {
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)([hms])/g)];
  const total = parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * DURATION_UNITS_MS[unit], 0);
  if (!parts.length || parts.map((part) => part[0]).join("") !== value || total <= 0)
    throw new UsageError(`--for must be a duration such as 2h, 90m or 1h30m, got "${value}"`);
  return total;
}

function shiftReason(shift: NonNullable<OnCall["shift"]>): string {
  if (shift.source === "override") return "override";
  const parts = [shift.shift_name, shift.crew ? `crew ${shift.crew}` : null, shift.layer_name].filter(Boolean);
  return parts.length ? parts.join(", ") : shift.source;
}

// Shift times as the plant reads them: in the schedule's zone, named (issue 33); --json keeps the ISO instants.
function onCallText(answer: OnCall, timeZone: string | undefined): string {
  const local = (iso: string) => timeText(iso, timeZone);
  const names = list(answer.recipients.map((person) => person.name));
  if (!answer.shift)
    return fieldsText([
      ["on call", names],
      ["shift", `none: a gap, the fallback ${answer.fallback?.name ?? "-"} is paged`],
      ["at", local(answer.at)]
    ]);
  return fieldsText([
    ["on call", names],
    ["paged", `${answer.shift.target.name} (${answer.shift.target.kind})`],
    ["shift", shiftReason(answer.shift)],
    ["from", local(answer.shift.starts_at)],
    ["until", local(answer.shift.ends_at)]
  ]);
}

function windowText(window: Window): string {
  const holds = (["targets", "sources", "integrations", "heartbeats"] as const)
    .filter((kind) => window[kind].length)
    .map((kind) => `${kind}: ${window[kind].join(", ")}`);
  return fieldsText([
    ["maintenance", window.uuid],
    ["status", window.status],
    ["from", timeText(window.starts_at)],
    ["until", timeText(window.ends_at)],
    ["reason", window.reason],
    ["holds", holds.join("; ")]
  ]);
}

async function scheduleZone(ctx: CommandContext, schedule: string): Promise<string> {
  const answer = await ctx.api().request<{timezone: string}>({
    method: "GET",
    path: `api/v1/schedules/${segment(schedule)}`,
    retry: "idempotent"
  });
  return answer.body.timezone;
}

const oncall: Command = {
  words: ["oncall"],
  summary: "who a schedule (by name or uuid) pages now, or at --at, and the shift that puts them on call",
  args: "<schedule>",
  arity: [1, 1],
  options: {at: {type: "string", value: "TIME", description: "an ISO 8601 time with a zone instead of now"}},
  async run(ctx) {
    const at = stringOption(ctx, "at");
    const schedule = await targetUuid(ctx, ctx.positionals[0]);
    const answer = await ctx.api().request<OnCall>({
      method: "GET",
      path: `api/v1/schedules/${segment(schedule)}/on-call`,
      query: {at: at === undefined ? undefined : isoOption("at", at)},
      retry: "idempotent"
    });
    const timeZone = ctx.json ? undefined : await scheduleZone(ctx, schedule);
    printResult(ctx, answer.body, () => onCallText(answer.body, timeZone));
  }
};

const maintenanceStart: Command = {
  words: ["maintenance", "start"],
  summary: "start a maintenance window (or plan one with --from): the alerts it covers page nobody until it ends",
  options: {
    for: {
      type: "string",
      value: "DURATION",
      description: "how long from the start, e.g. 2h, 90m, 1h30m (this or --until)"
    },
    until: {type: "string", value: "TIME", description: "when it ends, ISO 8601 with a zone"},
    from: {type: "string", value: "TIME", description: "when it begins, ISO 8601 with a zone (default: now)"},
    reason: {type: "string", value: "TEXT", description: "why, for whoever reads the audit later (required)"},
    target: {
      type: "string",
      multiple: true,
      value: "TARGET",
      description: "hold alerts to this recipient, group or schedule, by name or uuid (repeatable)"
    },
    source: {type: "string", multiple: true, value: "S", description: "hold alerts with this source (repeatable)"},
    integration: {
      type: "string",
      multiple: true,
      value: "ID",
      description: "hold every alert through this integration (repeatable)"
    },
    heartbeat: {
      type: "string",
      multiple: true,
      value: "NAME",
      description: "page for this heartbeat only if still down at the end (repeatable)"
    }
  },
  async run(ctx) {
    const reason = requiredOption(ctx, "reason");
    const [length, until, from] = [stringOption(ctx, "for"), stringOption(ctx, "until"), stringOption(ctx, "from")];
    if ((length === undefined) === (until === undefined)) throw new UsageError("give one of --for or --until");
    const startsAt = from === undefined ? undefined : isoOption("from", from);
    const endsAt =
      until !== undefined
        ? isoOption("until", until)
        : new Date((startsAt ? Date.parse(startsAt) : Date.now()) + durationMs(length as string)).toISOString();
    const targets = await Promise.all((listOption(ctx, "target") ?? []).map((ref) => targetUuid(ctx, ref)));
    const answer = await ctx.api().request<Window>({
      method: "POST",
      path: "api/v1/maintenance",
      body: {
        reason,
        ...(startsAt ? {starts_at: startsAt} : {}),
        ends_at: endsAt,
        targets,
        sources: listOption(ctx, "source") ?? [],
        integrations: listOption(ctx, "integration") ?? [],
        heartbeats: listOption(ctx, "heartbeat") ?? []
      },
      retry: "create"
    });
    printResult(ctx, answer.body, () => windowText(answer.body));
  }
};

const maintenanceEnd: Command = {
  words: ["maintenance", "end"],
  summary: "end a maintenance window now: what it held and is still firing pages at once",
  args: "<uuid>",
  arity: [1, 1],
  async run(ctx) {
    const answer = await ctx.api().request<Window>({
      method: "POST",
      path: `api/v1/maintenance/${segment(ctx.positionals[0])}/end`,
      retry: "idempotent"
    });
    printResult(ctx, answer.body, () => windowText(answer.body));
  }
};

const maintenanceList: Command = {
  words: ["maintenance", "list"],
  summary: "list maintenance windows, latest start first",
  options: {status: {type: "string", value: "S", description: MAINTENANCE_STATUSES.join(", ")}, ...PAGE_OPTIONS},
  async run(ctx) {
    const status = stringOption(ctx, "status");
    if (status !== undefined && !MAINTENANCE_STATUSES.includes(status))
      throw new UsageError(`--status must be one of ${MAINTENANCE_STATUSES.join(", ")}`);
    const page = await fetchPages<Window>(ctx, "api/v1/maintenance", {status});
    printResult(ctx, page, () =>
      page.items.length
        ? tableText(
            ["UUID", "STATUS", "FROM", "UNTIL", "REASON"],
            page.items.map((w) => [w.uuid, w.status, timeText(w.starts_at), timeText(w.ends_at), clip(w.reason, 60)])
          )
        : "no maintenance windows"
    );
  }
};

/** `schedules list`, `heartbeats list`, `integrations list`: one table each, by name. */
function listing<T>(noun: string, path: string, columns: string[], row: (item: T) => Cell[]): Command {
  return {
    words: [noun, "list"],
    summary: `list ${noun}`,
    options: PAGE_OPTIONS,
    async run(ctx) {
      const page = await fetchPages<T>(ctx, path);
      printResult(ctx, page, () => (page.items.length ? tableText(columns, page.items.map(row)) : `no ${noun}`));
    }
  };
}

export const operationsCommands: Command[] = [
  oncall,
  maintenanceStart,
  maintenanceEnd,
  maintenanceList,
  listing<{uuid: string; name: string; timezone: string; fallback: string}>(
    "schedules",
    "api/v1/schedules",
    ["UUID", "NAME", "ZONE", "FALLBACK"],
    (s) => [s.uuid, s.name, s.timezone, s.fallback]
  ),
  listing<{name: string; status: string; period_seconds: number; target: string}>(
    "heartbeats",
    "api/v1/heartbeats",
    ["NAME", "STATUS", "EVERY (S)", "PAGES"],
    (b) => [b.name, b.status, b.period_seconds, b.target]
  ),
  // LINK: a modbus or opcua integration's device link now (docs/integrations.md), "-" for the other kinds.
  listing<{id: string; name: string; kind: string; target: string; link?: {state: string} | null}>(
    "integrations",
    "api/v1/integrations",
    ["ID", "NAME", "KIND", "PAGES", "LINK"],
    (i) => [i.id, i.name, i.kind, i.target, i.link === undefined ? "-" : (i.link?.state ?? "starting")]
  )
];
