import {describe, expect, it} from "vitest";
import {composeSms, planSms} from "../../src/channels/sms/sms-text.js";
import type {AlertSummary} from "../../src/channels/channel.js";
import {smsEncodingFor, smsLength} from "../../src/modem/sms-codec.js";

const alert = (fields: Partial<AlertSummary> = {}): AlertSummary => ({
  notification_id: "notif_1",
  priority: "critical",
  message: "Oil temperature high",
  source: "press-7",
  link: null,
  ...fields
});

describe("SMS text", () => {
  it("fits one alert and its reply instruction into one GSM-7 SMS", () => {
    expect(planSms(composeSms([alert()], "4821"), 3)).toEqual([
      "Klaxon CRITICAL from press-7: Oil temperature high. Reply 1 4821 or ACK 4821 to acknowledge."
    ]);
  });

  it("lists several alerts and says the code acknowledges all of them", () => {
    const [text] = planSms(
      composeSms([alert(), alert({priority: "high", source: null, message: "Door open"})], "77"),
      3
    );
    expect(text).toBe(
      "Klaxon: 2 alerts. 1) CRITICAL from press-7: Oil temperature high. 2) HIGH: Door open. Reply 1 77 or ACK 77 to acknowledge all 2."
    );
  });

  it("chooses UCS-2 for text outside GSM-7 and counts extension characters twice", () => {
    expect(smsEncodingFor("Oil over 80 °C")).toBe("ucs2");
    expect(smsEncodingFor("cmd `ls`")).toBe("ucs2");
    expect(smsEncodingFor("a [b] {c}")).toBe("gsm7");
    expect(smsLength("a [b] {c}", "gsm7")).toBe(13);
  });

  it.each([
    ["gsm7", "x", 160],
    ["ucs2", "ü", 70]
  ] as const)("splits a long %s text into numbered parts that each fit one SMS", (encoding, letter, limit) => {
    const words = Array.from({length: 60}, (_, index) => `${letter}${index}`).join(" ");
    const parts = planSms(composeSms([alert({message: words})], "4821"), 5);
    expect(parts.length).toBeGreaterThan(1);
    parts.forEach((part, index) => {
      expect(part.startsWith(`(${index + 1}/${parts.length}) `)).toBe(true);
      expect(smsEncodingFor(part)).toBe(encoding);
      expect(smsLength(part, encoding)).toBeLessThanOrEqual(limit);
    });
    expect(parts.map((part) => part.replace(/^\(\d\/\d\) /, "")).join(" ")).toContain(`${letter}59. Reply 1 4821`);
  });

  it("shortens the alert, never the reply instruction, to stay within the most parts", () => {
    const parts = planSms(composeSms([alert({message: "🔥 overheating ".repeat(400)})], "4821"), 2);
    expect(parts).toHaveLength(2);
    expect(parts[1]).toMatch(/\.\.\. Reply 1 4821 or ACK 4821 to acknowledge\.$/);
    for (const part of parts) expect(smsLength(part, "ucs2")).toBeLessThanOrEqual(70);
    // No emoji is cut in half: every surrogate pair is whole.
    expect(parts.join("")).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});
