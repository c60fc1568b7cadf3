import {createServer, type AddressInfo} from "node:net";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {eventually, shareEmailRig} from "../channels/email-rig.js";
import {ModbusServer} from "../support/modbus-server.js";
import {PtyPair} from "../support/pty-pair.js";
import {tempDir} from "../support/gateway.js";

// The modbus integration end to end against an independent device: pymodbus's server on
// loopback (Modbus TCP), the gateway with its production drivers paging through a loopback SMTP
// peer. One gateway, one device and one integration for the file; the tests run in order, as the
// device's life goes: a value crosses its limit and clears, the device answers with an exception,
// it is unplugged and plugged back in. Short poll intervals and delays keep it cheap.
const rig = shareEmailRig();
let device: ModbusServer;
let target: string;
let id: string;

beforeAll(async () => {
  device = await ModbusServer.start();
  await device.set("hr", 100, 70);
  await device.set("co", 5, 0);
  // A float32 NaN (0x7FC00000), a device's usual "no value".
  await device.set("hr", 110, 0x7fc0);
  target = await rig().recipient();
  const created = await rig().gw.call("POST", "/api/v1/integrations", {
    body: {
      name: "press-7",
      kind: "modbus",
      target,
      default_priority: "high",
      modbus: {host: "127.0.0.1", port: device.port, unit_id: 1, poll_interval_ms: 200, timeout_ms: 500},
      unreachable_after_seconds: 2,
      points: [
        {
          name: "oil_temp",
          table: "holding_register",
          address: 100,
          type: "uint16",
          scale: 1,
          unit: "°C",
          alarm: {
            when: ">",
            value: 80,
            deadband: 2,
            on_delay_seconds: 1,
            off_delay_seconds: 1,
            priority: "critical",
            title: "Press 7 oil {value} {unit}"
          }
        },
        {name: "door_open", table: "coil", address: 5, type: "bool"},
        {name: "flow", table: "holding_register", address: 110, type: "float32", unit: "m³/h"}
      ]
    }
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // A link just made has not heard from the device yet: it says so in words, not with a bare null
  // (unless the device's first answer already came in).
  const {link} = created.body;
  if (link.state === "unreachable")
    expect(link.last_error).toBe("no answer from the device yet since the link started");
  id = created.body.id;
}, 30_000);
afterAll(async () => {
  await device.stop();
});

const integration = async () => (await rig().gw.call("GET", `/api/v1/integrations/${id}`)).body;
const point = async (name: string) => (await integration()).points.find((each: any) => each.name === name);
const notificationSaying = async (text: string) => {
  const items = (await rig().gw.call("GET", "/api/v1/notifications?limit=50")).body.items as any[];
  return items.find((item) => item.message.includes(text));
};

describe("a modbus integration", () => {
  it("reads the device's points and shows their state and the link", async () => {
    await eventually(
      "the first readings",
      () => integration(),
      (body) => body.link?.state === "connected" && body.points[0].state?.value === 70
    );
    const body = await integration();
    expect(body.points[0].state).toMatchObject({value: 70, quality: "good", alarm: "normal"});
    expect(body.points[1].state).toMatchObject({value: false, quality: "good"});
    expect(body.points[2].state).toMatchObject({value: null, quality: "bad", alarm: "normal"});
    const metrics = await rig().gw.call("GET", "/metrics");
    expect(metrics.body).toMatch(/klaxon_plc_link_up\{[^}]*integration="press-7"[^}]*\} 1/);
    await device.set("co", 5, 1);
    const read = await rig().gw.call("POST", `/api/v1/integrations/${id}/read`);
    expect(read.status).toBe(200);
    expect(read.body.points[1].state.value, JSON.stringify(read.body)).toBe(true);
  });

  it("pages when a value crosses its limit for the on-delay, and resolves when it clears", async () => {
    await device.set("hr", 100, 85);
    const mail = await rig().peer.next();
    expect(mail.text).toContain("Press 7 oil 85 °C");
    const fired = await notificationSaying("Press 7 oil 85 °C");
    expect(fired).toMatchObject({priority: "critical", source: "press-7"});
    expect((await point("oil_temp")).state.alarm).toBe("active");
    // Inside the deadband (80 - 2 < 79 <= 80) it stays active; below it, it resolves after the off-delay.
    await device.set("hr", 100, 79);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await notificationSaying("Press 7 oil 85 °C")).status).toBe("notifying");
    await device.set("hr", 100, 70);
    await eventually(
      "the alert resolved",
      () => notificationSaying("Press 7 oil 85 °C"),
      (notification) => notification.status === "resolved"
    );
    expect((await point("oil_temp")).state.alarm).toBe("normal");
  });

  it("names a Modbus exception code in words", async () => {
    await device.fail("hr", 100, 2);
    const body = await eventually(
      "the exception seen",
      () => integration(),
      (seen) => seen.link.last_error?.includes("illegal data address") === true
    );
    expect(body.link.last_error).toContain("Modbus exception 2");
    expect(body.points[0].state.quality).toBe("bad");
    const ready = await rig().gw.call("GET", "/readyz");
    expect(ready.body.plc_links).toEqual([
      expect.objectContaining({name: "press-7", kind: "modbus", last_error: expect.stringContaining("exception 2")})
    ]);
    await device.heal();
    await eventually(
      "answering again",
      () => integration(),
      (seen) => seen.link.state === "connected"
    );
  });

  it("keeps polling a device while another one hangs", async () => {
    // Accepts connections and never answers: every request of that link times out.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const created = await rig().gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "silent-9",
        kind: "modbus",
        target,
        modbus: {
          host: "127.0.0.1",
          port: (silent.address() as AddressInfo).port,
          poll_interval_ms: 200,
          timeout_ms: 300
        },
        points: [{name: "speed", table: "input_register", address: 1, type: "uint16"}]
      }
    });
    try {
      await eventually(
        "the silent device unreachable",
        async () => (await rig().gw.call("GET", `/api/v1/integrations/${created.body.id}`)).body.link,
        (link) => link?.last_error?.includes("no answer in time") === true
      );
      const before = (await point("oil_temp")).state.read_at;
      await eventually(
        "press-7 read again",
        () => point("oil_temp"),
        (each) => each.state.read_at > before
      );
    } finally {
      await rig().gw.call("DELETE", `/api/v1/integrations/${created.body.id}`);
      silent.close();
    }
  });

  it("loses only the PLC link worker when it ends: paging goes on, the link says why and comes back", async () => {
    // Design rule 14: the device's bytes are decoded in a supervised worker. No reply of pymodbus
    // or of a fuzzed device ends modbus-serial's decoder, so the test ends the worker itself, as a
    // crash would, through the gateway's handle on it.
    const before = (await point("oil_temp")).state.read_at;
    await rig().gw.gateway.plcLinkWorkers.terminate("modbus");
    // Another person: the target's next page (the unreachable test below) is not held behind this one.
    const other = await rig().recipient({name: "Ahmed", email: "ahmed@factory.lan"});
    await rig().send(other, {message: "Boiler pressure low, paged while the PLC worker restarts"});
    expect((await rig().peer.next()).text).toContain("Boiler pressure low, paged while the PLC worker restarts");
    await eventually(
      "the link back, with fresh readings, saying what happened",
      () => integration(),
      (seen) =>
        seen.link.state === "connected" &&
        seen.points[0].state.read_at > before &&
        seen.link.last_error?.includes("PLC link worker restarted") === true
    );
    const ready = await rig().gw.call("GET", "/readyz");
    const worker = ready.body.parser_workers.find((each: any) => each.name === "plc-modbus");
    expect(worker.running).toBe(true);
    expect(worker.restarts).toBeGreaterThanOrEqual(1);
    expect(worker.crashes.exit).toBeGreaterThanOrEqual(1);
    const metrics = await rig().gw.call("GET", "/metrics");
    expect(metrics.body).toMatch(/klaxon_parser_worker_crashes_total\{worker="plc-modbus",kind="exit"\} [1-9]/);
  });

  it("pages the target when the device stops answering, and resolves when it is back", async () => {
    await device.stop();
    const mail = await rig().peer.next();
    expect(mail.text).toContain("PLC press-7 unreachable");
    expect(mail.text).toContain("connection refused");
    expect((await integration()).link.state).toBe("unreachable");
    await device.start();
    await eventually(
      "the unreachable page resolved",
      () => notificationSaying("PLC press-7 unreachable"),
      (notification) => notification.status === "resolved",
      30_000
    );
    expect((await integration()).link.state).toBe("connected");
  });

  it("pages an unplugged device again after the gateway restarts, though it paged and resolved before", async () => {
    const pages = (await rig().gw.call("GET", "/api/v1/notifications?limit=50")).body.items.filter((item: any) =>
      item.message.includes("PLC press-7 unreachable")
    ).length;
    await device.stop();
    await rig().gw.restart();
    expect((await rig().peer.next()).text).toContain("PLC press-7 unreachable");
    const after = (await rig().gw.call("GET", "/api/v1/notifications?limit=50")).body.items.filter((item: any) =>
      item.message.includes("PLC press-7 unreachable")
    );
    expect(after).toHaveLength(pages + 1);
    await device.start();
    await eventually(
      "answering again",
      () => integration(),
      (seen) => seen.link?.state === "connected"
    );
  });

  it("refuses a point that does not fit its table or address space, in words, storing nothing", async () => {
    const before = (await rig().gw.call("GET", "/api/v1/integrations")).body.items.length;
    const answer = await rig().gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "press-8",
        kind: "modbus",
        target,
        modbus: {host: "127.0.0.1"},
        points: [
          {name: "speed", table: "coil", address: 3, type: "float32"},
          {name: "count", table: "input_register", address: 65_535, type: "uint32"},
          {name: "mode", table: "holding_register", address: 1, type: "uint16", alarm: {when: ">"}}
        ]
      }
    });
    expect(answer.status).toBe(400);
    const details = JSON.stringify(answer.body);
    expect(details).toContain("a coil holds one bit");
    expect(details).toContain("address out of range");
    expect(details).toContain('\\">\\" compares with a value');
    const opcua = await rig().gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "boiler-1",
        kind: "opcua",
        target,
        opcua: {
          endpoint_url: "opc.tcp://127.0.0.1:4840",
          security_mode: "SignAndEncrypt",
          security_policy: "None",
          password: "secret-1",
          alarms: true,
          severity_bands: {critical: 500, high: 700}
        },
        points: [{name: "temp", node_id: "ns=2;s=Boiler.Temperature", table: "holding_register"}]
      }
    });
    expect(opcua.status).toBe(400);
    expect(opcua.body.errors.map((error: {pointer: string}) => error.pointer).sort()).toEqual([
      "/opcua/security_policy",
      "/opcua/severity_bands/high",
      "/opcua/user",
      "/points/0/table"
    ]);
    expect(JSON.stringify(opcua.body)).not.toContain("secret-1");
    expect((await rig().gw.call("GET", "/api/v1/integrations")).body.items.length).toBe(before);
  });

  it("changes a modbus integration's points by merge patch, checked as at creation", async () => {
    const created = await rig().gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "press-10",
        kind: "modbus",
        target,
        modbus: {host: "127.0.0.1", port: device.port, poll_interval_ms: 500},
        points: [{name: "oil_temp", table: "holding_register", address: 100, type: "uint16"}]
      }
    });
    const path = `/api/v1/integrations/${created.body.id}`;
    try {
      const wrong = await rig().gw.call("PATCH", path, {
        body: {points: [{name: "door", table: "coil", address: 5, type: "int16"}]}
      });
      expect(wrong.status).toBe(400);
      expect(JSON.stringify(wrong.body)).toContain("a coil holds one bit");
      const patched = await rig().gw.call("PATCH", path, {
        body: {points: [{name: "door", table: "coil", address: 5, type: "bool"}], unreachable_after_seconds: 30}
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({unreachable_after_seconds: 30, modbus: {port: device.port}});
      await eventually(
        "the new point read",
        async () => (await rig().gw.call("GET", path)).body.points,
        (points) => points.length === 1 && points[0].name === "door" && points[0].state?.value === true
      );
    } finally {
      await rig().gw.call("DELETE", path);
    }
  });
});

// Parity none: a Linux pty refuses parity settings (tcsetattr EINVAL), so 8E1 cannot be tried here.
describe("a modbus integration over RTU (a socat pty pair as the RS-485 line)", () => {
  let line: PtyPair;
  let meter: ModbusServer;
  beforeAll(async () => {
    line = new PtyPair(tempDir("klaxon-rtu-"));
    await line.start();
    meter = await ModbusServer.start({serialPort: line.peerPath, baudRate: 19_200, parity: "N"}, 3);
    line.publish();
  }, 30_000);
  afterAll(async () => {
    await meter.stop();
    await line.kill();
  });

  it("reads the meter at its unit id and pages a bit of a status word", async () => {
    await meter.set("ir", 7, 0b0001);
    const created = await rig().gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "main-meter",
        kind: "modbus",
        target,
        modbus: {serial_port: line.devicePath, baud_rate: 19_200, parity: "none", stop_bits: 1, unit_id: 3},
        points: [
          {
            name: "status",
            table: "input_register",
            address: 7,
            type: "uint16",
            alarm: {when: "bit", bit: 2, title: "Main meter phase loss"}
          }
        ]
      }
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const meterId = created.body.id;
    await eventually(
      "read over RTU",
      async () => (await rig().gw.call("POST", `/api/v1/integrations/${meterId}/read`)).body,
      (body) => body.link?.state === "connected" && body.points[0].state?.value === 1
    );
    await meter.set("ir", 7, 0b0101);
    expect((await rig().peer.next()).text).toContain("Main meter phase loss");
    // The serial port is the gateway thread's (the worker gets its bytes): a worker's end closes it
    // and the next worker opens it again.
    await rig().gw.gateway.plcLinkWorkers.terminate("modbus");
    await meter.set("ir", 7, 0b1101);
    await eventually(
      "read over RTU by the next worker",
      async () => (await rig().gw.call("GET", `/api/v1/integrations/${meterId}`)).body,
      (body) => body.link?.state === "connected" && body.points[0].state?.value === 0b1101
    );
  });
});
