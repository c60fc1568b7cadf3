import type {Priority} from "./vocabulary.js";

/** The parts of a text message a rule may look at: sender, subject, body of a mail; topic, payload of an MQTT message. */
export const RULE_FIELDS = ["sender", "subject", "body", "topic", "payload"] as const;
export type RuleField = (typeof RULE_FIELDS)[number];

export const RULE_MATCHES = ["contains", "regex"] as const;
export const RULE_ACTIONS = ["fire", "resolve", "heartbeat"] as const;

/**
 * One mapping rule of an email or MQTT integration. Both ways of matching ignore case: device
 * texts vary in it ("ALARM", "Alarm") from one firmware to the next.
 */
export interface TextRule {
  field: RuleField;
  match: (typeof RULE_MATCHES)[number];
  pattern: string;
  action: (typeof RULE_ACTIONS)[number];
  /**
   * The alert's key: a template where `{0}` is the whole match, `{1}`... the regex's groups and
   * `{name}` its named groups. Absent (or empty once filled): a hash of the matched field's
   * whole text, so the same subject repeated merges into one alert.
   */
  alert_key?: string;
  /** The alert's priority; default the integration's default_priority. */
  priority?: Priority;
  /** The alert's title, a template like alert_key; default the message's own title (subject, topic). */
  title?: string;
}

/** What a regex found: its groups by number (0 the whole match, "" for a group that did not take part) and by name. */
export interface RegexFound {
  groups: string[];
  named: Record<string, string>;
}

/**
 * Runs one regex, case-insensitively, on one text. Injected, since a regex written by an admin
 * may take exponential time: the real one runs it under a time limit and reports "timeout".
 */
export type RegexMatcher = (pattern: string, text: string) => RegexFound | null | "timeout";

/** The rule that decided a message, with its templates filled in. */
export interface RuleMatch {
  rule: TextRule;
  /** The rule's position in the list (0-based), for the log. */
  index: number;
  alertKey: string;
  title: string | null;
}

/** The first rule that matched, or none; with the rules whose regex ran out of time before it (they count as not matching). */
export interface RulesOutcome {
  match: RuleMatch | null;
  timedOut: number[];
}

const ALERT_KEY_MAX = 200;
const TITLE_MAX = 200;
const PLACEHOLDER = /\{([A-Za-z0-9_]+)\}/g;

function findContains(pattern: string, text: string): RegexFound | null {
  const at = text.toLowerCase().indexOf(pattern.toLowerCase());
  return at < 0 ? null : {groups: [text.slice(at, at + pattern.length)], named: {}};
}

function fill(template: string, found: RegexFound): string {
  return template.replace(PLACEHOLDER, (_, name: string) =>
    /^\d+$/.test(name) ? (found.groups[Number(name)] ?? "") : (found.named[name] ?? "")
  );
}

/**
 * FNV-1a (32 bits) as 8 hex digits: a stable short name for a text. Not a secret and not
 * collision-proof; it keys alerts of one integration, whose texts differ in practice.
 */
export function stableHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * The first rule, in order, whose field matches. A field the message does not have never
 * matches (a `topic` rule on a mail). A missing alert key template, or one that fills to
 * nothing, falls back to `<field>-<hash of the field's text>`.
 */
export function matchRules(
  rules: readonly TextRule[],
  fields: Partial<Record<RuleField, string>>,
  matcher: RegexMatcher
): RulesOutcome {
  const timedOut: number[] = [];
  for (const [index, rule] of rules.entries()) {
    const text = fields[rule.field];
    if (text === undefined) continue;
    const found = rule.match === "contains" ? findContains(rule.pattern, text) : matcher(rule.pattern, text);
    if (found === "timeout") {
      timedOut.push(index);
      continue;
    }
    if (!found) continue;
    const key = rule.alert_key ? fill(rule.alert_key, found).trim().slice(0, ALERT_KEY_MAX) : "";
    const title = rule.title ? fill(rule.title, found).trim().slice(0, TITLE_MAX) : "";
    return {
      match: {rule, index, alertKey: key || `${rule.field}-${stableHash(text)}`, title: title || null},
      timedOut
    };
  }
  return {match: null, timedOut};
}
