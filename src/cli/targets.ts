import {segment, stringOption, type CommandContext} from "./command.js";

/** A uuid as the gateway makes them: taken as it is, without asking. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The uuid of the recipient, group or schedule `ref` names: a uuid as it is, a name through the
 * gateway's one resolver (GET /api/v1/targets/{ref}), whose 404 or 409 `ambiguous_name` (listing
 * the matches) is the command's error.
 */
export async function targetUuid(ctx: CommandContext, ref: string): Promise<string> {
  if (UUID.test(ref)) return ref;
  const answer = await ctx.api().request<{uuid: string}>({
    method: "GET",
    path: `api/v1/targets/${segment(ref)}`,
    retry: "idempotent"
  });
  return answer.body.uuid;
}

/** `--to NAME-OR-UUID` and the like: the option's target as a uuid, or undefined when not given. */
export async function targetOption(ctx: CommandContext, name: string): Promise<string | undefined> {
  const ref = stringOption(ctx, name);
  return ref === undefined ? undefined : targetUuid(ctx, ref);
}
