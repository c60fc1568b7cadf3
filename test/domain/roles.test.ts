import {describe, expect, it} from "vitest";
import {refusalFor, roleAllows, ROLES, type RoleGrant} from "../../src/domain/roles.js";
import {SCOPES} from "../../src/domain/vocabulary.js";

const GRANTS: Array<RoleGrant | undefined> = [undefined, "read", "operate"];
const everyRoute = SCOPES.flatMap((scope) => GRANTS.map((grant) => [scope, grant] as const));

describe("what a dashboard user's role may do", () => {
  it("nests: whatever a viewer may, an operator may, and whatever an operator may, an admin may", () => {
    for (const [scope, grant] of everyRoute) {
      if (roleAllows("viewer", scope, grant))
        expect(roleAllows("operator", scope, grant), `${scope} ${grant}`).toBe(true);
      if (roleAllows("operator", scope, grant))
        expect(roleAllows("admin", scope, grant), `${scope} ${grant}`).toBe(true);
    }
  });

  it("lets every role read, operators acknowledge and operate, and only admins do the rest", () => {
    const allowed = (scope: (typeof SCOPES)[number], grant?: RoleGrant) =>
      ROLES.filter((role) => roleAllows(role, scope, grant));
    expect(allowed("notifications:read")).toEqual(["admin", "operator", "viewer"]);
    expect(allowed("recipients:read")).toEqual(["admin", "operator", "viewer"]);
    expect(allowed("admin", "read")).toEqual(["admin", "operator", "viewer"]);
    expect(allowed("notifications:ack")).toEqual(["admin", "operator"]);
    expect(allowed("recipients:write", "operate")).toEqual(["admin", "operator"]);
    for (const scope of ["notifications:send", "recipients:write", "admin"] as const)
      expect(allowed(scope), scope).toEqual(["admin"]);
  });

  it("says in the refusal who is signed in, as what, and what that role may do", () => {
    expect(refusalFor("Victor", "viewer")).toBe(
      "Victor is signed in as viewer, which may only read: ask an admin to do this or to change your role"
    );
    expect(refusalFor("Maria", "operator")).toContain("acknowledge and resolve alerts, maintenance windows");
  });
});
