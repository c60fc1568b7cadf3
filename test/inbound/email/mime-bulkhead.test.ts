import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {InboundMail} from "../../../src/domain/inbound-mail.js";
import {SmtpListener, type MailEnvelope} from "../../../src/inbound/email/smtp-listener.js";
import {systemClock} from "../../../src/lib/clock.js";
import {createLogger} from "../../../src/lib/logger.js";
import {sendWithSmtplib, type PythonMail} from "../../support/smtplib.js";

// Issue 29 "must do" 1 for SMTP: mailparser reads mail in a supervised worker thread. A worker
// with planted faults stands in for a mail that finds a bug in mailparser; the listener is real,
// on a real socket, and Python's smtplib is the device.
const DOMAIN = "alerts.plant.lan";
const ADDRESS = `nas@${DOMAIN}`;

const delivered: InboundMail[] = [];
const refused: Array<{envelope: MailEnvelope; reason: string}> = [];
const lines: string[] = [];
let listener: SmtpListener;
let port: number;

beforeAll(async () => {
  listener = new SmtpListener(
    {
      port: 0,
      address: "127.0.0.1",
      domain: DOMAIN,
      maxBytes: 65_536,
      tls: null,
      auth: null,
      maxSessionsPerAddress: 8,
      sessionMaxMs: 120_000,
      authFailuresPerMinute: 10,
      parserModule: new URL("../../support/hostile-mime.worker.ts", import.meta.url)
    },
    {
      accepts: (address) => address === ADDRESS,
      deliver: (mail) => {
        delivered.push(mail);
        return Promise.resolve({accepted: true});
      },
      refuse: (envelope, _size, reason) => refused.push({envelope, reason})
    },
    createLogger("info", (line) => lines.push(line)),
    systemClock
  );
  port = await listener.start();
});
afterAll(() => listener?.stop());

const mail = (subject: string, text = "body"): PythonMail => ({
  shape: "plain",
  from: "nas-01@plant.lan",
  to: [ADDRESS],
  subject,
  text
});

describe("the MIME parser behind a bulkhead", () => {
  it("loses only the worker to a mail that makes the parser throw, eat memory, hang or lie, and reads the next", async () => {
    const results = await sendWithSmtplib({
      port,
      mails: [
        mail("first"),
        mail("crash", "PARSER-THROWS"),
        mail("second"),
        mail("greedy", "PARSER-EATS"),
        mail("third"),
        mail("liar", "PARSER-LIES"),
        mail("fourth"),
        mail("stuck", "PARSER-HANGS"),
        mail("fifth")
      ]
    });
    const refusal = (kind: string) => ({ok: false, code: 554, error: expect.stringContaining(kind)});
    expect(results).toEqual([
      {ok: true},
      refusal("the MIME parser ended while reading it (throw: Cannot read properties of undefined"),
      {ok: true},
      refusal("the MIME parser ended while reading it (memory"),
      {ok: true},
      refusal("the MIME parser answered in a shape it may not"),
      {ok: true},
      refusal("the MIME parser ended while reading it (hang"),
      {ok: true}
    ]);
    expect(delivered.map((item) => item.subject)).toEqual(["first", "second", "third", "fourth", "fifth"]);
    expect(refused.map((item) => item.reason)).toEqual([
      expect.stringMatching(/\(throw/),
      expect.stringMatching(/\(memory/),
      "the MIME parser answered in a shape it may not",
      expect.stringMatching(/\(hang/)
    ]);
    expect(listener.parserStats()).toMatchObject({running: true, restarts: 3, crashes: {throw: 1, memory: 1, hang: 1}});
    expect(lines.filter((line) => line.includes("a supervised parser worker ended"))).toHaveLength(3);
  }, 60_000);
});
