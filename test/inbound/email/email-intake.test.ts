import {execFileSync} from "node:child_process";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {emailRig, stopEmailRigs, type EmailRig} from "../../channels/email-rig.js";
import {ManualClock} from "../../../src/lib/clock.js";
import {freePort} from "../../support/mosquitto.js";
import {sendWithSmtplib, type PythonMail} from "../../support/smtplib.js";

// Email integrations end to end: Python's smtplib mails the gateway's own SMTP listener as a NAS
// or a monitoring tool does, and the alerts it raises page a recipient through a real SMTP peer.
stopEmailRigs();

const DOMAIN = "alerts.plant.lan";
const NAS_RULES = [
  {
    field: "subject",
    match: "regex",
    pattern: "^\\[(?<box>[\\w-]+)\\] Volume (\\d+) .*degraded",
    action: "fire",
    alert_key: "{box}-volume-{2}",
    priority: "critical"
  },
  {
    field: "subject",
    match: "regex",
    pattern: "^\\[([\\w-]+)\\] Volume (\\d+) .*repaired",
    action: "resolve",
    alert_key: "{1}-volume-{2}"
  },
  {field: "body", match: "contains", pattern: "temperature", action: "fire", alert_key: "temperature"}
];

async function emailIntakeRig(inbound: Record<string, unknown> = {}) {
  const port = await freePort();
  const rig = await emailRig({inboundEmail: {port, address: "127.0.0.1", domain: DOMAIN, ...inbound}});
  const target = await rig.recipient({name: "Storage admin", email: "storage@factory.lan"});
  const created = await rig.gw.call("POST", "/api/v1/integrations", {
    body: {name: "nas-01", kind: "email", target, rules: NAS_RULES, unmapped: "keep"}
  });
  expect(created.status).toBe(201);
  const {id, address} = created.body as {id: string; address: string};
  const mail = (fields: Partial<PythonMail>): PythonMail => ({
    shape: "plain",
    from: "nas-01@plant.lan",
    to: [address],
    ...fields
  });
  const send = (mails: PythonMail[], extra: {login?: [string, string]; starttls?: boolean; caFile?: string} = {}) =>
    sendWithSmtplib({port, mails, ...extra});
  return {rig, port, id, address, mail, send, integration: () => rig.gw.call("GET", `/api/v1/integrations/${id}`)};
}

async function openAlerts(rig: EmailRig) {
  await rig.gw.gateway.services.runner.idle();
  return (await rig.gw.call("GET", "/api/v1/notifications?limit=50")).body.items as Array<Record<string, any>>;
}

describe("email integrations", () => {
  it("fires, merges and resolves from a NAS's plain mails, and pages the recipient by email", async () => {
    const {rig, id, mail, send, integration} = await emailIntakeRig();
    const degraded = mail({
      subject: "[nas-01] Volume 2 on nas-01 is degraded",
      text: "Drive 3 has failed.\nReplace it."
    });
    expect(await send([degraded])).toEqual([{ok: true}]);
    const page = await rig.peer.next();
    expect(page.envelope.to).toEqual(["storage@factory.lan"]);
    expect(page.subject).toContain("[nas-01] Volume 2 on nas-01 is degraded");
    const [alert] = await openAlerts(rig);
    expect(alert).toMatchObject({priority: "critical", source: "nas-01", status: "notifying"});
    expect(alert.message).toBe("[nas-01] Volume 2 on nas-01 is degraded: Drive 3 has failed.\nReplace it.");

    expect(await send([degraded, mail({subject: "[nas-01] Volume 2 on nas-01 has been repaired"})])).toEqual([
      {ok: true},
      {ok: true}
    ]);
    const after = await rig.notification(alert.id);
    expect(after).toMatchObject({status: "resolved", occurrences: 2});
    expect(rig.peer.messages).toHaveLength(1);
    const audit = await rig.gw.call("GET", `/api/v1/audit?subject_id=${alert.id}`);
    expect(audit.body.items.map((item: {actor: unknown}) => item.actor)).toContainEqual({
      type: "integration",
      id,
      name: "nas-01"
    });
    expect((await integration()).body.stats).toMatchObject({received: 3, accepted: 3, refused: 0, unmapped: 0});
  });

  it("reads HTML-only, multipart and 8-bit mails, each firing, merging, paging and resolving", async () => {
    const {rig, id, mail, send} = await emailIntakeRig();
    // Each shape as a NAS would send it; `state` goes into the subject: degraded fires, repaired resolves.
    const shapes = (state: string): PythonMail[] => [
      mail({
        shape: "html",
        subject: `[nas-05] Volume 6 on nas-05 ${state}`,
        html: "<html><body><h1>Alarm</h1><p>The <b>temperature</b> is -2&nbsp;°C</p></body></html>"
      }),
      mail({
        shape: "multipart",
        subject: `[nas-02] Volume 1 on nas-02 ${state}`,
        text: "Plain part: disk 1 failed",
        html: "<p>HTML part</p>",
        attachment: "SECRET-ATTACHMENT-BYTES"
      }),
      mail({subject: `[nas-03] Volume 4 – Température élevée, Kühlraum ${state}`, text: "encoded subject"}),
      mail({
        shape: "raw8bit",
        subject: `[nas-04] Volume 5 über 90 °C ${state}`,
        text: "raw 8-bit subject and body: Größe"
      })
    ];
    // One shape at a time: a second alert for a recipient already being paged waits for that
    // page's next step (storm grouping), so each alert is resolved before the next fires.
    const expected = [
      "[nas-05] Volume 6 on nas-05 degraded: ALARM\n\nThe temperature is -2\u00a0°C",
      "[nas-02] Volume 1 on nas-02 degraded: Plain part: disk 1 failed",
      "[nas-03] Volume 4 – Température élevée, Kühlraum degraded: encoded subject",
      "[nas-04] Volume 5 über 90 °C degraded: raw 8-bit subject and body: Größe"
    ];
    for (const [index, message] of expected.entries()) {
      expect(await send([shapes("degraded")[index]])).toEqual([{ok: true}]);
      const page = await rig.peer.next();
      expect(page.envelope.to).toEqual(["storage@factory.lan"]);
      // html-to-text writes a heading in capitals, as a plain-text mail client shows it.
      const alert = (await openAlerts(rig)).find((item) => item.status === "notifying");
      expect(alert?.message).toBe(message);
      expect(page.subject).toContain(message.slice(0, message.indexOf(" degraded")));
      expect(await send([shapes("degraded")[index], shapes("repaired")[index]])).toEqual([{ok: true}, {ok: true}]);
      expect(await rig.notification(alert?.id)).toMatchObject({status: "resolved", occurrences: 2});
    }
    expect(rig.peer.messages).toHaveLength(4);
    const everything = JSON.stringify([await openAlerts(rig), rig.peer.messages.map((page) => page.raw)]);
    expect(everything).not.toMatch(/SECRET-ATTACHMENT|<p>|<b>/);
    const {stats} = (await rig.gw.call("GET", `/api/v1/integrations/${id}`)).body;
    expect(stats).toMatchObject({received: 12, accepted: 12});
  });

  it("takes a generic event as the body without any rule, and keeps a mail that maps to nothing in the log", async () => {
    const {rig, id, mail, send, integration} = await emailIntakeRig();
    const event = {alert_id: "backup-job", action: "fire", title: "Nightly backup failed", severity: "high"};
    expect(
      await send([
        mail({subject: "anything", text: JSON.stringify(event)}),
        mail({subject: "Weekly storage report", text: "All volumes healthy."})
      ])
    ).toEqual([{ok: true}, {ok: true}]);
    const alerts = await openAlerts(rig);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      message: "Nightly backup failed",
      priority: "high",
      dedup_key: `${id}:backup-job`
    });
    const log = await rig.gw.call("GET", `/api/v1/integrations/${id}/log`);
    expect(log.body.items).toEqual([
      expect.objectContaining({
        outcome: "unmapped",
        origin: "nas-01@plant.lan",
        summary: "Weekly storage report",
        body: "All volumes healthy.",
        reason: null
      })
    ]);
    expect((await integration()).body.stats).toMatchObject({received: 2, accepted: 1, unmapped: 1});
  });

  it("refuses every other recipient with 550, so it never relays, and counts nothing for them", async () => {
    const {rig, address, mail, send, integration} = await emailIntakeRig();
    const [token] = address.split("@");
    const results = await send([
      mail({to: ["ceo@example.com"], subject: "relay me"}),
      mail({to: [`${token}@elsewhere.lan`], subject: "wrong domain"}),
      mail({to: [`0123456789abcdef01234567@${DOMAIN}`], subject: "no such integration"}),
      mail({to: [address.toUpperCase()], subject: "[nas-09] Volume 1 x degraded", text: "case does not matter"})
    ]);
    expect(results.slice(0, 3)).toEqual([
      {ok: false, code: 550, error: expect.stringContaining("relays no mail")},
      {ok: false, code: 550, error: expect.stringContaining("relays no mail")},
      {ok: false, code: 550, error: expect.stringContaining("relays no mail")}
    ]);
    expect(results[3]).toEqual({ok: true});
    expect(await openAlerts(rig)).toHaveLength(1);
    expect((await integration()).body.stats).toMatchObject({received: 1, accepted: 1});
  });

  it("refuses an oversized mail with 552, counts it and keeps its start; a malformed one never crashes the listener", async () => {
    const {rig, id, mail, send, integration} = await emailIntakeRig({max_bytes: 4096});
    const results = await send([
      mail({subject: "[nas-01] Volume 7 on nas-01 is degraded", text: "x".repeat(10_000)}),
      mail({
        shape: "raw",
        raw: "\u0000\u00ff\u00fe garbage without headers\r\n--b\r\nContent-Type: multipart/mixed; boundary=\r\n\r\n"
      }),
      mail({
        shape: "raw",
        raw:
          'Subject: =?utf-8?B?broken base64?= temperature\r\nContent-Type: multipart/alternative; boundary="never-closed"\r\n' +
          "Content-Transfer-Encoding: base64\r\n\r\n--never-closed\r\nContent-Type: text/plain; charset=no-such-charset\r\n" +
          "Content-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ=\r\ntemperature sensor =E2=82\r\n"
      }),
      mail({subject: "[nas-01] Volume 8 on nas-01 is degraded", text: "still working"})
    ]);
    expect(results[0]).toEqual({ok: false, code: 552, error: expect.stringContaining("the limit is 4096")});
    expect(results.slice(1)).toEqual([{ok: true}, {ok: true}, {ok: true}]);
    const alerts = await openAlerts(rig);
    expect(alerts.map((alert) => alert.dedup_key).sort()).toEqual([`${id}:nas-01-volume-8`, `${id}:temperature`]);
    const {stats} = (await integration()).body;
    expect(stats).toMatchObject({received: 4, accepted: 2, refused: 1, unmapped: 1});
    expect(stats.last_error).toMatch(/^too large: \d+ bytes, the limit is 4096$/);
    const log = (await rig.gw.call("GET", `/api/v1/integrations/${id}/log`)).body.items;
    expect(log.map((item: {outcome: string}) => item.outcome)).toEqual(["unmapped", "refused"]);
    expect(log[1].body).toContain("Volume 7 on nas-01");
    expect(log[1].body.length).toBeLessThanOrEqual(4096);
    expect((await rig.gw.call("GET", "/healthz")).status).toBe(200);
  });
});

describe("email integrations behind STARTTLS and a login", () => {
  const dir = mkdtempSync(join(tmpdir(), "klaxon-inbound-tls-"));
  afterAll(() => rmSync(dir, {recursive: true, force: true}));
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      `/CN=${DOMAIN}`
    ],
    {stdio: "ignore"}
  );

  it("takes mail only after STARTTLS and the configured login", async () => {
    const {rig, mail, send, integration} = await emailIntakeRig({
      tls_cert_file: cert,
      tls_key_file: key,
      user: "nas",
      password: "Inb0und-Secret"
    });
    const degraded = mail({subject: "[nas-01] Volume 3 on nas-01 is degraded", text: "over TLS"});
    expect(await send([degraded], {starttls: true, caFile: cert, login: ["nas", "wrong"]})).toEqual([
      {ok: false, code: 535, error: expect.any(String)}
    ]);
    expect(await send([degraded], {starttls: true, caFile: cert})).toEqual([
      {ok: false, code: 530, error: expect.stringMatching(/authentication required/i)}
    ]);
    expect(await send([degraded], {starttls: true, caFile: cert, login: ["nas", "Inb0und-Secret"]})).toEqual([
      {ok: true}
    ]);
    expect((await openAlerts(rig)).map((alert) => alert.message)).toEqual([
      "[nas-01] Volume 3 on nas-01 is degraded: over TLS"
    ]);
    expect((await integration()).body.stats).toMatchObject({received: 1, accepted: 1});
  });
});

describe("email integrations under a flood", () => {
  it("answers 451 to a client over the HTTP API's rate, whatever From it writes, so its queue retries", async () => {
    // A clock that stands still: the sender's bucket (rate_limit.burst) never refills during the test.
    const port = await freePort();
    const rig = await emailRig({
      inboundEmail: {port, address: "127.0.0.1", domain: DOMAIN},
      gateway: {clock: new ManualClock(Date.now())}
    });
    const target = await rig.recipient({name: "Storage admin", email: "storage@factory.lan"});
    const created = await rig.gw.call("POST", "/api/v1/integrations", {
      body: {name: "chatty", kind: "email", target, unmapped: "keep"}
    });
    const {burst} = rig.gw.gateway.settings.rate_limit;
    const flood = Array.from({length: burst + 1}, (_, n) => ({
      shape: "plain" as const,
      // A new From each time: the allowance is the client's, not the From's.
      from: `sensor-${n}@plant.lan`,
      to: [created.body.address as string],
      subject: `report ${n}`,
      text: "nothing to see"
    }));
    const results = await sendWithSmtplib({port, mails: flood});
    expect(results.slice(0, burst).every((result) => result.ok)).toBe(true);
    expect(results[burst]).toEqual({
      ok: false,
      code: 451,
      error: expect.stringContaining("rate limited: 127.0.0.1")
    });
    const {stats} = (await rig.gw.call("GET", `/api/v1/integrations/${created.body.id}`)).body;
    expect(stats).toMatchObject({received: burst + 1, unmapped: burst, refused: 1});
  });
});
