import fc from "fast-check";
import {describe, expect, it} from "vitest";
import type {AlertSummary} from "../../src/channels/channel.js";
import {
  changeReply,
  HELP_REPLY,
  NOT_UNDERSTOOD_REPLY,
  parseSmsCommand,
  statusReply
} from "../../src/channels/sms/sms-commands.js";
import {SINGLE_SMS_LIMIT, smsEncodingFor, smsLength} from "../../src/modem/sms-codec.js";
import {PRIORITIES} from "../../src/domain/vocabulary.js";

const alert = (fields: Partial<AlertSummary> = {}): AlertSummary => ({
  notification_id: "notif_1",
  priority: "critical",
  message: "Oil temperature high",
  source: "press-7",
  link: null,
  ...fields
});

function fitsOneSms(text: string): boolean {
  const encoding = smsEncodingFor(text);
  return smsLength(text, encoding) <= SINGLE_SMS_LIMIT[encoding];
}

describe("SMS commands", () => {
  it.each([
    ["1 4821", {kind: "ack", code: "4821"}],
    ["ACK 4821", {kind: "ack", code: "4821"}],
    ["  ack4821. ", {kind: "ack", code: "4821"}],
    ["Ack   482100", {kind: "ack", code: "482100"}],
    ["ack", {kind: "ack", code: null}],
    [" Ack. ", {kind: "ack", code: null}],
    ["RES 4821", {kind: "resolve", code: "4821"}],
    ["res4821", {kind: "resolve", code: "4821"}],
    ["Resolve 4821!", {kind: "resolve", code: "4821"}],
    ["status", {kind: "status"}],
    [" Status ", {kind: "status"}],
    ["HELP", {kind: "help"}],
    ["?", {kind: "help"}],
    ["14821", null],
    ["2 4821", null],
    ["ACK 4821 please", null],
    ["RES", null],
    ["statuses", null],
    ["on my way", null]
  ])("reads %j as %j", (text, command) => {
    expect(parseSmsCommand(text)).toEqual(command);
  });

  it("answers HELP and not-understood within one GSM 7-bit SMS", () => {
    for (const reply of [HELP_REPLY, NOT_UNDERSTOOD_REPLY]) {
      expect(smsEncodingFor(reply)).toBe("gsm7");
      expect(reply.length).toBeLessThanOrEqual(160);
    }
  });

  it("lists open alerts with their codes, newest first, and says how many did not fit", () => {
    const alerts = [
      {code: "4821", alert: alert()},
      {code: "5533", alert: alert({priority: "high", source: null, message: "Door open"})},
      ...Array.from({length: 6}, (_, index) => ({
        code: String(6000 + index),
        alert: alert({message: `Conveyor ${index} stopped with a jam at the outfeed`})
      }))
    ];
    const reply = statusReply(alerts);
    expect(reply).toMatch(
      /^Klaxon: 8 open\. 4821 CRITICAL press-7: Oil temperature high\. 5533 HIGH: Door open\. 6000 .* \+\d more$/
    );
    expect(reply.length).toBeLessThanOrEqual(160);
    expect(statusReply(alerts.slice(0, 2))).toBe(
      "Klaxon: 2 open. 4821 CRITICAL press-7: Oil temperature high. 5533 HIGH: Door open."
    );
    expect(statusReply([])).toBe("Klaxon: no open alerts sent to you.");
  });

  it("keeps any STATUS list within one SMS, in UCS-2 too, and counts every alert as shown or more", () => {
    // No digits in the texts, so a code found in the reply is that alert's line.
    const text = (maxLength: number) =>
      fc.string({unit: fc.constantFrom("a", "ü", " ", "€", "🔥", "ő", "x", "."), minLength: 1, maxLength});
    const summary = fc.record({
      notification_id: fc.constant("notif_x"),
      priority: fc.constantFrom(...PRIORITIES),
      message: text(120),
      source: fc.option(text(30), {nil: null}),
      link: fc.constant(null)
    });
    fc.assert(
      fc.property(fc.array(summary, {minLength: 1, maxLength: 30}), (summaries) => {
        const alerts = summaries.map((alert, index) => ({code: String(10000 + index), alert}));
        const reply = statusReply(alerts);
        expect(fitsOneSms(reply)).toBe(true);
        expect(reply.startsWith(`Klaxon: ${alerts.length} open.`)).toBe(true);
        const shown = alerts.filter(({code}) => reply.includes(` ${code} `)).length;
        const more = Number(/ \+(\d+) more$/.exec(reply)?.[1] ?? 0);
        expect(shown + more).toBe(alerts.length);
        // Newest first: what is shown is a prefix of the list.
        expect(alerts.slice(0, shown).every(({code}) => reply.includes(` ${code} `))).toBe(true);
      })
    );
  });

  it("says what a command changed, or that there was nothing left to change", () => {
    expect(changeReply("acknowledged", "4821", {changed: ["a", "b"], alreadyClosed: []})).toBe(
      "Klaxon: acknowledged 4821 (2 alerts)."
    );
    expect(changeReply("resolved", "4821", {changed: ["a"], alreadyClosed: []})).toBe(
      "Klaxon: resolved 4821 (1 alert)."
    );
    expect(changeReply("acknowledged", "4821", {changed: [], alreadyClosed: ["a"]})).toBe(
      "Klaxon: 4821 was already closed."
    );
  });
});
