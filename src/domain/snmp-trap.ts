import type {Priority} from "./vocabulary.js";

/**
 * One way to read a trap: the trap it is for, the bindings it needs, and what it does. Both the
 * built-in table (services/integrations/snmp/snmp-traps.ts) and an integration's own `trap_rules`
 * have this shape.
 *
 * `alert_key` and `title` are templates: `{OID}` stands for the value of the first binding whose
 * OID is that OID or lies under it (a table column: `{1.3.6.1.2.1.2.2.1.1}` finds ifIndex.7).
 * In a title, a value that is a named OID (a UPS alarm, a trap) reads as its name.
 */
export interface TrapRule {
  /** The notification's OID, numeric (snmpTrapOID.0; a v1 trap's is derived as RFC 3584 says). */
  trap_oid: string;
  /** Every condition must hold: a binding at or under `oid` whose value is `equals`. */
  when?: {oid: string; equals: string}[];
  action: "fire" | "resolve";
  /** Fire and resolve of one condition share it; the agent's address is put in front. */
  alert_key: string;
  /** Default: the trap's name. */
  title?: string;
  /** Default: the integration's default priority. */
  priority?: Priority;
}

/** USM digests a v3 user may use (RFC 3414's SHA-1 and RFC 7860's SHA-2; MD5 is left out). */
export const SNMP_AUTH_PROTOCOLS = ["sha", "sha224", "sha256", "sha384", "sha512"] as const;
/** USM ciphers: AES-128 (RFC 3826) and the two AES-256 key localizations vendors use; DES is left out. */
export const SNMP_PRIV_PROTOCOLS = ["aes", "aes256b", "aes256r"] as const;

/** A v3 user of a trap integration: always authPriv (authenticated and encrypted). */
export interface SnmpV3User {
  name: string;
  auth_protocol: (typeof SNMP_AUTH_PROTOCOLS)[number];
  /** A pass phrase (RFC 3414: at least 8 characters); write-only. */
  auth_key: string;
  priv_protocol: (typeof SNMP_PRIV_PROTOCOLS)[number];
  /** Write-only. */
  priv_key: string;
}

/** What an snmp_trap integration holds beside the fields every integration has. */
export interface SnmpTrapIntegrationFields {
  /** The v1/v2c community its devices send with; write-only, and no two trap integrations share one. */
  community?: string;
  /** SNMPv3 users its devices send as; user names are unique across trap integrations. */
  v3_users?: SnmpV3User[];
  /** Read before the built-in table, first match wins. */
  trap_rules?: TrapRule[];
}
