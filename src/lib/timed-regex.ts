import {createContext, Script} from "node:vm";

/** What a regex found: groups by number ("" for one that did not take part) and by name. */
export interface TimedRegexFound {
  groups: string[];
  named: Record<string, string>;
}

/** How long one match may run, and how much of a text it looks at. */
export interface TimedRegexLimits {
  timeoutMs: number;
  maxInputChars: number;
}

// The limit is wall time, so a GC pause or a busy core counts against it: it is set far above what
// any sane pattern needs on 64 KiB (well under a millisecond), so that a slow box under load never
// turns a legitimate rule into "no match", and still stops a runaway pattern within a quarter second.
export const DEFAULT_REGEX_LIMITS: TimedRegexLimits = {timeoutMs: 250, maxInputChars: 65_536};

// Runs inside the sandbox: compiled regexes are cached there by pattern, so a rule's pattern is
// compiled once, and only the match itself runs per message.
const MATCH_SOURCE = `(() => {
  let regex = cache.get(pattern);
  if (!regex) {
    regex = new RegExp(pattern, "i");
    if (cache.size >= 256) cache.clear();
    cache.set(pattern, regex);
  }
  const found = regex.exec(text);
  if (!found) return null;
  const named = {};
  for (const [name, value] of Object.entries(found.groups ?? {})) named[name] = value ?? "";
  return {groups: Array.from(found, (value) => value ?? ""), named};
})()`;

/**
 * Runs admin-written regexes on device texts under a time limit. A JavaScript regex can
 * backtrack for minutes on a crafted text (`(a+)+$`), and the gateway has one thread that also
 * pages people: each match runs in a `vm` context with `timeout`, which interrupts it, and sees
 * at most `maxInputChars` of the text. Case is ignored, as the rules document.
 */
export class TimedRegex {
  private readonly script = new Script(MATCH_SOURCE);
  private readonly sandbox: {cache: Map<string, RegExp>; pattern: string; text: string};
  private readonly context: object;

  constructor(private readonly limits: TimedRegexLimits = DEFAULT_REGEX_LIMITS) {
    this.sandbox = {cache: new Map(), pattern: "", text: ""};
    this.context = createContext(this.sandbox);
  }

  /** The first match, null for none, "timeout" when the limit stopped it. A pattern that does not compile throws. */
  match(pattern: string, text: string): TimedRegexFound | null | "timeout" {
    this.sandbox.pattern = pattern;
    this.sandbox.text = text.length > this.limits.maxInputChars ? text.slice(0, this.limits.maxInputChars) : text;
    try {
      return this.script.runInContext(this.context, {timeout: this.limits.timeoutMs}) as TimedRegexFound | null;
    } catch (error) {
      if ((error as {code?: string}).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") return "timeout";
      throw error;
    } finally {
      this.sandbox.text = "";
    }
  }
}

/** Whether a pattern compiles as the matcher compiles it; the reason when it does not. */
export function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, "i");
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
