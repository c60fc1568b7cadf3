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
async function alertBySms(r: ModemGatewayRig, message = "Oil temperature high"): Promise<{id: string; code: string}> {
  const from = r.simulator.sent.length;
  const id = await r.send(await r.recipient(["sms"], {phone: PHONE}), message);
  const sms = await r.simulator.waitForSms(from);
  const code = /Reply 1 (\d+) or ACK \1 to acknowledge/.exec(sms.text)?.[1];
  if (!code) throw new Error(`no reply code in ${JSON.stringify(sms.text)}`);
  return {id, code};
}

/** The attempts once the first one has its delivery report recorded (delivered or failed). */
async function confirmedAttempts(r: ModemGatewayRig, id: string): Promise<any[]> {
  return eventually(
    "the SMS attempt's delivery report",
    async () => (await r.notification(id)).attempts,
    (attempts: any[]) => ["delivered", "failed"].includes(attempts[0]?.outcome)
  );
}

/** Resolves once `count` incoming messages in all have been committed to the journal and acted on. */
async function handled(r: ModemGatewayRig, count: number): Promise<void> {
  const db = r.gw.gateway.journal.db;
  await eventually(
    `${count} incoming SMS handled`,
    () => (db.prepare("SELECT count(*) AS n FROM inbound_sms WHERE status = 'handled'").get() as {n: number}).n,
    (n) => n >= count
  );
}

describe.each(["sim800", "sim7600", "quectel"] as const)("sms through a production gateway, %s dialect", (dialect) => {
  it("sends the alert with a reply code, records the network's delivery report, and ACK <code> from the recipient's number acknowledges it", async () => {
    rig = await startModemGateway(dialect, {
      smsRef: 51,
      statusReport: {outcome: "delivered", afterMs: 800, interleave: false}
    });
    const {id, code} = await alertBySms(rig);
    expect(rig.simulator.sent).toEqual([
      {
        number: PHONE,
        text: `Klaxon CRITICAL from press-7: Oil temperature high. Reply 1 ${code} or ACK ${code} to acknowledge.`,
        encoding: "gsm7"
      }
    ]);
    expect((await rig.notification(id)).attempts).toMatchObject([
      {channel: "sms", outcome: "sent", detail: `accepted by the modem (message reference 51); reply code ${code}`}
    ]);
    expect(await confirmedAttempts(rig, id)).toMatchObject([
      {
        channel: "sms",
        outcome: "delivered",
        detail: `the network reports the SMS received by the phone (TP-Status 0); message reference 51; reply code ${code}`
      }
    ]);
    rig.simulator.receiveSms(PHONE, `ack ${code}`);
    await handled(rig, 1);
    expect(await rig.notification(id)).toMatchObject({
      status: "acknowledged",
      acknowledged_via: "sms",
      acknowledged_by: `Alice (${PHONE})`
    });
    expect(rig.simulator.storage.size).toBe(0);
  });
});

describe("sms replies", () => {
  it("ignores the right code from another number, and takes '1 <code>' from the national form of the right one", async () => {
    rig = await startModemGateway("sim800");
    const {id, code} = await alertBySms(rig);
    rig.simulator.receiveSms("+4917699999999", `ACK ${code}`);
    await handled(rig, 1);
    expect((await rig.notification(id)).status).toBe("notifying");
    rig.simulator.receiveSms("015112345678", `1 ${code}`);
    await handled(rig, 2);
    expect(await rig.notification(id)).toMatchObject({status: "acknowledged", acknowledged_via: "sms"});
  });

  it("deletes messages that are no acknowledgement without acting on them", async () => {
    rig = await startModemGateway("quectel");
    const {id} = await alertBySms(rig);
    rig.simulator.receiveSms(PHONE, "ACK 0000");
    rig.simulator.receiveSms(PHONE, "on my way");
    await handled(rig, 2);
    expect((await rig.notification(id)).status).toBe("notifying");
    expect(rig.simulator.storage.size).toBe(0);
  });

  it("counts a reply that arrived while the gateway was down: codes are in the journal, the SIM is drained at start", async () => {
    rig = await startModemGateway("sim7600");
    const {id, code} = await alertBySms(rig);
    await rig.gw.gateway.stop();
    rig.simulator.receiveSms(PHONE, `ACK ${code}`, {announce: false});
    await rig.gw.restart();
    await handled(rig, 1);
    expect(await rig.notification(id)).toMatchObject({status: "acknowledged", acknowledged_via: "sms"});
  });

  it.each(["sim800", "sim7600", "quectel"] as const)(
    "sends a long alert with umlauts as one concatenated GSM-7 message (%s), delivered when both parts are",
    async (dialect) => {
      rig = await startModemGateway(dialect, {}, {sms_max_parts: 3});
      const message =
        "Öltemperatur an Presse 7 über 80 Grad, Pumpe 2 abgeschaltet, Kühlwasserdurchfluss unter Minimum: bitte sofort prüfen";
      const id = await rig.send(await rig.recipient(["sms"], {phone: PHONE}), message);
      const sms = await rig.simulator.waitForSms(0);
      expect(sms).toEqual({
        number: PHONE,
        text: expect.stringMatching(
          new RegExp(`^Klaxon CRITICAL from press-7: ${message}\\. Reply 1 (\\d{4}) or ACK \\1 to acknowledge\\.$`)
        ),
        encoding: "gsm7"
      });
      // Two SMS of one concatenated message (UDH, one reference), not numbered "(1/2)" texts.
      const parts = rig.simulator.sms.submitted.map((part) => part.part);
      expect(parts).toEqual([
        {reference: parts[0]?.reference, total: 2, sequence: 1},
        {reference: parts[0]?.reference, total: 2, sequence: 2}
      ]);
      expect((await confirmedAttempts(rig, id))[0]).toMatchObject({
        outcome: "delivered",
        detail: expect.stringMatching(/^all 2 parts: .*; message reference 37, 38; reply code \d{4}$/)
      });
    }
  );

  it("sends numbered UCS-2 parts in text mode, where the modem refuses PDU mode", async () => {
    rig = await startModemGateway("sim800", {failCommands: ["AT+CMGF=0"]}, {sms_max_parts: 3});
    const id = await rig.send(
      await rig.recipient(["sms"], {phone: PHONE}),
      "Öltemperatur an Presse 7 über 80 °C, Pumpe 2 abgeschaltet, bitte sofort prüfen"
    );
    const notification = await rig.notification(id);
    const parts = rig.simulator.sent;
    // Each part is its own SMS: one with only plain ASCII left goes as GSM-7, the others as UCS-2.
    expect(parts.map((part) => part.encoding)).toEqual(
      parts.map((part) => (/^[\x20-\x7e]*$/.test(part.text) ? "gsm7" : "ucs2"))
    );
    expect(parts[0].encoding).toBe("ucs2");
    expect(parts[0].text).toMatch(/^\(1\/3\) Klaxon CRITICAL from press-7: Öltemperatur/);
    expect(parts[2].text).toMatch(/^\(3\/3\) .*Reply 1 \d{4} or ACK \d{4} to acknowledge\.$/);
    for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(70);
    expect(notification.attempts).toMatchObject([{outcome: expect.stringMatching(/^(sent|delivered)$/)}]);
    // One reference and one report per part; delivered once all three are.
    expect((await confirmedAttempts(rig, id))[0]).toMatchObject({
      outcome: "delivered",
      detail: expect.stringMatching(
        /^all 3 parts: the network reports the SMS received by the phone \(TP-Status 0\); message reference 37, 38, 39; reply code \d{4}$/
      )
    });
  });

  it("turns the attempt failed when the network reports one part undeliverable", async () => {
    rig = await startModemGateway(
      "sim7600",
      {statusReport: {outcome: "failed", afterMs: 20, interleave: false}},
      {sms_max_parts: 2}
    );
    const id = await rig.send(
      await rig.recipient(["sms"], {phone: PHONE}),
      "Oil temperature high on press 7, pump 2 switched off, cooling water flow below minimum, please check now"
    );
    expect((await confirmedAttempts(rig, id))[0]).toMatchObject({
      outcome: "failed",
      error: expect.stringMatching(
        /^part 1 of 2: the network gave up delivering the SMS: incompatible destination \(TP-Status 65\); message reference 37, 38;/
      )
    });
  });

  it("sends without a report where the modem cannot pass them on, and the attempt stays sent", async () => {
    rig = await startModemGateway("quectel", {failCommands: ["AT+CNMI=2,1,0,1"]});
    const {id} = await alertBySms(rig);
    expect(rig.simulator.sms.submitted.map((part) => part.statusReportRequested)).toEqual([false]);
    expect((await rig.notification(id)).attempts).toMatchObject([{outcome: "sent"}]);
  });

  it("is unavailable while the modem has no network, and the alert is skipped with that reason", async () => {
    rig = await startModemGateway("quectel", {registration: 3});
    const ready = await rig.gw.call("GET", "/readyz");
    expect(ready.body.channels.find((channel: any) => channel.channel === "sms")).toMatchObject({
      available: false,
      reason: "the mobile network denied the modem's registration",
      details: {registration: "denied", last_sms: null}
    });
    const notification = await rig.notification(await rig.send(await rig.recipient(["sms"])));
    expect(notification.attempts).toMatchObject([{channel: "sms", outcome: "skipped"}]);
    expect(rig.simulator.count("AT+CMGS")).toBe(0);
  });
});
