import {integerOption, PROGRAM, stringOption, type CommandContext, type OptionSpec} from "../command.js";
import {UsageError} from "../failures.js";

/** The paging flags every list command takes. */
export const PAGE_OPTIONS: Record<string, OptionSpec> = {
  limit: {type: "string", value: "N", description: "items per page, 1-200 (the gateway's default is 50)"},
  cursor: {type: "string", value: "CURSOR", description: "continue from a previous page's next cursor"},
  all: {type: "boolean", description: "follow every page to the end"}
};

/** A page as the gateway returns it. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * One page, or with --all every page concatenated into the same shape (next_cursor null), so --json
 * output has one form whichever way it was fetched.
 */
export async function fetchPages<T>(
  ctx: CommandContext,
  path: string,
  filters: Record<string, string | undefined> = {}
): Promise<Page<T>> {
  const all = ctx.values.all === true;
  const limit = integerOption(ctx, "limit");
  if (limit !== undefined && (limit < 1 || limit > 200)) throw new UsageError("--limit must be from 1 to 200");
  let cursor = stringOption(ctx, "cursor");
  const items: T[] = [];
  for (;;) {
    const answer = await ctx.api().request<Page<T>>({
      method: "GET",
      path,
      query: {...filters, limit: limit?.toString(), cursor},
      retry: "idempotent"
    });
    items.push(...answer.body.items);
    if (!all || !answer.body.next_cursor) return {items, next_cursor: all ? null : answer.body.next_cursor};
    cursor = answer.body.next_cursor;
  }
}

/** The hint under a human-readable page that has more after it. */
export function morePagesHint(command: string, page: Page<unknown>): string | null {
  return page.next_cursor ? `more: ${PROGRAM} ${command} --cursor ${page.next_cursor}` : null;
}
