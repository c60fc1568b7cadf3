import {createSocket, type Socket} from "node:dgram";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {TestGateway} from "../support/gateway.js";
import type {SmtpPeer} from "../support/smtp-peer.js";
import {startTrapGateway, type TrapGateway} from "../support/trap-gateway.js";
import {eventually} from "../support/eventually.js";
import {SnmpFuzzer, seededRandom} from "../support/snmp-fuzz.js";
import {bitStringBinding, notificationPdu, PDU, v2cMessage, v3NoAuthMessage} from "../support/snmp-ber.js";
import {captureTrap, upsRoomUser} from "../support/snmptrap.js";

// Issue 29, "How it is tested": structure-aware SNMP fuzzing of the real listener of a running
// gateway (its socket, its parser worker, the replay guard, the intake), then a probe alert.
// KLAXON_FUZZ_SEED replays a run; KLAXON_FUZZ_PACKETS changes its size.
const SEED = Number(process.env.KLAXON_FUZZ_SEED ?? 29_2026);
const PACKETS = Number(process.env.KLAXON_FUZZ_PACKETS ?? 100_000);
// libuv reads at most 32 datagrams per turn of the loop, and the sender shares the gateway's loop
// here: batches below that, with a turn between them, leave the kernel nothing to drop.
const BATCH = 25;
const COMMUNITY = "fuzz-plant";
// An OID no built-in mapping knows; the integration keeps unmapped traps in its log (unmapped:
// "keep"), so the fuzz's thousands of random traps do not page Maria in a storm of its own.
const UNMAPPED = "1.3.6.1.4.1.8072.9999.29";

let rig: TrapGateway;
let smtp: SmtpPeer;
let gw: TestGateway;
let trapPort: number;
let integrationId: string;
let sender: Socket;

beforeAll(async () => {
  rig = await startTrapGateway();
  ({gw, smtp, trapPort} = rig);
  const user = upsRoomUser;
  const created = await gw.call("POST", "/api/v1/integrations", {
    body: {
      name: "fuzzed hall",
      kind: "snmp_trap",
      target: rig.maria,
      default_priority: "low",
      unmapped: "keep",
      community: COMMUNITY,
      v3_users: [
        {name: user.name, auth_protocol: "sha256", auth_key: user.authKey, priv_protocol: "aes", priv_key: user.privKey}
      ]
    }
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  integrationId = created.body.id;
  sender = createSocket("udp4");
  await new Promise<void>((done) => sender.bind(0, "127.0.0.1", done));
});
afterAll(async () => {
  await new Promise<void>((done) => sender?.close(() => done()));
  await rig?.stop();
});

interface ParserWorkerView {
  name: string;
  running: boolean;
  inFlight: number;
  crashes: Record<string, number>;
  dropped: number;
  counters: Record<string, number>;
}

/** The parser's report as /readyz builds it, read in process (cheap enough to pace every batch by). */
function parserNow() {
  return gw.gateway.parserWorkers.reports().find((worker) => worker.name === "snmp-parser")!;
}

async function snmpParser(): Promise<ParserWorkerView> {
  const ready = await gw.call("GET", "/readyz");
  return (ready.body.parser_workers as ParserWorkerView[]).find((worker) => worker.name === "snmp-parser")!;
}

/**
 * Pages a fresh recipient (so no open alert of someone else's groups it into a storm) and waits
 * for the mail at the SMTP peer; the milliseconds it took.
 */
async function probe(text: string): Promise<number> {
  const startMs = performance.now();
  const recipient = await gw.call("POST", "/api/v1/recipients", {
    body: {
      name: text,
      email: `probe-${smtp.messages.length}-${Date.now()}@factory.lan`,
      escalation: {ack_timeout_seconds: 600, repeat: 0}
    }
  });
  const answer = await gw.call("POST", "/api/v1/notifications/send", {
    body: {recipient_uuid: recipient.body.uuid, message: text, priority: "critical", source: "probe"}
  });
  expect(answer.status).toBe(202);
  // paging.first_attempt_deadline_seconds: 60.
  await eventually("the probe mailed", () => smtp.messages.some((mail) => mail.text?.includes(text)), Boolean, 60_000);
  return performance.now() - startMs;
}

async function send(datagram: Buffer): Promise<void> {
  await new Promise<void>((done) => sender.send(datagram, trapPort, "127.0.0.1", () => done()));
}

describe("one unauthenticated UDP packet (issue 29, seen 1)", () => {
  it("does not stop the gateway: an SNMPv3 inform of no user and a v2c inform, each with a BIT STRING", async () => {
    const bits = [bitStringBinding("1.3.6.1.2.1.2.2.1.7.1")];
    const noUser = v3NoAuthMessage({
      user: "",
      engineId: Buffer.from("80001f8880c0ffee0000000001", "hex"),
      pdu: notificationPdu(PDU.inform, UNMAPPED, bits)
    });
    const replies: Buffer[] = [];
    sender.on("message", (reply) => replies.push(reply));
    // Before the fix, the first of these made net-snmp throw inside the dgram handler and the process exit.
    for (let round = 0; round < 10; round++) {
      await send(noUser);
      await send(v2cMessage(COMMUNITY, notificationPdu(PDU.inform, UNMAPPED, bits, 0x2900 + round)));
    }
    await eventually(
      "the v2c informs answered",
      () => replies.length,
      (count) => count === 10
    );
    expect((await gw.call("GET", "/healthz")).status).toBe(200);
    await probe("Inform probe: press 2 stopped");
    sender.removeAllListeners("message");
  });
});

describe("SNMP fuzzing against the gateway's listener", () => {
  it(`takes ${PACKETS} structure-aware packets and still pages a probe in time, with nothing accepted lost`, async () => {
    const captured = [];
    for (const trapOid of [UNMAPPED, `${UNMAPPED}.1`, `${UNMAPPED}.2`])
      captured.push(await captureTrap(upsRoomUser, trapOid));
    const fuzzer = new SnmpFuzzer(seededRandom(SEED), {community: COMMUNITY, user: upsRoomUser.name, captured});
    const rssBefore = process.memoryUsage().rss;
    const startedMs = performance.now();
    const base = (await snmpParser()).counters.datagrams;
    for (let sent = 0; sent < PACKETS;) {
      const batch = Array.from({length: BATCH}, () => fuzzer.packet());
      await Promise.all(batch.map(send));
      sent += batch.length;
      await new Promise((resolve) => setImmediate(resolve));
      // The parser takes a few thousand packets a second; ahead of it, the listener would drop
      // datagrams unread (counted, as it should under a flood) instead of fuzzing the parser.
      while (parserNow().inFlight > 256) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const parser = await eventually(
      "every datagram read",
      snmpParser,
      (view) => view.counters.datagrams - base >= PACKETS && view.inFlight === 0,
      20_000
    );
    const fuzzSeconds = (performance.now() - startedMs) / 1000;

    // Alive, parser up, and every trap the listener handed on is an outcome of the integration.
    expect((await gw.call("GET", "/healthz")).status).toBe(200);
    expect(parser.running).toBe(true);
    const stats = await eventually(
      "every trap handed on counted by its integration",
      async () => (await gw.call("GET", `/api/v1/integrations/${integrationId}`)).body.stats,
      (counts: {accepted: number; unmapped: number; refused: number}) =>
        counts.accepted + counts.unmapped + counts.refused === parser.counters.traps
    );
    expect(parser.counters.traps).toBeGreaterThan(100);

    const probeMs = await probe("Fuzz probe: boiler 3 pressure");

    global.gc?.();
    const rssGrowthMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    expect(rssGrowthMb).toBeLessThan(200);
    console.log(
      `snmp fuzz: ${PACKETS} packets (seed ${SEED}) in ${fuzzSeconds.toFixed(1)} s, ${parser.counters.datagrams - base} read, ` +
        `${parser.counters.traps} traps handed on (${JSON.stringify(stats)}), ${parser.counters.replays_refused} replays refused, ` +
        `crashes ${JSON.stringify(parser.crashes)}, dropped ${parser.dropped}; probe mailed in ${probeMs.toFixed(0)} ms; rss +${rssGrowthMb.toFixed(0)} MB`
    );
  }, 120_000);
});
