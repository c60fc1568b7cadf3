import fc from "fast-check";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {emailRig, eventually, type EmailRig} from "../../channels/email-rig.js";
import {freePort} from "../../support/mosquitto.js";
import {sendWithSmtplib} from "../../support/smtplib.js";
import {openRawSmtp, type SmtpReply} from "../../support/smtp-client.js";
import {abusiveSession, hostileMail, type HostileMail} from "./hostile-mail.js";

// Issue 29 "How it is tested" for SMTP: hostile MIME and protocol abuse, generated from a fixed
// seed, against the real listener of a running gateway; then the gateway must be alive, a probe
// alert must page within its deadline, and every mail answered 250 must be in the journal.
const SEED = Number(process.env.KLAXON_FUZZ_SEED ?? 20261128);
const HOSTILE_MAILS = 160;
const ABUSIVE_SESSIONS = 100;
// A well-formed mail every few hostile ones: each answered 250 must have fired its alert.
const CANARY_EVERY = 4;
const CONCURRENCY = 4;
// Each session comes from one of these (loopback 127/8 plays several hosts on Linux).
const HOSTS = ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"];
const PROBE_DEADLINE_MS = 10_000;

let rig: EmailRig;
let port: number;
const integrations: Record<"fuzz" | "abuse" | "probe", {id: string; address: string}> = {} as never;

beforeAll(async () => {
  port = await freePort();
  rig = await emailRig({inboundEmail: {port, address: "127.0.0.1", domain: "alerts.plant.lan"}});
  for (const name of ["fuzz", "abuse", "probe"] as const) {
    const target = await rig.recipient({name, email: `${name}@factory.lan`});
    const rules = [
      {field: "subject", match: "regex", pattern: `^(${name}|canary)-(\\d+) fire`, action: "fire", alert_key: "{1}-{2}"}
    ];
    const created = await rig.gw.call("POST", "/api/v1/integrations", {body: {name, kind: "email", target, rules}});
    expect(created.status).toBe(201);
    integrations[name] = {id: created.body.id, address: created.body.address};
  }
});
afterAll(async () => {
  await rig?.gw.stop();
  await rig?.peer.stop();
});

/** A mail's bytes as DATA carries them: lines starting with a dot get another (RFC 5321 4.5.2), then the end. */
const dataOf = (raw: string) => raw.replace(/(^|\n)\./g, "$1..") + "\r\n.\r\n";

/** One mail over a fresh session; the answer to its DATA, or the greeting when the session was refused. */
async function mailOnce(from: string, raw: string): Promise<SmtpReply | null> {
  const {session, greeting} = await openRawSmtp(port, from);
  try {
    if (greeting?.code !== 220) return greeting;
    for (const [command, expected] of [
      ["EHLO fuzz.plant.lan", 250],
      ["MAIL FROM:<plc-7@plant.lan>", 250],
      [`RCPT TO:<${integrations.fuzz.address}>`, 250],
      ["DATA", 354]
    ] as const)
      expect((await session.command(command))?.code).toBe(expected);
    session.write(Buffer.from(dataOf(raw), "latin1"));
    // A mail that ends the parser's worker waits for its hang watchdog (5 s) at most, then the restart.
    return await session.reply(60_000);
  } finally {
    session.write("QUIT\r\n");
    session.destroy();
  }
}

/** Writes an abusive session's bytes in one go and reads the replies until the server closes or goes quiet. */
async function abuseOnce(from: string, bytes: string): Promise<void> {
  const {session, greeting} = await openRawSmtp(port, from);
  if (greeting?.code === 220) {
    session.write(Buffer.from(bytes, "latin1"));
    while ((await session.reply(1500)) !== null);
  }
  session.destroy();
}

/** Runs the tasks `CONCURRENCY` at a time. */
async function pool(tasks: Array<() => Promise<void>>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({length: CONCURRENCY}, async () => {
      while (next < tasks.length) await tasks[next++]();
    })
  );
}

describe("the SMTP intake under hostile mail and protocol abuse", () => {
  it("stays up, pages a probe in time and loses no mail it accepted", async () => {
    const mails = fc.sample(hostileMail, {seed: SEED, numRuns: HOSTILE_MAILS});
    const abuses = fc.sample(abusiveSession(integrations.abuse.address), {seed: SEED + 1, numRuns: ABUSIVE_SESSIONS});
    const answers = new Map<number, number>();
    const acceptedCanaries: number[] = [];
    const unanswered: string[] = [];
    let accepted = 0;
    const tasks: Array<() => Promise<void>> = [];
    const started = performance.now();

    const mailTask = (index: number, mail: HostileMail) => async () => {
      const reply = await mailOnce(HOSTS[index % HOSTS.length], mail.raw);
      if (!reply) unanswered.push(mail.kind);
      const code = reply?.code ?? 0;
      answers.set(code, (answers.get(code) ?? 0) + 1);
      if (code === 250) accepted++;
      if (code === 250 && mail.kind === "canary") acceptedCanaries.push(index);
    };
    mails.forEach((mail, index) => {
      tasks.push(mailTask(index, mail));
      if (index % CANARY_EVERY === 0)
        tasks.push(
          mailTask(index, {kind: "canary", raw: `Subject: canary-${index} fire\r\nFrom: plc-7@plant.lan\r\n\r\nok\r\n`})
        );
    });
    abuses.forEach((abuse, index) =>
      tasks.splice(index * 2, 0, () => abuseOnce(HOSTS[(index + 3) % HOSTS.length], abuse.bytes))
    );
    await pool(tasks);
    const fuzzSeconds = (performance.now() - started) / 1000;

    // Every mail was answered, with an answer a sender can act on.
    expect(unanswered).toEqual([]);
    expect([...answers.keys()].every((code) => [250, 421, 451, 552, 554].includes(code))).toBe(true);
    expect(acceptedCanaries.length).toBeGreaterThan(0);

    // Alive, and a probe mailed now pages its recipient within the deadline.
    expect((await rig.gw.call("GET", "/healthz")).status).toBe(200);
    const probeSent = performance.now();
    expect(
      await sendWithSmtplib({
        port,
        source: "127.0.0.9",
        mails: [{shape: "plain", from: "probe@plant.lan", to: [integrations.probe.address], subject: "probe-1 fire"}]
      })
    ).toEqual([{ok: true}]);
    await eventually(
      "the probe's page",
      () => rig.peer.messages.find((message) => message.envelope.to.includes("probe@factory.lan")),
      Boolean,
      PROBE_DEADLINE_MS
    );
    const probeMs = performance.now() - probeSent;

    // Nothing accepted was lost: every 250 is in the integration's counts, every canary an alert.
    await rig.gw.gateway.services.runner.idle();
    const {stats} = (await rig.gw.call("GET", `/api/v1/integrations/${integrations.fuzz.id}`)).body;
    expect(stats.accepted + stats.unmapped).toBe(accepted);
    const keys = (
      (await rig.gw.call("GET", "/api/v1/notifications?limit=200")).body.items as Array<{dedup_key: string}>
    ).map((item) => item.dedup_key);
    for (const index of acceptedCanaries) expect(keys).toContain(`${integrations.fuzz.id}:canary-${index}`);

    // Nothing went wrong that a person must look into, but a parser worker that a mail ended.
    const crashes = rig.gw.logLines.filter((line) => line.includes("a supervised parser worker ended")).length;
    const parser = (
      (await rig.gw.call("GET", "/readyz")).body.parser_workers as Array<{
        name: string;
        crashes: Record<string, number>;
      }>
    ).find((worker) => worker.name === "mime-parser");
    expect(parser).toMatchObject({running: true});
    expect(Object.values(parser?.crashes ?? {}).reduce((sum, count) => sum + count, 0)).toBe(crashes);
    const errors = rig.gw.logLines.filter((line) => line.includes('"level":"error"'));
    expect(errors.length).toBe(crashes);
    // The figures docs/reliability.md records.
    console.log(
      JSON.stringify({
        seed: SEED,
        hostile_mails: mails.length,
        canaries: tasks.length - mails.length - abuses.length,
        abusive_sessions: abuses.length,
        answers: Object.fromEntries(answers),
        parser_worker_crashes: crashes,
        fuzz_seconds: Math.round(fuzzSeconds),
        probe_page_ms: Math.round(probeMs),
        heap_used_mb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
        rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20)
      })
    );
    expect(probeMs).toBeLessThan(PROBE_DEADLINE_MS);
    // The parser's memory is its worker's (bounded there); the gateway's own heap stays small.
    expect(process.memoryUsage().heapUsed).toBeLessThan(256 * 2 ** 20);
  }, 180_000);
});
