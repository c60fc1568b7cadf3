import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {threeShiftPlant} from "../support/schedule-fixtures.js";
import {createPlant} from "../support/schedule-rig.js";

let gw: TestGateway;
let plant: Awaited<ReturnType<typeof createPlant>>;

beforeAll(async () => {
  gw = await startTestGateway();
  plant = await createPlant(gw);
});
afterAll(() => gw.stop());

const pointers = (body: {errors?: {pointer: string}[]}) => (body.errors ?? []).map((error) => error.pointer);

describe("schedules", () => {
  it("creates a shift-pattern schedule with a Location, an iCal URL and the layers as given", async () => {
    expect(plant.schedule).toMatchObject({
      name: "Line 3",
      timezone: "Europe/Berlin",
      layers: plant.body.layers,
      overrides: [],
      fallback: plant.bert
    });
    expect(plant.schedule.ical_url).toMatch(new RegExp(`^${gw.url}/ical/[A-Za-z0-9_-]{20,}\\.ics$`));
    expect(plant.schedule).not.toHaveProperty("ical_token");
    const read = await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}`);
    expect(read.body).toEqual(plant.schedule);
  });

  it("answers who is on call at an instant, with the shift that makes them so", async () => {
    const answer = await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/on-call?at=2026-03-28T23:30:00Z`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      at: "2026-03-28T23:30:00.000Z",
      recipients: [{uuid: plant.cem, name: "Cem"}],
      shift: {
        starts_at: "2026-03-28T21:00:00.000Z",
        ends_at: "2026-03-29T04:00:00.000Z",
        target: {uuid: plant.cem, kind: "recipient", name: "Cem"},
        recipients: [{uuid: plant.cem, name: "Cem"}],
        source: "shift_pattern",
        layer: 0,
        layer_name: "Line 3",
        shift_name: "night",
        crew: "C",
        override_id: null
      },
      fallback: null
    });
  });

  it("names a group crew's members, and the fallback during a gap", async () => {
    const crewD = await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/on-call?at=2026-03-28T15:00:00Z`);
    expect(crewD.body.recipients).toEqual([
      {uuid: plant.dora, name: "Dora"},
      {uuid: plant.anna, name: "Anna"}
    ]);
    expect(crewD.body.shift.target).toEqual({uuid: plant.crewD, kind: "group", name: "Crew D"});
    const beforeStart = await gw.call(
      "GET",
      `/api/v1/schedules/${plant.schedule.uuid}/on-call?at=2026-03-27T04:00:00Z`
    );
    expect(beforeStart.body).toEqual({
      at: "2026-03-27T04:00:00.000Z",
      recipients: [{uuid: plant.bert, name: "Bert"}],
      shift: null,
      fallback: {uuid: plant.bert, kind: "recipient", name: "Bert"}
    });
  });

  it("lists final shifts and gaps in a range: the night of the autumn change is 9 hours", async () => {
    const answer = await gw.call(
      "GET",
      `/api/v1/schedules/${plant.schedule.uuid}/shifts?from=2026-10-24T20:00:00Z&to=2026-10-25T05:00:00Z`
    );
    expect(answer.status).toBe(200);
    expect(answer.body.gaps).toEqual([]);
    expect(
      answer.body.shifts.map((shift: Record<string, string>) => [shift.starts_at, shift.ends_at, shift.crew])
    ).toEqual([["2026-10-24T20:00:00.000Z", "2026-10-25T05:00:00.000Z", "D"]]);
    const gap = await gw.call(
      "GET",
      `/api/v1/schedules/${plant.schedule.uuid}/shifts?from=2026-03-27T00:00:00Z&to=2026-03-27T06:00:00Z`
    );
    expect(gap.body.gaps).toEqual([{starts_at: "2026-03-27T00:00:00.000Z", ends_at: "2026-03-27T05:00:00.000Z"}]);
  });

  it.each([
    ["at=yesterday", "on-call", "/at"],
    ["at=2026-03-28T23:30:00", "on-call", "/at"],
    ["from=2026-03-28T00:00:00Z&to=2026-03-28T00:00:00Z", "shifts", "/to"],
    ["from=2026-01-01T00:00:00Z&to=2026-04-03T00:00:01Z", "shifts", "/to"],
    ["from=soon", "shifts", "/from"]
  ])("refuses the query %s on %s", async (query, route, pointer) => {
    const answer = await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/${route}?${query}`);
    expect(answer.status).toBe(400);
    expect(pointers(answer.body)).toEqual([pointer]);
  });

  it("takes the rotation shape of the issue, and replays a create under the same Idempotency-Key", async () => {
    const maria = await createRecipient(gw, {name: "Maria"});
    const body = {
      name: "Maintenance",
      timezone: "Asia/Kolkata",
      layers: [
        {type: "rotation", members: [maria, plant.cem], shift_length_hours: 12, starts_at: "2026-01-01T03:30:00Z"}
      ],
      fallback: plant.bert
    };
    const headers = {"Idempotency-Key": "schedule-create-1"};
    const first = await gw.call("POST", "/api/v1/schedules", {body, headers});
    const again = await gw.call("POST", "/api/v1/schedules", {body, headers});
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.uuid).toBe(first.body.uuid);
    const onCall = await gw.call("GET", `/api/v1/schedules/${first.body.uuid}/on-call?at=2026-01-01T16:00:00Z`);
    expect(onCall.body.recipients).toEqual([{uuid: plant.cem, name: "Cem"}]);
  });

  describe("refuses a schedule that cannot work, and stores nothing", () => {
    const rotation = (members: string[]) => ({
      type: "rotation",
      members,
      shift_length_hours: 8,
      starts_at: "2026-01-01T06:00:00Z"
    });
    const cases: [string, () => Record<string, unknown>, number, string[]][] = [
      ["a bad zone", () => ({...plant.body, timezone: "Europe/Atlantis"}), 400, ["/timezone"]],
      [
        "a pattern with no crew",
        () => ({...plant.body, layers: [{...plant.body.layers[0], crews: [], cycle: [[null, null, null]]}]}),
        400,
        ["/layers/0/crews"]
      ],
      [
        "an unknown member",
        () => ({...plant.body, layers: [rotation([plant.anna, "00000000-0000-4000-8000-000000000000"])]}),
        422,
        ["/layers/0/members/1"]
      ],
      [
        "an unknown crew target",
        () => ({
          ...plant.body,
          layers: [
            threeShiftPlant("2026-01-01", {
              A: plant.anna,
              B: "00000000-0000-4000-8000-000000000001",
              C: plant.cem,
              D: plant.dora
            })
          ]
        }),
        422,
        ["/layers/0/crews/1/target"]
      ],
      // Without one, an alert accepted in a gap would page nobody and end exhausted at once.
      ["no fallback", () => ({...plant.body, fallback: null}), 400, ["/fallback"]],
      ["a missing fallback", () => ({...plant.body, fallback: undefined}), 400, ["/fallback"]],
      [
        "an unknown fallback",
        () => ({...plant.body, fallback: "00000000-0000-4000-8000-000000000002"}),
        422,
        ["/fallback"]
      ],
      [
        "a field of the other kind of layer",
        () => ({...plant.body, layers: [{...rotation([plant.anna]), cycle: [["A"]]}]}),
        400,
        ["/layers/0/cycle"]
      ],
      [
        "a rotation without starts_at",
        () => ({...plant.body, layers: [{type: "rotation", members: [plant.anna], shift_length_days: 1}]}),
        400,
        ["/layers/0/starts_at"]
      ],
      ["no layer", () => ({...plant.body, layers: []}), 400, ["/layers"]],
      ["an unknown field", () => ({...plant.body, colour: "red"}), 400, ["/colour"]]
    ];
    it.each(cases)("%s", async (_name, body, status, expected) => {
      const before = (await gw.call("GET", "/api/v1/schedules?limit=200")).body.items.length;
      const answer = await gw.call("POST", "/api/v1/schedules", {body: body()});
      expect(answer.status).toBe(status);
      expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(pointers(answer.body)).toEqual(expected);
      expect((await gw.call("GET", "/api/v1/schedules?limit=200")).body.items.length).toBe(before);
    });
  });

  it("updates with JSON Merge Patch, keeps overrides, and refuses read-only fields", async () => {
    const {schedule} = await createPlant(gw);
    const override = await gw.call("POST", `/api/v1/schedules/${schedule.uuid}/overrides`, {
      body: {recipient_uuid: plant.anna, starts_at: "2026-05-01T00:00:00Z", ends_at: "2026-05-02T00:00:00Z"}
    });
    const patched = await gw.call("PATCH", `/api/v1/schedules/${schedule.uuid}`, {
      body: {name: "Line 3 (new)", fallback: plant.cem}
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: "Line 3 (new)",
      fallback: plant.cem,
      overrides: [override.body],
      layers: schedule.layers
    });
    const noFallback = await gw.call("PATCH", `/api/v1/schedules/${schedule.uuid}`, {body: {fallback: null}});
    expect(noFallback.status).toBe(400);
    expect(pointers(noFallback.body)).toEqual(["/fallback"]);
    expect((await gw.call("GET", `/api/v1/schedules/${schedule.uuid}`)).body.fallback).toBe(plant.cem);
    const readOnly = await gw.call("PATCH", `/api/v1/schedules/${schedule.uuid}`, {body: {overrides: []}});
    expect(readOnly.status).toBe(400);
    expect(pointers(readOnly.body)).toEqual(["/overrides"]);
    const badZone = await gw.call("PATCH", `/api/v1/schedules/${schedule.uuid}`, {body: {timezone: "Mars/Olympus"}});
    expect(pointers(badZone.body)).toEqual(["/timezone"]);
  });

  it("needs recipients:read to read and recipients:write to change", async () => {
    const key = await gw.call("POST", "/api/v1/keys", {body: {name: "reader", scopes: ["recipients:read"]}});
    const reader = key.body.key as string;
    expect((await gw.call("GET", `/api/v1/schedules/${plant.schedule.uuid}/on-call`, {key: reader})).status).toBe(200);
    expect((await gw.call("POST", "/api/v1/schedules", {key: reader, body: plant.body})).status).toBe(403);
    expect((await gw.call("GET", "/api/v1/schedules", {key: null})).status).toBe(401);
  });
});
