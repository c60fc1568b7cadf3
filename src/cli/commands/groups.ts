import {
  definedFields,
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

/** A recipient group (CONTRACT section 4). */
interface Group {
  uuid: string;
  name: string;
  members: string[];
  strategy: string;
  created_at: string;
  updated_at: string;
}

const FIELD_OPTIONS: Record<string, OptionSpec> = {
  name: {type: "string", value: "NAME", description: "group name"},
  member: {
    type: "string",
    multiple: true,
    value: "UUID",
    description: "a member recipient uuid, in paging order (repeat the flag or separate with commas)"
  },
  strategy: {
    type: "string",
    value: "S",
    description: "sequential (one member at a time) or parallel (every member each step)"
  },
  data: {type: "string", value: "JSON", description: "the fields as a JSON object; flags win"}
};

function groupFields(ctx: CommandContext): Record<string, unknown> {
  return {
    ...jsonObjectOption(ctx, "data"),
    ...definedFields({
      name: stringOption(ctx, "name"),
      members: listOption(ctx, "member"),
      strategy: stringOption(ctx, "strategy")
    })
  };
}

function groupText(g: Group): string {
  return fieldsText([
    ["uuid", g.uuid],
    ["name", g.name],
    ["strategy", g.strategy],
    ["members", list(g.members)],
    ["created", timeText(g.created_at)],
    ["updated", timeText(g.updated_at)]
  ]);
}

const path = (uuid?: string) => (uuid ? `api/v1/groups/${segment(uuid)}` : "api/v1/groups");

export const groupCommands: Command[] = [
  {
    words: ["groups", "list"],
    summary: "list recipient groups",
    options: PAGE_OPTIONS,
    async run(ctx) {
      const page = await fetchPages<Group>(ctx, path());
      printResult(ctx, page, () => {
        if (!page.items.length) return "no groups";
        const table = tableText(
          ["UUID", "NAME", "STRATEGY", "MEMBERS"],
          page.items.map((g) => [g.uuid, g.name, g.strategy, g.members.length])
        );
        const hint = morePagesHint("groups list", page);
        return hint ? `${table}\n${hint}` : table;
      });
    }
  },
  {
    words: ["groups", "get"],
    summary: "show one group",
    args: "<uuid>",
    arity: [1, 1],
    async run(ctx) {
      const answer = await ctx
        .api()
        .request<Group>({method: "GET", path: path(ctx.positionals[0]), retry: "idempotent"});
      printResult(ctx, answer.body, () => groupText(answer.body));
    }
  },
  {
    words: ["groups", "create"],
    summary: "create a group of recipients",
    options: FIELD_OPTIONS,
    async run(ctx) {
      const body = groupFields(ctx);
      if (!body.name || !body.members) throw new UsageError("--name and at least one --member are required");
      const answer = await ctx.api().request<Group>({method: "POST", path: path(), body, retry: "create"});
      printResult(ctx, answer.body, () => `created group ${answer.body.uuid}\n\n${groupText(answer.body)}`);
    }
  },
  {
    words: ["groups", "update"],
    summary: "change a group (merge patch; --member replaces the whole member list)",
    args: "<uuid>",
    arity: [1, 1],
    options: FIELD_OPTIONS,
    async run(ctx) {
      const patch = groupFields(ctx);
      if (!Object.keys(patch).length)
        throw new UsageError("nothing to change: give --name, --member, --strategy or --data");
      const answer = await ctx.api().request<Group>({
        method: "PATCH",
        path: path(ctx.positionals[0]),
        body: patch,
        headers: {"Content-Type": "application/merge-patch+json"},
        retry: "idempotent"
      });
      printResult(ctx, answer.body, () => `updated group ${answer.body.uuid}\n\n${groupText(answer.body)}`);
    }
  },
  {
    words: ["groups", "delete"],
    summary: "delete a group (refused while it is the target of an open notification)",
    args: "<uuid>",
    arity: [1, 1],
    async run(ctx) {
      await ctx.api().request({method: "DELETE", path: path(ctx.positionals[0]), retry: "idempotent"});
      printResult(ctx, {deleted: ctx.positionals[0]}, () => `deleted group ${ctx.positionals[0]}`);
    }
  }
];
