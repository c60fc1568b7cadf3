import ICAL from "ical.js";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ManualClock} from "../../src/lib/clock.js";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {createPlant} from "../support/schedule-rig.js";

// The feeds are read the way a calendar app reads them: fetched without a key and parsed by
// ical.js (Mozilla's RFC 5545 parser, as used by Thunderbird).

const START = Date.parse("2026-03-25T12:00:00Z");
const clock = new ManualClock(START);
let gw: TestGateway;
let plant: Awaited<ReturnType<typeof createPlant>>;

beforeAll(async () => {
  gw = await startTestGateway({}, {clock});
  plant = await createPlant(gw);
});
afterAll(() => gw.stop());

interface ParsedEvent {
  uid: string;
  start: string;
  end: string;
  summary: string;
  description: string;
}

async function fetchFeed(
  url: string
): Promise<{status: number; type: string | null; events: ParsedEvent[]; name: string}> {
  const response = await fetch(url);
  const text = await response.text();
  if (response.status !== 200)
    return {status: response.status, type: response.headers.get("content-type"), events: [], name: ""};
  const calendar = new ICAL.Component(ICAL.parse(text));
  const events = calendar.getAllSubcomponents("vevent").map((component) => {
    const event = new ICAL.Event(component);
    return {
      uid: event.uid,
      start: event.startDate.toJSDate().toISOString(),
      end: event.endDate.toJSDate().toISOString(),
      summary: event.summary,
      description: event.description
    };
  });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    events,
    name: String(calendar.getFirstPropertyValue("x-wr-calname"))
  };
}

describe("iCal feeds", () => {
  it("serve a schedule's final shifts without a key, the 7-hour night of the spring change included", async () => {
    const feed = await fetchFeed(plant.schedule.ical_url);
    expect(feed.status).toBe(200);
    expect(feed.type).toBe("text/calendar; charset=utf-8");
    expect(feed.name).toBe("Line 3 on call");
    const night = feed.events.find((event) => event.start === "2026-03-28T21:00:00.000Z");
    expect(night).toMatchObject({end: "2026-03-29T04:00:00.000Z", summary: "Cem (night, crew C)"});
    expect(night?.description).toContain("Cem on call for Line 3 (schedule zone Europe/Berlin)");
    // Every final shift of the feed's window is an event, in order, with a UID of its own; the
    // window's last shift is whole, not cut where the window ends.
    const shifts = await gw.call(
      "GET",
      `/api/v1/schedules/${plant.schedule.uuid}/shifts?from=2026-03-18T12:00:00Z&to=2026-05-25T00:00:00Z`
    );
    const inWindow = shifts.body.shifts.filter(
      (shift: {starts_at: string}) => Date.parse(shift.starts_at) < Date.parse("2026-05-24T12:00:00Z")
    );
    expect(feed.events.map((event) => [event.start, event.end])).toEqual(
      inWindow.map((shift: {starts_at: string; ends_at: string}) => [shift.starts_at, shift.ends_at])
    );
    expect(new Set(feed.events.map((event) => event.uid)).size).toBe(feed.events.length);
  });

  it("keep each shift's UID and start whatever moment the feed is read at", async () => {
    // A week back from 13:00 or 13:07 falls inside a shift: that first event must not start at 12:07.
    const read = async (at: string) => {
      clock.set(Date.parse(at));
      return (await fetchFeed(plant.schedule.ical_url)).events;
    };
    try {
      const first = await read("2026-04-10T13:00:00Z");
      const later = await read("2026-04-10T13:07:00Z");
      expect(later[0]).toEqual(first[0]);
      expect(Date.parse(first[0].start)).toBeLessThan(Date.parse("2026-04-03T13:00:00Z"));
      expect(later.map((event) => event.uid)).toEqual(first.map((event) => event.uid));
    } finally {
      clock.set(START);
    }
  });

  it("serve a recipient's shifts in every schedule, a group crew's included, once the URL is made", async () => {
    expect((await gw.call("GET", `/api/v1/recipients/${plant.anna}/ical`)).body).toEqual({ical_url: null});
    const made = await gw.call("POST", `/api/v1/recipients/${plant.anna}/ical-token/rotate`);
    expect(made.status).toBe(200);
    expect((await gw.call("GET", `/api/v1/recipients/${plant.anna}/ical`)).body).toEqual(made.body);
    const feed = await fetchFeed(made.body.ical_url);
    expect(feed.name).toBe("Anna on call");
    const crews = new Set(
      feed.events.map((event) => event.summary.replace(/^On call: Line 3 \(\w+, crew (\w)\)$/, "$1"))
    );
    // Anna leads crew A and is one of crew D's two leads.
    expect([...crews].sort()).toEqual(["A", "D"]);
    expect(feed.events.find((event) => event.start === "2026-03-27T05:00:00.000Z")?.summary).toBe(
      "On call: Line 3 (early, crew A)"
    );
  });

  it("stop working at once when rotated, and refuse tokens nobody has", async () => {
    const before = plant.schedule.ical_url;
    const rotated = await gw.call("POST", `/api/v1/schedules/${plant.schedule.uuid}/ical-token/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.ical_url).not.toBe(before);
    expect((await fetchFeed(before)).status).toBe(404);
    expect((await fetchFeed(rotated.body.ical_url)).status).toBe(200);
    // The requests were logged, the tokens in their paths were not.
    for (const url of [before, rotated.body.ical_url]) {
      const token = new URL(url).pathname
        .split("/")
        .pop()!
        .replace(/\.ics$/, "");
      expect(gw.logLines.some((line) => line.includes("/ical/[redacted]"))).toBe(true);
      expect(gw.logLines.filter((line) => line.includes(token))).toEqual([]);
    }
    const unknown = await fetch(`${gw.url}/ical/not-a-token.ics`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const reader = await gw.call("POST", "/api/v1/keys", {body: {name: "feeds", scopes: ["recipients:read"]}});
    expect(
      (await gw.call("POST", `/api/v1/recipients/${plant.bert}/ical-token/rotate`, {key: reader.body.key})).status
    ).toBe(403);
  });
});
