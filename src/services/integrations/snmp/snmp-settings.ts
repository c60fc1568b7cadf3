import type {SnmpTrapIntegrationFields, SnmpV3User} from "../../../domain/snmp-trap.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {FieldError} from "../../shared/errors.js";

/** The snmp_trap fields a client writes (all optional in a request). */
export type SnmpTrapInput = SnmpTrapIntegrationFields;

/** What the API shows of a trap integration's settings: never the community or a key. */
export interface SnmpTrapView {
  community_set: boolean;
  v3_users: Pick<SnmpV3User, "name" | "auth_protocol" | "priv_protocol">[];
  trap_rules: NonNullable<SnmpTrapIntegrationFields["trap_rules"]>;
}

/** The snmp_trap fields, in the order the API lists them; writable by merge patch like the others. */
export const SNMP_TRAP_FIELDS = [
  "community",
  "v3_users",
  "trap_rules"
] as const satisfies readonly (keyof SnmpTrapIntegrationFields)[];

const PLACEHOLDER = /\{([^}]*)\}/g;
const NUMERIC_OID = /^[0-9]+(\.[0-9]+)+$/;

/**
 * The trap fields' problems: a trap integration needs a community or a v3 user, and neither may
 * be another trap integration's (they say which integration a trap is for); rule templates name
 * bindings by numeric OID. Another kind may not carry them. The API's schema has checked types
 * and lengths.
 */
export function snmpTrapFieldProblems(
  kind: IntegrationRecord["kind"],
  input: SnmpTrapInput,
  others: readonly IntegrationRecord[]
): FieldError[] {
  const given = SNMP_TRAP_FIELDS.filter((field) => input[field] !== undefined && input[field] !== null);
  if (kind !== "snmp_trap")
    return given.map((field) => ({pointer: `/${field}`, detail: `only an snmp_trap integration has ${field}`}));
  const traps = others.filter((other) => other.kind === "snmp_trap");
  const errors: FieldError[] = [];
  if (!input.community && !input.v3_users?.length)
    errors.push({pointer: "/community", detail: "an snmp_trap integration needs a community, v3_users, or both"});
  if (input.community && traps.some((other) => other.community === input.community))
    errors.push({pointer: "/community", detail: "another snmp_trap integration uses this community"});
  const names = new Set<string>();
  for (const [index, user] of (input.v3_users ?? []).entries()) {
    if (names.has(user.name) || traps.some((other) => other.v3_users?.some((taken) => taken.name === user.name)))
      errors.push({pointer: `/v3_users/${index}/name`, detail: "another v3 user of a trap integration has this name"});
    names.add(user.name);
  }
  for (const [index, rule] of (input.trap_rules ?? []).entries())
    for (const field of ["alert_key", "title"] as const)
      for (const [, inside] of (rule[field] ?? "").matchAll(PLACEHOLDER))
        if (!NUMERIC_OID.test(inside))
          errors.push({pointer: `/trap_rules/${index}/${field}`, detail: `{${inside}} is not a binding's numeric OID`});
  return errors;
}

/** The trap fields of a stored integration as the API shows them. */
export function snmpTrapView(integration: IntegrationRecord): SnmpTrapView {
  return {
    community_set: Boolean(integration.community),
    v3_users: (integration.v3_users ?? []).map(({name, auth_protocol, priv_protocol}) => ({
      name,
      auth_protocol,
      priv_protocol
    })),
    trap_rules: integration.trap_rules ?? []
  };
}

/** The trap fields set in `source`, to spread into a record or into a merge patch's base document. */
export function snmpTrapFields(source: SnmpTrapInput): SnmpTrapIntegrationFields {
  return Object.fromEntries(
    SNMP_TRAP_FIELDS.filter((field) => source[field] !== undefined && source[field] !== null).map((field) => [
      field,
      source[field]
    ])
  );
}
