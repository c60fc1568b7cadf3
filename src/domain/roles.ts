import type {Scope} from "./vocabulary.js";

/** A dashboard user's role, widest first. */
export const ROLES = ["admin", "operator", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/**
 * What a route grants below admin, beside its scope: "read" lets viewers and operators call an
 * admin-scoped read (the audit log), "operate" lets operators make a change that is part of a
 * shift's work (maintenance windows, schedule overrides, test pages). Without a grant, an
 * admin-scoped or write-scoped route is for admins only.
 */
export type RoleGrant = "read" | "operate";

const READ_SCOPES: ReadonlySet<Scope> = new Set(["notifications:read", "recipients:read"]);

/** Whether a dashboard user with `role` may call a route with `scope` and `grant`. */
export function roleAllows(role: Role, scope: Scope, grant: RoleGrant | undefined): boolean {
  if (role === "admin") return true;
  if (READ_SCOPES.has(scope) || grant === "read") return true;
  return role === "operator" && (scope === "notifications:ack" || grant === "operate");
}

const ROLE_WORDS: Record<Role, string> = {
  admin: "everything",
  operator: "read, acknowledge and resolve alerts, maintenance windows, schedule overrides and test pages",
  viewer: "read"
};

/** The 403's words for a user whose role may not do something: what the role may do, and who can help. */
export function refusalFor(name: string, role: Role): string {
  return `${name} is signed in as ${role}, which may only ${ROLE_WORDS[role]}: ask an admin to do this or to change your role`;
}
