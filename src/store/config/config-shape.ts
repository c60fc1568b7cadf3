import {CorruptConfigError} from "./atomic-json-file.js";

/** The lists every config file has held since the first release, and the field each item is found by. */
const REQUIRED_LISTS = {recipients: "uuid", groups: "uuid", api_keys: "id", webhooks: "id"} as const;
/** Lists added later: a file written before them lacks them, and they start empty. */
const LATER_LISTS = {
  heartbeats: "name",
  integrations: "id",
  schedules: "uuid",
  escalation_policies: "uuid",
  calendar_feeds: "recipient_uuid",
  contact_verifications: "recipient_uuid",
  dashboard_users: "id"
} as const;

/** The id the single admin of releases before named users keeps as a user. */
export const FORMER_ADMIN_ID = "usr_admin";

/**
 * A store from before named users holds one admin password: it becomes the admin user "admin"
 * (the same hash, so the same password signs in), and the old field is emptied so it is moved once.
 */
function movedFormerAdmin(dashboard: Record<string, unknown>, users: unknown[]) {
  if (users.length > 0 || typeof dashboard.password_hash !== "string") return {dashboard, users};
  const at = typeof dashboard.password_set_at === "string" ? dashboard.password_set_at : "1970-01-01T00:00:00.000Z";
  const admin = {
    id: FORMER_ADMIN_ID,
    name: "admin",
    role: "admin",
    recipient_uuid: null,
    password_hash: dashboard.password_hash,
    password_set_at: at,
    created_at: at,
    updated_at: at
  };
  return {dashboard: {password_hash: null, password_set_at: null}, users: [admin]};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Checks the outline of a parsed config file: an object of version 1 with each list a list of
 * objects carrying their key field. `{}`, `[]` or `null` would otherwise read as an empty store,
 * and a list of the wrong type would fail every request that reads it; both stop the start here
 * with a message naming the file and its backup. Returns the data with later lists filled in
 * (and a former single admin password moved to a named user).
 */
export function checkConfigShape<T>(parsed: unknown, path: string, backupNote: string): T {
  const refuse = (what: string): never => {
    throw new CorruptConfigError(
      `config store ${path} ${what}; ${backupNote}. Klaxon will not start on a damaged file: restore it or move it away.`
    );
  };
  if (!isRecord(parsed)) return refuse(`holds ${describe(parsed)}, not a Klaxon config store (a JSON object)`);
  if (parsed.version !== 1) return refuse(`has version ${JSON.stringify(parsed.version) ?? "(none)"}, not 1`);
  const lists: Record<string, unknown[]> = {};
  for (const [name, key] of Object.entries({...REQUIRED_LISTS, ...LATER_LISTS})) {
    const list = parsed[name] ?? (name in LATER_LISTS ? [] : undefined);
    if (!Array.isArray(list))
      return refuse(list === undefined ? `has no "${name}" list` : `has "${name}" as ${describe(list)}, not a list`);
    const bad = list.findIndex((item) => !isRecord(item) || typeof item[key] !== "string");
    if (bad >= 0) return refuse(`has "${name}[${bad}]" without a "${key}" text field`);
    lists[name] = list;
  }
  const dashboard = parsed.dashboard ?? {password_hash: null, password_set_at: null};
  if (!isRecord(dashboard) || !(dashboard.password_hash === null || typeof dashboard.password_hash === "string")) {
    return refuse(`has "dashboard" without a "password_hash" (text or null)`);
  }
  const moved = movedFormerAdmin(dashboard, lists.dashboard_users);
  lists.dashboard_users = moved.users;
  const journal = parsed.journal;
  if (
    journal !== undefined &&
    !(
      isRecord(journal) &&
      typeof journal.id === "string" &&
      Number.isInteger(journal.commits) &&
      typeof journal.open === "boolean"
    )
  ) {
    return refuse(`has "journal" without its "id" (text), "commits" (a whole number) and "open" (true or false)`);
  }
  return {...parsed, ...lists, dashboard: moved.dashboard} as T;
}
