import {listOption, printResult, requiredOption, segment, stringOption, type Command} from "../command.js";
import {UsageError} from "../failures.js";
import {fieldsText, list, tableText, timeText} from "../output.js";

/** An API key as listed: never its secret (CONTRACT section 5). */
interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  owner: string | null;
}

export const keyCommands: Command[] = [
  {
    words: ["keys", "create"],
    summary: "create an API key for one integration (admin); the key is shown only this once",
    options: {
      name: {type: "string", value: "NAME", description: "what the key is for (required)"},
      scope: {
        type: "string",
        multiple: true,
        value: "SCOPE",
        description:
          "notifications:send, notifications:read, notifications:ack, recipients:read, recipients:write or admin (repeat or comma-separate)"
      },
      owner: {
        type: "string",
        value: "WHO",
        description: "who looks after the key, e.g. Maria (optional; the audit log shows it)"
      }
    },
    async run(ctx) {
      const name = requiredOption(ctx, "name");
      const scopes = listOption(ctx, "scope");
      if (!scopes?.length) throw new UsageError("give at least one --scope");
      const owner = stringOption(ctx, "owner");
      const answer = await ctx.api().request<ApiKey & {key: string}>({
        method: "POST",
        path: "api/v1/keys",
        body: owner === undefined ? {name, scopes} : {name, scopes, owner},
        retry: "create"
      });
      printResult(
        ctx,
        answer.body,
        () =>
          fieldsText([
            ["id", answer.body.id],
            ["name", answer.body.name],
            ["scopes", list(answer.body.scopes)],
            ["owner", answer.body.owner ?? "-"],
            ["key", answer.body.key]
          ]) + "\n\nStore the key now: the gateway keeps only its hash and cannot show it again."
      );
    }
  },
  {
    words: ["keys", "list"],
    summary: "list API keys (admin), without their secrets",
    async run(ctx) {
      const answer = await ctx
        .api()
        .request<{items: ApiKey[]}>({method: "GET", path: "api/v1/keys", retry: "idempotent"});
      printResult(ctx, answer.body, () =>
        tableText(
          ["ID", "NAME", "SCOPES", "CREATED", "LAST USED", "REVOKED", "OWNER"],
          answer.body.items.map((k) => [
            k.id,
            k.name,
            k.scopes.join(","),
            timeText(k.created_at),
            timeText(k.last_used_at),
            timeText(k.revoked_at),
            k.owner ?? "-"
          ])
        )
      );
    }
  },
  {
    words: ["keys", "revoke"],
    summary: "revoke an API key (admin); only that integration is affected",
    args: "<id>",
    arity: [1, 1],
    async run(ctx) {
      await ctx
        .api()
        .request({method: "DELETE", path: `api/v1/keys/${segment(ctx.positionals[0])}`, retry: "idempotent"});
      printResult(ctx, {revoked: ctx.positionals[0]}, () => `revoked key ${ctx.positionals[0]}`);
    }
  }
];
