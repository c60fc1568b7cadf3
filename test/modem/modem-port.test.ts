import {realpathSync} from "node:fs";
import {afterEach, describe, expect, it} from "vitest";
import {modemUnavailableReason} from "../../src/modem/availability.js";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {ModemSimulator} from "../support/modem-simulator.js";
import {NUMBER, useModemOnSimulator} from "../support/modem-on-simulator.js";

const setup = useModemOnSimulator();

describe.each(["sim800", "sim7600", "quectel"] as const)(
  "The modem's port in the real world, %s dialect",
  (dialect) => {
    it("re-opens a stable path that now leads to a new device after a USB re-enumeration", async () => {
      const {simulator, modem} = await setup(dialect, {call: {outcome: "busy", afterMs: 30, keys: []}});
      const before = modem.health().device;
      expect(before).toBe(realpathSync(simulator.devicePath));
      const reconnecting = modem.waitForState("reconnecting");
      // The link is moved, never removed: only what it points at tells the old tty is dead.
      await simulator.reenumerate();
      await reconnecting;
      await modem.waitForState("ready");
      const after = realpathSync(simulator.devicePath);
      expect(after).not.toBe(before);
      expect(modem.health()).toMatchObject({
        device: after,
        port_open: true,
        last_error: `modem re-enumerated: ${simulator.devicePath} is now ${after}`
      });
      expect(simulator.count("ATE0")).toBe(2);
      expect(await modem.dial(NUMBER)).toEqual({result: "busy", reason: "busy"});
    });

    it("names ModemManager holding the port, with the fix, and is available again once it lets go", async () => {
      const {simulator, modem, logLines} = await setup(dialect);
      const holder = await simulator.holdPort("ModemManager");
      await modem.tick();
      expect(modem.health().port_held_by).toEqual([{pid: holder.pid, name: "ModemManager"}]);
      expect(modemUnavailableReason(modem.health(), "/dev/ttyUSB2")).toBe(
        `modem port /dev/ttyUSB2 is also held by ModemManager (pid ${holder.pid}), which takes the modem's answers: ` +
          "make ModemManager ignore the modem (docs/modem.md#modemmanager)"
      );
      await modem.tick();
      expect(logLines.filter((line) => line.includes("held by another process"))).toHaveLength(1);
      await holder.release();
      await modem.tick();
      expect(modem.health().port_held_by).toEqual([]);
      expect(logLines.filter((line) => line.includes("no longer held by another process"))).toHaveLength(1);
      expect(modemUnavailableReason(modem.health(), "/dev/ttyUSB2")).toBeNull();
    });
  }
);

describe("A ModemManager the service cannot look into", () => {
  it("is named as the likely cause while the modem does not answer, and no more once it answers", async () => {
    const {simulator, modem} = await setup("sim800", {}, {commandTimeoutMs: 250, maxConsecutiveTimeouts: 10});
    // Running, its open files out of sight (root's, for an unprivileged service): only its name shows.
    const manager = await simulator.runProgram("ModemManager");
    await modem.tick();
    expect(modem.health().port_held_by).toEqual([]);
    simulator.script.silent = true;
    await modem.tick();
    await modem.tick();
    expect(modem.health().port_held_by).toEqual([{pid: manager.pid, name: "ModemManager", suspected: true}]);
    expect(modemUnavailableReason(modem.health(), "/dev/ttyUSB2")).toBe(
      `modem port /dev/ttyUSB2 is busy or not answering, and ModemManager (pid ${manager.pid}) is running, which ` +
        "takes modems' ports: make ModemManager ignore the modem (docs/modem.md#modemmanager)"
    );
    simulator.script.silent = false;
    await modem.tick();
    await modem.tick();
    expect(modem.health().port_held_by).toEqual([]);
    await manager.release();
  });
});

describe("Another program on the modem's port, on /readyz", () => {
  let gw: TestGateway | null = null;
  let simulator: ModemSimulator | null = null;
  afterEach(async () => {
    await gw?.stop();
    await simulator?.stop();
    gw = null;
    simulator = null;
  });

  it("makes both modem channels unavailable, naming the program and how to stop it", async () => {
    simulator = await ModemSimulator.start("sim7600");
    const holder = await simulator.holdPort("minicom");
    gw = await startTestGateway({modem: {port: simulator.devicePath, profile: "sim7600"}}, {drivers: "production"});
    const ready = await gw.call("GET", "/readyz");
    const reason =
      `modem port ${simulator.devicePath} is also held by minicom (pid ${holder.pid}), which takes the modem's ` +
      "answers: stop it (one AT port serves one program)";
    for (const channel of ["voice_call", "sms"])
      expect(ready.body.channels.find((entry: any) => entry.channel === channel)).toMatchObject({
        available: false,
        reason,
        details: {port_held_by: [{pid: holder.pid, name: "minicom"}]}
      });
  });
});
