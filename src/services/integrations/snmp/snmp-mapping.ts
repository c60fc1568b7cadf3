import type {Priority} from "../../../domain/vocabulary.js";
import type {InboundAction} from "../intake/integration-payloads.js";
import type {TrapRule} from "../../../domain/snmp-trap.js";
import {NAMED_TRAPS, OID_NAMES} from "./snmp-traps.js";

/** What the mapping reads of a received trap. */
export interface TrapFacts {
  agent: string;
  trapOid: string;
  varbinds: {oid: string; value: string}[];
}

const ALERT_ID_MAX = 200;
const TITLE_MAX = 500;
const PLACEHOLDER = /\{([0-9]+(?:\.[0-9]+)*)\}/g;

/** The trap's name (from the built-in table) or, for one Klaxon does not know, its OID. */
export function trapName(trapOid: string): string {
  return OID_NAMES.get(trapOid) ?? trapOid;
}

/**
 * The trap as actions: the integration's own rules first, in order, then the built-in table; the
 * first rule whose trap and conditions match decides. No match: no action, and the trap is kept
 * in the integration's log. The alert key is `<agent>/<rule's key>`, so two devices behind one
 * integration never share an alert.
 */
export function trapActions(trap: TrapFacts, rules: readonly TrapRule[], defaultPriority: Priority): InboundAction[] {
  const rule = [...rules, ...NAMED_TRAPS].find((candidate) => matches(candidate, trap));
  if (!rule) return [];
  const alertId = clip(`${trap.agent}/${render(rule.alert_key, trap, "raw")}`, ALERT_ID_MAX);
  if (rule.action === "resolve") return [{action: "resolve", alert_id: alertId}];
  const title = rule.title ? render(rule.title, trap, "named") : trapName(trap.trapOid);
  return [
    {
      action: "fire",
      alert_id: alertId,
      message: clip(`${title} (${trap.agent})`, TITLE_MAX),
      priority: rule.priority ?? defaultPriority,
      source: trap.agent,
      link: null,
      service: null,
      environment: null
    }
  ];
}

/** The trap as text for the integration's log: its name, then one binding a line. */
export function trapText(trap: TrapFacts): string {
  return [
    `${trapName(trap.trapOid)} (${trap.trapOid}) from ${trap.agent}`,
    ...trap.varbinds.map(({oid, value}) => `${oid} = ${value}`)
  ].join("\n");
}

function matches(rule: TrapRule, trap: TrapFacts): boolean {
  if (rule.trap_oid !== trap.trapOid) return false;
  return (rule.when ?? []).every((condition) => bindingValue(trap, condition.oid) === condition.equals);
}

/** The value of the first binding at `oid` or under it (a table column and its instance). */
function bindingValue(trap: TrapFacts, oid: string): string | undefined {
  return trap.varbinds.find((varbind) => varbind.oid === oid || varbind.oid.startsWith(`${oid}.`))?.value;
}

function render(template: string, trap: TrapFacts, values: "raw" | "named"): string {
  return template.replace(PLACEHOLDER, (_, oid: string) => {
    const value = bindingValue(trap, oid);
    if (value === undefined) return "?";
    return values === "named" ? (OID_NAMES.get(value) ?? value) : value;
  });
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}
