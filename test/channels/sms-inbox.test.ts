import {afterEach, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {startModemGateway, type ModemGatewayRig} from "../support/modem-simulator.js";

const PHONE = "+4915112345678";

let rig: ModemGatewayRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

/** Sends an alert to a recipient on sms only and returns its id and the reply code the SMS carried. */
async function alertBySms(r: ModemGatewayRig): Promise<{id: string; code: string}> {
  const from = r.simulator.sent.length;
  const id = await r.send(await r.recipient(["sms"], {phone: PHONE}));
  const code = /Reply 1 (\d+) or ACK \1/.exec((await r.simulator.waitForSms(from)).text)?.[1];
  if (!code) throw new Error("no reply code in the SMS");
  return {id, code};
}

function inboundRows(r: ModemGatewayRig): {status: string; form: string; raw: string; body: string | null}[] {
  return r.gw.gateway.journal.db.prepare("SELECT status, form, raw, body FROM inbound_sms ORDER BY id").all() as any[];
}

async function acknowledged(r: ModemGatewayRig, id: string): Promise<void> {
  await eventually(
    "the alert acknowledged by SMS",
    async () => (await r.notification(id)).status,
    (status) => status === "acknowledged",
    // After a restart the modem is opened, set up and its inbox listed first: slow on a busy machine.
    40_000
  );
}

/** The journal's incoming rows once none waits any more: marked handled after the answer went out. */
async function settledRows(r: ModemGatewayRig): Promise<ReturnType<typeof inboundRows>> {
  return eventually(
    "every incoming SMS handled",
    () => inboundRows(r),
    (rows) => rows.every((row) => row.status !== "waiting")
  );
}

async function smsDetails(r: ModemGatewayRig): Promise<any> {
  const ready = await r.gw.call("GET", "/readyz");
  return ready.body.channels.find((channel: any) => channel.channel === "sms").details;
}

describe.each(["sim800", "sim7600", "quectel"] as const)("the SIM's inbox, %s", (dialect) => {
  it("never deletes an ACK reply unread: firmware listing PDUs in text mode, the reply stored while the gateway was down", async () => {
    rig = await startModemGateway(dialect, {failCommands: ["AT+CMGF=0"]});
    rig.simulator.sms.listsPdusInTextMode = true;
    const {id, code} = await alertBySms(rig);
    await rig.gw.gateway.stop();
    rig.simulator.receiveSms(PHONE, `ACK ${code}`, {announce: false});
    // The delete must find the message already committed: look at the journal the moment it comes.
    const r = rig;
    const committedAtDelete = new Promise<string[]>((resolve) =>
      r.simulator.on(
        "command",
        (command) => command.startsWith("AT+CMGD=") && resolve(inboundRows(r).map((row) => row.raw))
      )
    );
    await rig.gw.restart();
    await acknowledged(rig, id);
    expect(await committedAtDelete).toEqual([expect.stringMatching(/^[0-9A-F]+$/)]);
    expect(await settledRows(rig)).toMatchObject([{status: "handled", form: "pdu", body: `ACK ${code}`}]);
    expect(rig.simulator.storage.size).toBe(0);
  });

  it("reassembles a reply that arrives in two concatenated parts and acts on the whole text", async () => {
    rig = await startModemGateway(dialect);
    const {id, code} = await alertBySms(rig);
    rig.simulator.sms.receiveParts(PHONE, `ACK ${code}`, 2);
    await acknowledged(rig, id);
    expect((await settledRows(rig)).map((row) => [row.status, row.body])).toEqual([
      ["handled", `ACK ${code}`.slice(0, Math.ceil(`ACK ${code}`.length / 2))],
      ["handled", `ACK ${code}`.slice(Math.ceil(`ACK ${code}`.length / 2))]
    ]);
    expect(rig.simulator.storage.size).toBe(0);
  });

  it("keeps a message it cannot read on the SIM, warns once, shows it in the details, and reads the rest", async () => {
    rig = await startModemGateway(dialect);
    const {id, code} = await alertBySms(rig);
    await rig.gw.gateway.stop();
    const broken = rig.simulator.sms.receive(
      {sender: PHONE, text: "", rawPdu: "0004038121F3000099309251619580FF"},
      false
    );
    rig.simulator.receiveSms(PHONE, `ACK ${code}`, {announce: false});
    await rig.gw.restart();
    await acknowledged(rig, id);
    expect([...rig.simulator.storage.keys()]).toEqual([broken]);
    expect(await smsDetails(rig)).toMatchObject({
      sim_storage: {used: 1, total: 30},
      unreadable_sms: [{sim_index: broken, form: "pdu", problem: "user data shorter than its length says"}]
    });
    expect(inboundRows(rig)[0]).toEqual({
      status: "unreadable",
      form: "pdu",
      raw: "0004038121F3000099309251619580FF",
      body: null
    });
    // Listed again at the next drain (a restart): still kept, the same journal row, not warned about again.
    await rig.gw.gateway.stop();
    await rig.gw.restart();
    await eventually(
      "the second drain",
      () => smsDetails(rig!),
      (details) => details.unreadable_sms.length === 1
    );
    expect(rig.simulator.count("AT+CMGL")).toBe(2);
    expect(inboundRows(rig).filter((row) => row.status === "unreadable")).toHaveLength(1);
    expect(rig.gw.logLines.filter((line) => line.includes("cannot be read"))).toHaveLength(1);
    expect(rig.simulator.storage.has(broken)).toBe(true);
  });
});

describe("the SIM's inbox", () => {
  it("reads a status report the modem stored (+CDSI): the attempt turns delivered and the report leaves the SIM", async () => {
    rig = await startModemGateway("sim7600", {statusReport: {outcome: "never", afterMs: 0, interleave: false}});
    const {id} = await alertBySms(rig);
    rig.simulator.sms.storeStatusReport(37, PHONE, 0);
    const attempts = await eventually(
      "the attempt confirmed",
      async () => (await rig!.notification(id)).attempts,
      (list: any[]) => list[0]?.outcome === "delivered"
    );
    expect(attempts[0].detail).toMatch(
      /^the network reports the SMS received by the phone \(TP-Status 0\); message reference 37;/
    );
    await eventually(
      "the report deleted",
      () => rig!.simulator.storage.size,
      (size) => size === 0
    );
    expect(inboundRows(rig)).toEqual([]);
  });

  it("does not list an empty SIM, and says nothing about it", async () => {
    rig = await startModemGateway("sim800");
    const details = await eventually(
      "the storage check",
      () => smsDetails(rig!),
      (seen) => seen.sim_storage !== null
    );
    expect(details).toMatchObject({sim_storage: {used: 0, total: 30}, unreadable_sms: []});
    expect(rig.simulator.count("AT+CMGL")).toBe(0);
    expect(rig.gw.logLines.filter((line) => /warn/.test(line) && /sms/.test(line))).toEqual([]);
  });

  it("warns when the SIM's storage is nearly full", async () => {
    rig = await startModemGateway("quectel");
    await rig.gw.gateway.stop();
    // Messages nobody can read, so they stay and the level holds while the test looks.
    for (let i = 0; i < 24; i += 1)
      rig.simulator.sms.receive({sender: PHONE, text: "", rawPdu: "0004038121F3000099309251619580FF"}, false);
    await rig.gw.restart();
    await eventually(
      "the warning",
      () => rig!.gw.logLines.filter((line) => line.includes("nearly full")),
      (lines) => lines.length === 1
    );
    expect(await smsDetails(rig)).toMatchObject({sim_storage: {used: 24, total: 30}});
    // And on /metrics, for an alert rule before the SIM overflows.
    const metrics = await (await fetch(`${rig.gw.url}/metrics`)).text();
    expect(metrics).toContain('klaxon_channel_detail{channel="sms",detail="sim_storage.used"} 24');
    expect(metrics).toContain('klaxon_channel_detail{channel="sms",detail="sim_storage.total"} 30');
  });
});
