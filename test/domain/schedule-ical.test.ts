import ICAL from "ical.js";
import {describe, expect, it} from "vitest";
import {renderCalendar} from "../../src/domain/schedules/ical.js";

describe("renderCalendar", () => {
  const summary = "Bereitschaft Linie 3; Schweißerei, Früh- und Spätschicht \\ Nacht 🌙 ".repeat(4).trim();
  const text = renderCalendar(
    "Linie 3, Werk Süd",
    [
      {uid: "s/1@klaxon", start: Date.UTC(2026, 2, 28, 21), end: Date.UTC(2026, 2, 29, 4), summary, description: "a\nb"}
    ],
    Date.UTC(2026, 2, 1)
  );

  it("folds every line at 75 octets without splitting a character, with CRLF line ends", () => {
    const lines = text.split("\r\n");
    expect(lines.at(-1)).toBe("");
    for (const line of lines) expect(new TextEncoder().encode(line).length).toBeLessThanOrEqual(75);
    expect(lines.some((line) => line.startsWith(" "))).toBe(true);
    expect(text).not.toMatch(/\uFFFD/);
    expect(text.replace(/\r\n/g, "")).not.toMatch(/[^\r]\n/);
  });

  it("escapes text so a standard parser reads back exactly what was written, in UTC", () => {
    const calendar = new ICAL.Component(ICAL.parse(text));
    // An X- property is TEXT by default (RFC 5545 3.8.8.2) and so escaped; ical.js hands X- values back raw.
    expect(calendar.getFirstPropertyValue("x-wr-calname")).toBe("Linie 3\\, Werk Süd");
    const event = new ICAL.Event(calendar.getFirstSubcomponent("vevent") ?? undefined);
    expect(event.summary).toBe(summary);
    expect(event.description).toBe("a\nb");
    expect(event.startDate.toJSDate().toISOString()).toBe("2026-03-28T21:00:00.000Z");
    expect(event.endDate.toJSDate().toISOString()).toBe("2026-03-29T04:00:00.000Z");
    expect(event.startDate.zone?.tzid).toBe("UTC");
  });
});
