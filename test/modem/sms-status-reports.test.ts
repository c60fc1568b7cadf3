import {describe, expect, it} from "vitest";
import {parseCds, reportFor, SmsStatusReports} from "../../src/modem/sms-status-reports.js";

describe("parseCds", () => {
  it.each([
    [
      "with the recipient's address",
      '+CDS: 6,37,"+4915112345678",145,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0',
      {messageRef: 37, status: 0}
    ],
    [
      "with the optional address left out",
      '+CDS: 6,255,,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",70',
      {messageRef: 255, status: 70}
    ],
    [
      "PDU mode, the length and the PDU the parser joined",
      "+CDS: 25,0006250C91945115325476621122100000046211221000050446",
      {messageRef: 0x25, status: 0x46}
    ],
    [
      "PDU mode with a PDU that is not a status report",
      "+CDS: 23,0011000B916407281553F80000AA0AE8329BFD4697D9EC37",
      null
    ],
    ["a reference out of range", '+CDS: 6,256,,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0', null],
    ["another URC", '+CMTI: "SM",3', null]
  ])("reads %s", (_name, line, expected) => {
    expect(parseCds(line)).toEqual(expected);
  });
});

describe("reportFor (TP-Status)", () => {
  it.each([
    [0, "delivered"],
    [2, "delivered"],
    [0x1f, "delivered"],
    [0x20, null],
    [0x3f, null],
    [0x40, "failed"],
    [0x62, "failed"],
    [0x7f, "failed"],
    [0x80, null]
  ])("%i is %s", (status, outcome) => {
    expect(reportFor(status)?.outcome ?? null).toBe(outcome);
  });

  it("names the failure in words", () => {
    expect(reportFor(0x61)).toEqual({
      outcome: "failed",
      detail: "the network gave up delivering the SMS: phone busy (TP-Status 97)"
    });
    expect(reportFor(0x5a)).toEqual({
      outcome: "failed",
      detail: "the network gave up delivering the SMS: service centre specific error (TP-Status 90)"
    });
  });
});

const cds = (ref: number, status: number) => `+CDS: 6,${ref},,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",${status}`;

describe("SmsStatusReports", () => {
  it("takes status reports and leaves other URCs to the caller", () => {
    const reports = new SmsStatusReports(60_000);
    expect(reports.receive(cds(1, 0))).toBe(true);
    expect(reports.receive("RING")).toBe(false);
  });

  it("ends the old wait with null when a new message reuses its reference", async () => {
    const reports = new SmsStatusReports(60_000);
    const first = reports.expect(200);
    const second = reports.expect(200);
    expect(await first).toBeNull();
    reports.receive(cds(200, 0));
    expect(await second).toMatchObject({outcome: "delivered"});
  });

  it("ends a wait with null at the limit, and a late report then finds nobody", async () => {
    const reports = new SmsStatusReports(30);
    expect(await reports.expect(5)).toBeNull();
    expect(reports.receive(cds(5, 0))).toBe(true);
  });

  it("ends every wait with null at stop", async () => {
    const reports = new SmsStatusReports(60_000);
    const waits = [reports.expect(1), reports.expect(2)];
    reports.stop();
    expect(await Promise.all(waits)).toEqual([null, null]);
  });
});
