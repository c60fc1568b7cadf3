import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {matchRules, stableHash, type TextRule} from "../../src/domain/integration-rules.js";
import {TimedRegex} from "../../src/lib/timed-regex.js";

const regex = new TimedRegex();
const matcher = (pattern: string, text: string) => regex.match(pattern, text);

const nasRules: TextRule[] = [
  {
    field: "subject",
    match: "regex",
    pattern: "^\\[(?<box>[\\w-]+)\\] Volume (\\d+) .*degraded",
    action: "fire",
    alert_key: "{box}-volume-{2}",
    priority: "critical",
    title: "{box}: volume {2} degraded"
  },
  {
    field: "subject",
    match: "regex",
    pattern: "^\\[([\\w-]+)\\] Volume (\\d+) .*repaired",
    action: "resolve",
    alert_key: "{1}-volume-{2}"
  },
  {field: "body", match: "contains", pattern: "UPS is on battery", action: "fire"},
  {field: "sender", match: "contains", pattern: "heartbeat@", action: "heartbeat", alert_key: "nas-alive"}
];

describe("text mapping rules", () => {
  it("takes the first rule that matches and fills its templates from named and numbered groups", () => {
    const outcome = matchRules(
      nasRules,
      {sender: "nas@plant.lan", subject: "[nas-01] Volume 2 on nas-01 is degraded", body: "Disk 3 failed"},
      matcher
    );
    expect(outcome).toEqual({
      match: {rule: nasRules[0], index: 0, alertKey: "nas-01-volume-2", title: "nas-01: volume 2 degraded"},
      timedOut: []
    });
    const repaired = matchRules(nasRules, {subject: "[NAS-01] volume 2 has been REPAIRED"}, matcher).match;
    expect(repaired).toMatchObject({index: 1, alertKey: "NAS-01-volume-2", title: null});
  });

  it("matches contains and regex without regard to case", () => {
    expect(matchRules(nasRules, {body: "ALERT: the ups is ON BATTERY since 10:02"}, matcher).match?.index).toBe(2);
    expect(matchRules(nasRules, {sender: "Heartbeat@nas.lan"}, matcher).match).toMatchObject({
      index: 3,
      alertKey: "nas-alive"
    });
  });

  it("never matches a field the message does not have, and maps nothing when no rule matches", () => {
    const topicRule: TextRule = {field: "topic", match: "contains", pattern: "", action: "fire"};
    expect(matchRules([topicRule], {subject: "anything"}, matcher)).toEqual({match: null, timedOut: []});
    expect(matchRules(nasRules, {subject: "Weekly report", body: "all fine"}, matcher)).toEqual({
      match: null,
      timedOut: []
    });
  });

  it("keys an alert by a hash of the matched field's text when the rule names no key, or its key fills to nothing", () => {
    const rules: TextRule[] = [
      {field: "subject", match: "regex", pattern: "power (fail)?", action: "fire", alert_key: "{1}"}
    ];
    const restored = matchRules(rules, {subject: "Mains power restored"}, matcher).match;
    expect(restored?.alertKey).toBe(`subject-${stableHash("Mains power restored")}`);
    expect(matchRules(rules, {subject: "Mains power fail"}, matcher).match?.alertKey).toBe("fail");
  });

  it("gives the same text the same default key, so a repeated message merges", () => {
    fc.assert(
      fc.property(fc.string({minLength: 1}), (text) => {
        const rules: TextRule[] = [{field: "payload", match: "contains", pattern: "", action: "fire"}];
        const keyOf = (payload: string) => matchRules(rules, {payload}, matcher).match?.alertKey;
        expect(keyOf(text)).toBe(keyOf(String(text)));
        expect(keyOf(text)).toBe(`payload-${stableHash(text)}`);
        expect(keyOf(text)).toMatch(/^payload-[0-9a-f]{8}$/);
      })
    );
  });

  it("the first matching rule wins, whatever the rules after it say", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({word: fc.constantFrom("down", "up", "warn"), action: fc.constantFrom("fire", "resolve")}), {
          minLength: 1,
          maxLength: 6
        }),
        fc.constantFrom("down", "up", "warn", "none"),
        (spec, word) => {
          const rules = spec.map((item): TextRule => ({
            field: "payload",
            match: "contains",
            pattern: item.word,
            action: item.action
          }));
          const expected = spec.findIndex((item) => item.word === word);
          const outcome = matchRules(rules, {payload: `link ${word}`}, matcher);
          expect(outcome.match?.index ?? -1).toBe(expected);
        }
      )
    );
  });

  it("treats a regex that runs out of time as not matching, reports it, and goes on to the next rule", () => {
    const rules: TextRule[] = [
      {field: "body", match: "regex", pattern: "^(a+)+$", action: "fire"},
      {field: "body", match: "contains", pattern: "aaa", action: "resolve", alert_key: "k"}
    ];
    const outcome = matchRules(rules, {body: "a".repeat(40) + "!"}, matcher);
    expect(outcome.timedOut).toEqual([0]);
    expect(outcome.match).toMatchObject({index: 1, alertKey: "k"});
  });
});

describe("the timed regex matcher", () => {
  it("interrupts catastrophic backtracking and keeps working after it", () => {
    const limited = new TimedRegex({timeoutMs: 20, maxInputChars: 1000});
    expect(limited.match("^(a|aa)+$", "a".repeat(60) + "b")).toBe("timeout");
    expect(limited.match("(\\d+) volts", "battery at 12 volts")).toEqual({groups: ["12 volts", "12"], named: {}});
  });

  it("looks only at the first maxInputChars of a text", () => {
    const limited = new TimedRegex({timeoutMs: 50, maxInputChars: 10});
    expect(limited.match("tail", "0123456789tail")).toBeNull();
    expect(limited.match("56", "0123456789tail")).not.toBeNull();
  });

  it("reports an optional group that did not take part as empty text", () => {
    expect(regex.match("on (battery)?(mains)?", "running on mains")).toEqual({
      groups: ["on mains", "", "mains"],
      named: {}
    });
  });
});
