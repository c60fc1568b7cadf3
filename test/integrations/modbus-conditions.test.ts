import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {eventually, shareEmailRig} from "../channels/email-rig.js";
import {ModbusServer} from "../support/modbus-server.js";

// Every alarm condition end to end (issue 35, "How it is tested"): one integration on pymodbus's
// server whose points each hold one condition type; the device's registers move, the gateway pages
// through a loopback SMTP peer and resolves on the clear, and a chattering point pages once and its
// open alert says it is chattering.
const rig = shareEmailRig();
let device: ModbusServer;
let id: string;

/** Each point: its register, its condition, the value it starts at, the value that fires it. */
const CONDITIONS = [
  {name: "ge", address: 120, alarm: {when: ">=", value: 50}, calm: 49, firing: 50},
  {name: "lt", address: 121, alarm: {when: "<", value: 10}, calm: 10, firing: 9},
  {name: "le", address: 122, alarm: {when: "<=", value: 10}, calm: 11, firing: 10},
  {name: "eq", address: 123, alarm: {when: "==", value: 7}, calm: 6, firing: 7},
  {name: "ne", address: 124, alarm: {when: "!=", value: 0}, calm: 0, firing: 3},
  {name: "bit", address: 125, alarm: {when: "bit", bit: 2}, calm: 0b011, firing: 0b100}
];
const CHATTER = {name: "chatter", address: 127};
const CHANGE = {name: "change", address: 126};

beforeAll(async () => {
  device = await ModbusServer.start();
  for (const point of CONDITIONS) await device.set("hr", point.address, point.calm);
  await device.set("hr", CHANGE.address, 1);
  await device.set("hr", CHATTER.address, 0);
  const target = await rig().recipient();
  const quick = {on_delay_seconds: 0, off_delay_seconds: 0, priority: "critical"};
  const created = await rig().gw.call("POST", "/api/v1/integrations", {
    body: {
      name: "line-2",
      kind: "modbus",
      target,
      modbus: {host: "127.0.0.1", port: device.port, unit_id: 1, poll_interval_ms: 200, timeout_ms: 500},
      points: [
        ...CONDITIONS.map(({name, address, alarm}) => ({
          name,
          table: "holding_register",
          address,
          type: "uint16",
          alarm: {...quick, ...alarm, title: `Line 2 ${name} at {value}`}
        })),
        {
          name: CHANGE.name,
          table: "holding_register",
          address: CHANGE.address,
          type: "uint16",
          alarm: {...quick, when: "change", title: "Line 2 mode changed to {value}"}
        },
        {
          name: CHATTER.name,
          table: "holding_register",
          address: CHATTER.address,
          type: "uint16",
          alarm: {...quick, when: ">", value: 50, chatter_per_minute: 3, title: "Line 2 level {value}"}
        }
      ]
    }
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  id = created.body.id;
}, 30_000);
afterAll(async () => {
  await device.stop();
});

const states = async () =>
  Object.fromEntries(
    ((await rig().gw.call("GET", `/api/v1/integrations/${id}`)).body.points as any[]).map((point) => [
      point.name,
      point.state
    ])
  );
const notifications = async (text: string) =>
  ((await rig().gw.call("GET", "/api/v1/notifications?limit=100")).body.items as any[]).filter((item) =>
    item.message.startsWith(text)
  );

describe("every alarm condition of a modbus point, end to end", () => {
  it("pages each condition type when its value fires it, and resolves each when it clears", async () => {
    await eventually(
      "every point read, none in alarm",
      () => states(),
      (seen) => Object.values(seen).every((state: any) => state?.quality === "good" && state.alarm === "normal")
    );
    for (const point of CONDITIONS) await device.set("hr", point.address, point.firing);
    await device.set("hr", CHANGE.address, 2);
    for (const [name, value] of [...CONDITIONS.map((point) => [point.name, point.firing]), [CHANGE.name, 2]]) {
      const title = name === CHANGE.name ? `Line 2 mode changed to ${value}` : `Line 2 ${name} at ${value}`;
      const [fired] = await eventually(
        `${name} paged`,
        () => notifications(title),
        (found) => found.length === 1
      );
      expect(fired).toMatchObject({priority: "critical", source: "line-2"});
    }
    expect((await rig().peer.next()).envelope.to).toHaveLength(1);

    for (const point of CONDITIONS) await device.set("hr", point.address, point.calm);
    for (const point of CONDITIONS)
      await eventually(
        `${point.name} resolved on the clear`,
        () => notifications(`Line 2 ${point.name} at ${point.firing}`),
        (found) => found[0]?.status === "resolved"
      );
    // A change of state is momentary: it resolves after its off-delay with no further change.
    await eventually(
      "the change of state resolved",
      () => notifications("Line 2 mode changed to 2"),
      (found) => found[0]?.status === "resolved"
    );
  });

  it("pages a chattering point once it is found chattering, and not again however long it chatters", async () => {
    const flip = async (times: number) => {
      for (let n = 0; n < times; n++) {
        await device.set("hr", CHATTER.address, n % 2 === 0 ? 60 : 40);
        // Long enough for a poll (200 ms) to see each value.
        await new Promise((resolve) => setTimeout(resolve, 450));
      }
    };
    await flip(8);
    await eventually(
      "the point chattering",
      () => states(),
      (seen) => seen[CHATTER.name]?.alarm === "chattering"
    );
    const pages = await notifications("Line 2 level");
    // Eight changes, four of them over the limit: before it was found chattering (more than 3 changes
    // a minute) it paged as any point, twice at most; once chattering, at most one page more.
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.length).toBeLessThanOrEqual(3);
    // The alert left open says so: paged before the chattering began, it is marked, not paged again.
    const open = await eventually(
      "the open alert marked chattering",
      async () => (await notifications("Line 2 level")).find((page) => page.status !== "resolved"),
      (page) => page?.message.endsWith(" (chattering)")
    );
    expect(open.message).toMatch(/^Line 2 level \d+ \(chattering\)$/);
    await flip(8);
    expect(await notifications("Line 2 level")).toHaveLength(pages.length);
    expect((await states())[CHATTER.name].alarm).toBe("chattering");
  });
});
