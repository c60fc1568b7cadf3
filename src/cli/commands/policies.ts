import {
  integerOption,
  jsonObjectOption,
  printResult,
  stringOption,
  type Command,
  type CommandContext
} from "../command.js";
import {UsageError} from "../failures.js";
import {fieldsText, tableText, timeText} from "../output.js";
import {targetUuid} from "../targets.js";
import {fetchPages, morePagesHint, PAGE_OPTIONS} from "./pages.js";

/** An escalation policy (docs/api.md#escalation-policies). */
interface Policy {
  uuid: string;
  name: string;
  repeat: number;
  levels: Array<{targets: string[]; escalate_after_minutes: number | null}>;
  created_at: string;
}

const PATH = "api/v1/escalation-policies";

/** `--level "Night shift,Sven@10"`: targets by name or uuid, comma-separated, then `@` and the minutes before the next level. */
async function level(ctx: CommandContext, spec: string): Promise<Policy["levels"][number]> {
  const at = spec.lastIndexOf("@");
  const [refs, minutes] = at < 0 ? [spec, null] : [spec.slice(0, at), spec.slice(at + 1)];
  if (minutes !== null && !/^\d+$/.test(minutes))
    throw new UsageError(`--level ${JSON.stringify(spec)}: the minutes after @ must be a whole number`);
  const names = refs
    .split(",")
    .map((ref) => ref.trim())
    .filter(Boolean);
  if (!names.length) throw new UsageError(`--level ${JSON.stringify(spec)} names no target`);
  const targets: string[] = [];
  for (const name of names) targets.push(await targetUuid(ctx, name));
  return {targets, escalate_after_minutes: minutes === null ? null : Number(minutes)};
}

function policyText(p: Policy): string {
  return fieldsText([
    ["uuid", p.uuid],
    ["name", p.name],
    ["repeat", String(p.repeat)],
    ...p.levels.map((each, index): [string, string] => [
      `level ${index + 1}`,
      `${each.targets.join(", ")}${each.escalate_after_minutes === null ? "" : `, next level after ${each.escalate_after_minutes} min`}`
    ]),
    ["created", timeText(p.created_at)]
  ]);
}

export const policyCommands: Command[] = [
  {
    words: ["policies", "list"],
    summary: "list escalation policies",
    options: PAGE_OPTIONS,
    async run(ctx) {
      const page = await fetchPages<Policy>(ctx, PATH);
      printResult(ctx, page, () => {
        if (!page.items.length) return "no escalation policies";
        const table = tableText(
          ["UUID", "NAME", "LEVELS", "REPEAT"],
          page.items.map((p) => [p.uuid, p.name, p.levels.length, p.repeat])
        );
        const hint = morePagesHint("policies list", page);
        return hint ? `${table}\n${hint}` : table;
      });
    }
  },
  {
    words: ["policies", "create"],
    summary: "create an escalation policy: --level per level, in order",
    options: {
      name: {type: "string", value: "NAME", description: "policy name"},
      level: {
        type: "string",
        multiple: true,
        value: "TARGETS[@MIN]",
        description:
          'a level: recipients, groups or schedules by name or uuid, comma-separated, and @ the minutes before the next level (e.g. "Line 3 on call@10"); repeat the flag per level'
      },
      repeat: {type: "string", value: "N", description: "how many more times the whole policy runs (default 0)"},
      data: {type: "string", value: "JSON", description: "the fields as a JSON object; flags win"}
    },
    async run(ctx) {
      const raw = ctx.values.level;
      const specs = Array.isArray(raw) ? raw : [];
      const levels = [];
      for (const spec of specs) levels.push(await level(ctx, spec));
      const repeat = integerOption(ctx, "repeat");
      const body = {
        ...jsonObjectOption(ctx, "data"),
        ...(stringOption(ctx, "name") === undefined ? {} : {name: stringOption(ctx, "name")}),
        ...(levels.length ? {levels} : {}),
        ...(repeat === undefined ? {} : {repeat})
      };
      if (!body.name || !body.levels) throw new UsageError("--name and at least one --level are required");
      const answer = await ctx.api().request<Policy>({method: "POST", path: PATH, body, retry: "create"});
      printResult(
        ctx,
        answer.body,
        () => `created escalation policy ${answer.body.uuid}\n\n${policyText(answer.body)}`
      );
    }
  }
];
