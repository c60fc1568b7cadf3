import {describe, expect, it} from "vitest";
import {parseCds} from "../../src/modem/sms-status-reports.js";
import {NUMBER, useModemOnSimulator} from "../support/modem-on-simulator.js";

const setup = useModemOnSimulator();

describe("Modem SMS and the shared line", () => {
  it("lets an SMS wait until the call in progress has ended, so the two never interleave", async () => {
    const {simulator, modem} = await setup("sim7600", {call: {outcome: "answer", afterMs: 30, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("answered");
    let smsDone = false;
    const sms = modem.sendSms(NUMBER, "queued behind the call").then(() => (smsDone = true));
    await modem.speak("Still talking.");
    expect(smsDone).toBe(false);
    expect(simulator.count("AT+CMGS")).toBe(0);
    await modem.hangUp();
    await sms;
    const order = simulator.received.filter((command) => /^(AT\+CHUP|AT\+CMGS|AT\+CTTS=2)/.test(command));
    expect(order).toEqual(['AT+CTTS=2,"Still talking."', "AT+CHUP", expect.stringMatching(/^AT\+CMGS=\d+$/)]);
  });

  it("gives up waiting for the line when the caller aborts", async () => {
    const {modem} = await setup("sim800", {call: {outcome: "answer", afterMs: 30, keys: []}});
    expect((await modem.dial(NUMBER)).result).toBe("answered");
    const controller = new AbortController();
    const sms = modem.sendSms(NUMBER, "never sent", controller.signal);
    controller.abort(new Error("acknowledged elsewhere"));
    await expect(sms).rejects.toThrow("acknowledged elsewhere");
    await modem.hangUp();
    expect((await modem.sendSms(NUMBER, "the line is free again"))[0].messageRef).toBe(37);
  });
});

const DELIVERED = {outcome: "delivered", detail: "the network reports the SMS received by the phone (TP-Status 0)"};

describe("Modem SMS status reports", () => {
  it("reports a permanent failure in words, and keeps waiting through a temporary error", async () => {
    const {simulator, modem} = await setup("sim7600", {
      statusReport: {outcome: "failed", afterMs: 10, interleave: false}
    });
    const [failed] = await modem.sendSms(NUMBER, "first");
    expect(await failed.report).toEqual({
      outcome: "failed",
      detail: "the network gave up delivering the SMS: incompatible destination (TP-Status 65)"
    });
    simulator.script.statusReport = {outcome: "temporary_then_delivered", afterMs: 40, interleave: false};
    // In PDU mode the report is two lines, which the session hands on joined: read it as the modem does.
    const temporary = new Promise<void>((resolve) =>
      modem.on("urc", (line) => parseCds(line)?.status === 0x21 && resolve())
    );
    const [later] = await modem.sendSms(NUMBER, "second");
    let settled = false;
    void later.report!.then(() => (settled = true));
    await temporary;
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(await later.report).toEqual(DELIVERED);
  });

  it("ends the wait with null when no report comes within the limit", async () => {
    const {modem} = await setup(
      "sim800",
      {statusReport: {outcome: "never", afterMs: 0, interleave: false}},
      {smsReportTimeoutMs: 80}
    );
    const started = Date.now();
    expect(await (await modem.sendSms(NUMBER, "into the void"))[0].report).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
  });

  it("ignores a report for a reference it is not waiting for (text mode, one-line +CDS)", async () => {
    const {simulator, modem} = await setup("quectel", {
      failCommands: ["AT+CMGF=0"],
      smsRef: 12,
      statusReport: {outcome: "never", afterMs: 0, interleave: false}
    });
    const [{report}] = await modem.sendSms(NUMBER, "waiting");
    simulator.reportStatus(99, 0);
    simulator.reportStatus(12, 0x46, {number: NUMBER});
    expect(await report).toEqual({
      outcome: "failed",
      detail: "the network gave up delivering the SMS: validity period expired (TP-Status 70)"
    });
  });

  it("matches a report that comes inside the answer to the next command, which still succeeds", async () => {
    const {modem} = await setup("sim7600", {statusReport: {outcome: "delivered", afterMs: 0, interleave: true}});
    const [{report}] = await modem.sendSms(NUMBER, "interleaved");
    // Held by the simulator until a command is answered: the health pass sends AT first.
    await modem.tick();
    expect(await report).toEqual(DELIVERED);
    expect(modem.health()).toMatchObject({
      signal: {rssi: 20},
      registration: "home",
      last_error: null,
      consecutive_timeouts: 0
    });
  });

  it("sends without a status report when the modem refuses CNMI <ds>=1, and still hears arriving SMS", async () => {
    const {simulator, modem} = await setup("sim800", {failCommands: ["AT+CNMI=2,1,0,1"]});
    expect(modem.health().capabilities).toContain("sms_notifications");
    expect(modem.health().capabilities).not.toContain("sms_status_reports");
    expect(await modem.sendSms(NUMBER, "no report")).toEqual([{messageRef: 37, report: null}]);
    expect(simulator.sms.submitted.map((part) => part.statusReportRequested)).toEqual([false]);
    const announced = new Promise<number>((resolve) => modem.once("sms", resolve));
    const index = simulator.receiveSms(NUMBER, "hi");
    expect(await announced).toBe(index);
  });

  it("ends every wait with null when it stops", async () => {
    const {modem} = await setup("sim800", {statusReport: {outcome: "never", afterMs: 0, interleave: false}});
    const [{report}] = await modem.sendSms(NUMBER, "pending at stop");
    await modem.stop();
    expect(await report).toBeNull();
  });
});
