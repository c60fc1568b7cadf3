import type {Priority} from "../vocabulary.js";

/**
 * Alarm conditioning of a PLC point (ISA-18.2 terms), pure: readings and the time go in, the new
 * state and the alerts to fire or resolve come out. Wherever a reading comes from (Modbus, OPC UA),
 * this decides when a person is paged.
 */

/** `bit`: bit `bit` of the word is 1 (or 0 with `value: 0`); `change`: the value differs from the reading before. */
export const ALARM_CONDITIONS = [">", ">=", "<", "<=", "==", "!=", "bit", "change"] as const;
export type AlarmCondition = (typeof ALARM_CONDITIONS)[number];

/** A point's alarm, as configured (`alarm` of a point in the API, snake_case there). */
export interface AlarmSpec {
  readonly when: AlarmCondition;
  /** The limit (>, >=, <, <=, ==, !=), or for `bit` the bit's alarm value (default 1). */
  readonly value?: number;
  /** `bit` only: which bit of the word, 0 = least significant. */
  readonly bit?: number;
  /** >, >=, <, <= only: the limit's hysteresis; an active alarm clears only beyond value ∓ deadband. */
  readonly deadband: number;
  /** How long the condition must hold before the alarm fires. */
  readonly onDelaySeconds: number;
  /** How long the condition must stay clear before the alarm resolves. */
  readonly offDelaySeconds: number;
  readonly priority: Priority;
  /** `{value}` and `{unit}` are replaced by the reading and the point's unit. */
  readonly title: string;
  /** More condition changes than this within a minute make the point chattering. */
  readonly chatterPerMinute: number;
}

/** What a point shows: `pending` is inside the on-delay; `active` has paged (including its off-delay). */
export type AlarmLabel = "normal" | "pending" | "active" | "chattering";

/** One point's conditioning state; start from `ALARM_START`. */
export interface AlarmState {
  /** The condition (with its deadband), as of the last good reading. */
  readonly violating: boolean;
  /** When `violating` last changed, or the first reading (null: no reading yet). */
  readonly changedAt: number | null;
  /** An alert is open for this point: fired and not yet resolved. */
  readonly fired: boolean;
  /** The last good value (for `change` and the title). */
  readonly last: number | null;
  /** When the condition changed within the last minute, oldest first. */
  readonly transitions: readonly number[];
  readonly chattering: boolean;
}

export const ALARM_START: AlarmState = {
  violating: false,
  changedAt: null,
  fired: false,
  last: null,
  transitions: [],
  chattering: false
};

/**
 * What to do with the point's alert. `fire` with `chattering`: fired because the point started
 * chattering. `chattering`: the point's alert is already open and the point starts chattering: the
 * alert is not paged again, its text is marked (`chatteringText`).
 */
export type AlarmEffect =
  {kind: "fire"; title: string; priority: Priority; chattering: boolean} | {kind: "chattering"} | {kind: "resolve"};

const CHATTERING_SUFFIX = " (chattering)";

/** An alert's text marked chattering: the text it paged with, then "(chattering)", said once. */
export function chatteringText(text: string): string {
  return text.endsWith(CHATTERING_SUFFIX) ? text : text + CHATTERING_SUFFIX;
}

const MINUTE_MS = 60_000;

/** Whether `value` violates the condition, given whether it did before (the deadband's hysteresis). */
export function violates(spec: AlarmSpec, wasViolating: boolean, value: number, previous: number | null): boolean {
  const limit = spec.value ?? 0;
  // While active, the limit moves by the deadband toward normal: a value inside the band changes nothing.
  const band = wasViolating ? spec.deadband : 0;
  switch (spec.when) {
    case ">":
      return value > limit - band;
    case ">=":
      return value >= limit - band;
    case "<":
      return value < limit + band;
    case "<=":
      return value <= limit + band;
    case "==":
      return value === limit;
    case "!=":
      return value !== limit;
    case "bit":
      return Math.floor(Math.abs(value) / 2 ** (spec.bit ?? 0)) % 2 === (spec.value ?? 1);
    case "change":
      return previous !== null && value !== previous;
  }
}

/** The title with `{value}` and `{unit}` filled in; a value is written with at most 3 decimals. */
export function alarmTitle(template: string, value: number | null, unit: string): string {
  const shown = value === null ? "?" : String(Number(value.toFixed(3)));
  return template.replaceAll("{value}", shown).replaceAll("{unit}", unit).trim();
}

/** The point's alarm in one word, for the API and the dashboard. */
export function alarmLabel(state: AlarmState): AlarmLabel {
  if (state.chattering) return "chattering";
  if (state.fired) return "active";
  return state.violating ? "pending" : "normal";
}

/**
 * One step: a good reading (`value`), or only the passing of time (`value` null: a bad reading,
 * or a tick between readings, lets a delay run out). The condition must hold for the whole
 * on-delay to fire and stay clear for the whole off-delay to resolve; a point whose condition
 * changed more than chatterPerMinute times in the last minute is chattering: it fires once when
 * the episode starts (an alert already open is told instead) and neither fires nor resolves until
 * it calms down.
 */
export function alarmStep(
  spec: AlarmSpec,
  state: AlarmState,
  reading: {value: number | null; unit: string},
  now: number
): {state: AlarmState; effects: AlarmEffect[]} {
  let {violating, changedAt, fired, last, transitions, chattering} = state;
  const {value} = reading;
  if (value !== null) {
    const next = violates(spec, violating, value, last);
    if (changedAt === null) changedAt = now;
    else if (next !== violating) {
      changedAt = now;
      transitions = [...transitions, now];
    }
    violating = next;
    last = value;
  }
  transitions = transitions.filter((at) => at > now - MINUTE_MS);
  const effects: AlarmEffect[] = [];
  const fire = (asChattering: boolean) => {
    fired = true;
    const title = alarmTitle(spec.title, last, reading.unit);
    effects.push({
      kind: "fire",
      title: asChattering ? chatteringText(title) : title,
      priority: spec.priority,
      chattering: asChattering
    });
  };
  const chatter = transitions.length > spec.chatterPerMinute;
  // An episode starts: a new alert says so from its first page, an open one is told (not paged again).
  if (chatter && !chattering && !fired) fire(true);
  else if (chatter && !chattering) effects.push({kind: "chattering"});
  chattering = chatter;
  if (!chattering && changedAt !== null) {
    // A change of state is momentary: it fires at once, whatever the on-delay.
    const onDelayMs = spec.when === "change" ? 0 : spec.onDelaySeconds * 1000;
    if (!fired && violating && now - changedAt >= onDelayMs) fire(false);
    else if (fired && !violating && now - changedAt >= spec.offDelaySeconds * 1000) {
      fired = false;
      effects.push({kind: "resolve"});
    }
  }
  return {state: {violating, changedAt, fired, last, transitions, chattering}, effects};
}
