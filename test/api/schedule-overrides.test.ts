import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {createPlant} from "../support/schedule-rig.js";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.stop());

const onCallAt = async (uuid: string, at: string) =>
  (await gw.call("GET", `/api/v1/schedules/${uuid}/on-call?at=${at}`)).body;

describe("schedule overrides", () => {
  it("win over the layers for exactly their span, are listed by start, and can be deleted", async () => {
    const {schedule, anna, cem} = await createPlant(gw);
    const base = `/api/v1/schedules/${schedule.uuid}/overrides`;
    const later = await gw.call("POST", base, {
      body: {recipient_uuid: anna, starts_at: "2026-03-29T00:00:00Z", ends_at: "2026-03-29T02:00:00Z"}
    });
    expect(later.status).toBe(201);
    expect(later.headers.get("location")).toBe(`${base}/${later.body.id}`);
    expect(later.body).toMatchObject({
      id: expect.stringMatching(/^ovr_/),
      recipient_uuid: anna,
      starts_at: "2026-03-29T00:00:00.000Z",
      ends_at: "2026-03-29T02:00:00.000Z"
    });
    const earlier = await gw.call("POST", base, {
      body: {recipient_uuid: anna, starts_at: "2026-03-28T22:00:00Z", ends_at: "2026-03-29T00:00:00Z"}
    });
    expect(earlier.status).toBe(201);
    expect((await gw.call("GET", base)).body.items.map((item: {id: string}) => item.id)).toEqual([
      earlier.body.id,
      later.body.id
    ]);

    expect((await onCallAt(schedule.uuid, "2026-03-28T21:59:59.999Z")).recipients[0].uuid).toBe(cem);
    const covered = await onCallAt(schedule.uuid, "2026-03-29T01:00:00Z");
    expect(covered.recipients).toEqual([{uuid: anna, name: "Anna"}]);
    expect(covered.shift).toMatchObject({
      source: "override",
      override_id: later.body.id,
      starts_at: "2026-03-29T00:00:00.000Z",
      ends_at: "2026-03-29T02:00:00.000Z"
    });
    expect((await onCallAt(schedule.uuid, "2026-03-29T02:00:00Z")).recipients[0].uuid).toBe(cem);

    expect((await gw.call("DELETE", `${base}/${later.body.id}`)).status).toBe(204);
    expect((await gw.call("DELETE", `${base}/${later.body.id}`)).status).toBe(404);
    expect((await onCallAt(schedule.uuid, "2026-03-29T01:00:00Z")).recipients[0].uuid).toBe(cem);
  });

  it("refuses an override that overlaps another, ends before it starts, or names no recipient", async () => {
    const {schedule, anna, crewD} = await createPlant(gw);
    const base = `/api/v1/schedules/${schedule.uuid}/overrides`;
    const first = await gw.call("POST", base, {
      body: {recipient_uuid: anna, starts_at: "2026-04-01T08:00:00Z", ends_at: "2026-04-01T16:00:00Z"}
    });
    expect(first.status).toBe(201);
    const overlapping = await gw.call("POST", base, {
      body: {recipient_uuid: anna, starts_at: "2026-04-01T15:00:00Z", ends_at: "2026-04-01T20:00:00Z"}
    });
    expect(overlapping.status).toBe(409);
    expect(overlapping.body.detail).toContain(first.body.id);
    const touching = await gw.call("POST", base, {
      body: {recipient_uuid: anna, starts_at: "2026-04-01T16:00:00Z", ends_at: "2026-04-01T20:00:00Z"}
    });
    expect(touching.status).toBe(201);
    const backwards = await gw.call("POST", base, {
      body: {recipient_uuid: anna, starts_at: "2026-04-02T16:00:00Z", ends_at: "2026-04-02T16:00:00Z"}
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.errors).toEqual([{pointer: "/ends_at", detail: "must be later than starts_at"}]);
    // A group is not a person who can stand in.
    const group = await gw.call("POST", base, {
      body: {recipient_uuid: crewD, starts_at: "2026-04-03T00:00:00Z", ends_at: "2026-04-03T01:00:00Z"}
    });
    expect(group.status).toBe(422);
    expect(group.body.errors).toEqual([
      {
        pointer: "/recipient_uuid",
        detail: expect.stringMatching(/^\S+ is a group: an override puts one recipient on call/)
      }
    ]);
    const wrongDate = await gw.call("POST", base, {
      body: {recipient_uuid: anna, starts_at: "tomorrow", ends_at: "2026-04-03T01:00:00Z"}
    });
    expect(wrongDate.status).toBe(400);
    expect((await gw.call("GET", base)).body.items).toHaveLength(2);
    expect(
      (
        await gw.call("POST", `/api/v1/schedules/00000000-0000-4000-8000-000000000000/overrides`, {
          body: {recipient_uuid: anna, starts_at: "2026-04-03T00:00:00Z", ends_at: "2026-04-03T01:00:00Z"}
        })
      ).status
    ).toBe(404);
  });

  it("accepts only one of two overlapping overrides sent at once", async () => {
    const {schedule, anna, bert} = await createPlant(gw);
    const base = `/api/v1/schedules/${schedule.uuid}/overrides`;
    const answers = await Promise.all(
      [anna, bert].map((recipient_uuid) =>
        gw.call("POST", base, {
          body: {recipient_uuid, starts_at: "2026-06-01T00:00:00Z", ends_at: "2026-06-02T00:00:00Z"}
        })
      )
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect((await gw.call("GET", base)).body.items).toHaveLength(1);
  });
});

describe("deleting what a schedule references", () => {
  it("refuses to delete a member, a group crew, or an override's recipient until the override is gone", async () => {
    const {schedule, cem, crewD} = await createPlant(gw);
    const member = await gw.call("DELETE", `/api/v1/recipients/${cem}`);
    expect(member.status).toBe(409);
    expect(member.body.detail).toContain(`schedule Line 3 (${schedule.uuid})`);
    const group = await gw.call("DELETE", `/api/v1/groups/${crewD}`);
    expect(group.status).toBe(409);
    expect(group.body.detail).toContain(schedule.uuid);
    const standIn = await createRecipient(gw, {name: "Stand-in", email: "stand-in@plant.lan", phone: null});
    const override = await gw.call("POST", `/api/v1/schedules/${schedule.uuid}/overrides`, {
      body: {recipient_uuid: standIn, starts_at: "2026-07-01T00:00:00Z", ends_at: "2026-07-02T00:00:00Z"}
    });
    expect((await gw.call("DELETE", `/api/v1/recipients/${standIn}`)).status).toBe(409);
    await gw.call("DELETE", `/api/v1/schedules/${schedule.uuid}/overrides/${override.body.id}`);
    expect((await gw.call("DELETE", `/api/v1/recipients/${standIn}`)).status).toBe(204);
  });

  it("deletes a schedule, after which its members and crews can go", async () => {
    const {schedule, cem, crewD} = await createPlant(gw);
    expect((await gw.call("DELETE", `/api/v1/schedules/${schedule.uuid}`)).status).toBe(204);
    expect((await gw.call("GET", `/api/v1/schedules/${schedule.uuid}`)).status).toBe(404);
    expect((await gw.call("DELETE", `/api/v1/groups/${crewD}`)).status).toBe(204);
    expect((await gw.call("DELETE", `/api/v1/recipients/${cem}`)).status).toBe(204);
  });
});
