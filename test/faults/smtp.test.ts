import {afterEach, describe, expect, it} from "vitest";
import {eventually} from "../support/eventually.js";
import {mailedAlerts, outcomes, SMTP_PASSWORD, startFaultRig, type FaultRig} from "../support/fault-rig.js";

// The mail server fails while people are being paged: the escalation must go on to Telegram by
// the step's ack timeout, /readyz must say email is failing and why, no accepted alert or attempt
// may go missing, and once the server is back mail flows again with every event delivered once.

let rig: FaultRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

interface SmtpFault {
  name: string;
  breakServer(r: FaultRig): Promise<void> | void;
  repairServer(r: FaultRig): Promise<void> | void;
  reason: RegExp;
}

const FAULTS: SmtpFault[] = [
  {
    name: "down",
    breakServer: (r) => r.smtp.down(),
    repairServer: (r) => r.smtp.up(),
    reason: /^SMTP connection failed \(ECONNREFUSED\)/
  },
  {
    name: "slow to greet (past timeout_seconds)",
    breakServer: (r) => void (r.smtp.behaviour = "slow_greeting"),
    repairServer: (r) => void (r.smtp.behaviour = "accept"),
    reason: /^SMTP server did not answer in time/
  },
  {
    name: "refusing the login",
    breakServer: (r) => r.smtp.changePassword("rotated-on-the-server"),
    repairServer: (r) => r.smtp.changePassword(SMTP_PASSWORD),
    reason: /^SMTP login refused: 535 /
  }
];

describe.each(FAULTS)("SMTP server $name", (fault) => {
  it("moves on to Telegram by the ack timeout, shows email failing on /readyz, loses nothing, and mails again once repaired", async () => {
    rig = await startFaultRig({telegram: true});
    const r = rig;
    const maria = await r.recipient("Maria", ["email", "telegram_voice"]);
    await fault.breakServer(r);

    const first = await r.send(maria, "Oil temperature high");
    let n = await r.notification(first);
    expect(outcomes(n)).toEqual([["email", "failed"]]);
    expect(n.attempts[0].error).toMatch(fault.reason);
    const email = await r.channel("email");
    expect(email).toMatchObject({available: false, details: {state: "failing"}});
    expect(email.reason).toMatch(
      new RegExp(`^SMTP server 127\\.0\\.0\\.1:${r.smtp.port} is failing: ${fault.reason.source.slice(1)}`)
    );
    // A failed email is not the end of the step: Telegram follows when the ack timeout is up.
    n = await r.nextStep(first);
    expect(outcomes(n)).toEqual([
      ["email", "failed"],
      ["telegram_voice", "delivered"]
    ]);
    expect(r.telegram!.messages.filter((message) => message.kind === "text").map((message) => message.chat_id)).toEqual(
      [r.contacts("Maria").telegram_id]
    );

    // Known to be failing: the next person's alert does not wait on email at all.
    const second = await r.send(await r.recipient("Jonas", ["email", "telegram_voice"]), "Press 7 stopped");
    n = await r.notification(second);
    expect(outcomes(n)).toEqual([
      ["email", "skipped"],
      ["telegram_voice", "delivered"]
    ]);
    expect(n.attempts[0].error).toBe(email.reason);

    await fault.repairServer(r);
    await eventually(
      "email available again",
      () => r.channel("email"),
      (state) => state.available
    );
    const third = await r.send(await r.recipient("Ana", ["email", "telegram_voice"]), "Press 7 running again");
    expect(outcomes(await r.notification(third))).toEqual([["email", "delivered"]]);

    // The failed and skipped emails are not sent late: the escalation moved on instead.
    expect(mailedAlerts(r)).toEqual([third]);
    await r.expectNothingLost([first, second, third]);
    await r.expectEveryEventDeliveredOnce();
  });
});

describe("SMTP server slow to answer the end of DATA", () => {
  it("records the email failed and moves on; the mail the server kept anyway arrives once, and nothing is sent twice", async () => {
    rig = await startFaultRig({telegram: true});
    const r = rig;
    r.smtp.slowMs = 3500;
    r.smtp.behaviour = "slow_data";
    const maria = await r.recipient("Maria", ["email", "telegram_voice"]);

    const first = await r.send(maria, "Oil temperature high");
    let n = await r.notification(first);
    expect(outcomes(n)).toEqual([["email", "failed"]]);
    expect(n.attempts[0].error).toMatch(/^SMTP server did not answer in time/);
    // The server greets and logs in fine, so its checks pass again: the failure stays on /readyz as the last error.
    expect((await r.channel("email")).details).toMatchObject({
      last_error: n.attempts[0].error,
      last_failure_at: expect.any(String)
    });

    n = await r.nextStep(first);
    expect(outcomes(n)).toEqual([
      ["email", "failed"],
      ["telegram_voice", "delivered"]
    ]);
    // SMTP cannot take a message back: the server queued it before its late reply, so it arrives, once.
    await eventually(
      "the late mail",
      () => mailedAlerts(r),
      (alerts) => alerts.length === 1
    );
    expect(mailedAlerts(r)).toEqual([first]);

    r.smtp.behaviour = "accept";
    await eventually(
      "email available",
      () => r.channel("email"),
      (state) => state.available
    );
    const second = await r.send(await r.recipient("Jonas", ["email", "telegram_voice"]), "Press 7 stopped");
    expect(outcomes(await r.notification(second))).toEqual([["email", "delivered"]]);
    expect(mailedAlerts(r)).toEqual([first, second]);
    await r.expectNothingLost([first, second]);
    await r.expectEveryEventDeliveredOnce();
  });
});
