import {describe, expect, it} from "vitest";
import {readFileSync, rmSync} from "node:fs";
import {join} from "node:path";
import {systemClock} from "../../src/lib/clock.js";
import {tempDir} from "../support/gateway.js";
import {eventually} from "../support/eventually.js";
import {launchGatewayProcess, startGatewayProcess, type GatewayProcess} from "../support/gateway-process.js";
import {startSmtpPeer} from "../support/smtp-peer.js";
import {startWebhookReceiver} from "../support/webhook-receiver.js";
import {crashSeed, seededRandom, type SeededRandom} from "./seeded-random.js";
import {emptyLedger} from "./ledger.js";
import {startLoad, type LoadTargets} from "./load-driver.js";
import {checkAfterKill, openJournal, SUBSCRIBED_EVENTS, type KillSnapshot} from "./journal-checks.js";
import {checkRecovery} from "./recovery-checks.js";

// The crash suite (issue 9): the real gateway process, loaded by concurrent clients, killed with
// SIGKILL at a random moment and restarted on the same data dir, over and over. CI runs 20
// cycles; `npm run soak` runs 200; KLAXON_CRASH_CYCLES sets any number, KLAXON_CRASH_SEED
// replays a run (the seed is printed first).

const CYCLES = Number(process.env.KLAXON_CRASH_CYCLES ?? 20);
const SEED = crashSeed(process.env.KLAXON_CRASH_SEED);
/** Share of restarts killed while the gateway is still starting (migrations, recovery, first passes). */
const KILL_DURING_START = 0.2;
/** Share of cycles whose SMTP server accepts connections and never greets: emails stay in flight. */
const SMTP_HANGS = 0.3;
/** Bounds of the load before the kill, in ms. */
const LOAD_MS: [number, number] = [50, 1000];
/** Bounds of a kill during start, in ms after the process logs "starting klaxon" (it serves about 0.3 s later). */
const START_KILL_MS: [number, number] = [0, 800];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(url: string, key: string, method: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(url + path, {
    method,
    headers: {"X-API-Key": key, "Content-Type": "application/json"},
    body: JSON.stringify(body)
  });
  const answer = await response.json();
  if (response.status !== 201) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/**
 * The people the load pages: email (a step that really connects to the SMTP peer, then waits
 * 15 s for an acknowledgement, twice), voice + email + SMS (the modem is not configured, so its
 * channels are left out of the plan and only email is paged), phone only (no channel left in the
 * plan: the alert waits, undeliverable), and a parallel and a sequential group of them. Plus the webhook
 * subscription that gives events their outbox rows.
 */
async function createTargets(url: string, key: string, receiverUrl: string): Promise<LoadTargets> {
  const recipient = (fields: object) =>
    call(url, key, "POST", "/api/v1/recipients", fields).then((created) => created.uuid as string);
  const erin = await recipient({
    name: "Erin",
    email: "erin@factory.lan",
    channel_order: ["email"],
    escalation: {ack_timeout_seconds: 15, repeat: 1}
  });
  const max = await recipient({
    name: "Max",
    email: "max@factory.lan",
    phone: "+4915112345678",
    channel_order: ["voice_call", "email", "sms"],
    escalation: {ack_timeout_seconds: 15, repeat: 0}
  });
  const paula = await recipient({
    name: "Paula",
    phone: "+4915187654321",
    channel_order: ["voice_call", "sms"],
    escalation: {ack_timeout_seconds: 15, repeat: 0}
  });
  const group = (name: string, members: string[], strategy: string) =>
    call(url, key, "POST", "/api/v1/groups", {name, members, strategy}).then((created) => created.uuid as string);
  const groups = [await group("Shift A", [erin, max], "parallel"), await group("Shift B", [paula, erin], "sequential")];
  await call(url, key, "POST", "/api/v1/webhooks", {url: receiverUrl, events: SUBSCRIBED_EVENTS});
  return {recipients: [erin, max, paula], groups};
}

/**
 * A restart killed at a random moment of its start: after its modules loaded, while it opens the
 * journal, records what the last kill interrupted, starts serving and runs its first passes.
 * Returns when the process is gone.
 */
async function killDuringStart(
  dataDir: string,
  env: Record<string, string>,
  random: SeededRandom
): Promise<{killedAtMs: number; afterMs: number; served: boolean}> {
  const starting = launchGatewayProcess(dataDir, env);
  const afterMs = random.between(...START_KILL_MS);
  try {
    await eventually(
      'the restart logging "starting klaxon"',
      () => starting.lines.some((line) => line.includes('"starting klaxon"')),
      (started) => started,
      20_000
    );
    await sleep(afterMs);
  } finally {
    starting.child.kill("SIGKILL");
  }
  const killedAtMs = Date.now();
  await starting.exited;
  return {killedAtMs, afterMs, served: starting.lines.some((line) => line.includes('"gateway serving"'))};
}

describe("the crash suite", () => {
  it(
    `loses nothing answered across ${CYCLES} SIGKILLs at random moments (seed ${SEED})`,
    async () => {
      console.log(`crash suite: seed ${SEED}, ${CYCLES} cycles (replay with KLAXON_CRASH_SEED=${SEED})`);
      const random = seededRandom(SEED);
      const smtp = await startSmtpPeer();
      const receiver = await startWebhookReceiver(systemClock);
      const dataDir = tempDir("klaxon-crash-");
      const env = {
        KLAXON_SMTP_HOST: "127.0.0.1",
        KLAXON_SMTP_PORT: String(smtp.port),
        KLAXON_SMTP_FROM: "klaxon@factory.lan",
        // The load is several clients on one key, faster than the default per-key limit.
        KLAXON_RATE_LIMIT_PER_SECOND: "100000",
        KLAXON_RATE_LIMIT_BURST: "100000"
      };
      const ledger = emptyLedger();
      let gateway: GatewayProcess | null = null;
      let passed = false;
      try {
        const first = await startGatewayProcess(dataDir, env);
        gateway = first;
        const adminKey = readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim();
        const targets = await createTargets(first.url, adminKey, receiver.url);
        let url = first.url;
        let killed: KillSnapshot | null = null;
        let killsDuringStart = 0;

        for (let cycle = 1; cycle <= CYCLES; cycle++) {
          let restart = "";
          if (killed) {
            if (random.chance(KILL_DURING_START)) {
              const start = await killDuringStart(dataDir, env, random);
              killsDuringStart++;
              const afterKill = checkAfterKill(dataDir, ledger, targets, start.killedAtMs);
              expect(afterKill.problems, `cycle ${cycle} (killed during start)`).toEqual([]);
              killed = afterKill.snapshot;
              console.log(
                `cycle ${cycle}/${CYCLES}: killed during start, ${start.afterMs} ms after "starting klaxon" (${start.served ? "serving" : "not serving yet"}); in flight: ${killed.pendingAttempts.length} attempts; ${killed.dueChains.length} chains due`
              );
              continue;
            }
            const restartAtMs = Date.now();
            const restarted = await startGatewayProcess(dataDir, env);
            gateway = restarted;
            url = restarted.url;
            const servingAtMs = Date.now();
            const recovery = await checkRecovery(
              url,
              adminKey,
              dataDir,
              ledger,
              killed,
              servingAtMs,
              random.fork(-cycle)
            );
            expect(recovery, `cycle ${cycle}: recovery from the previous kill`).toEqual([]);
            restart = `restart served in ${servingAtMs - restartAtMs} ms, recovered in ${Date.now() - servingAtMs} ms; `;
          }
          smtp.behaviour = random.chance(SMTP_HANGS) ? "hang" : "accept";
          const load = startLoad(url, adminKey, targets, ledger, random.fork(cycle), cycle);
          const loadMs = random.between(...LOAD_MS);
          await sleep(loadMs);
          gateway.child.kill("SIGKILL");
          const killedAtMs = Date.now();
          await gateway.exited;
          const counts = await load.stop();
          const afterKill = checkAfterKill(dataDir, ledger, targets, killedAtMs);
          expect(ledger.anomalies, `cycle ${cycle}: answers during the load`).toEqual([]);
          expect(afterKill.problems, `cycle ${cycle}`).toEqual([]);
          killed = afterKill.snapshot;
          console.log(
            `cycle ${cycle}/${CYCLES}: ${restart}killed after ${loadMs} ms of load (SMTP ${smtp.behaviour}); answered ${counts.sends} alerts, ${counts.replays} replays, ` +
              `${counts.closes} acks/resolves, ${counts.adminWrites} admin writes; ${counts.unanswered} cut off; in flight: ${killed.pendingAttempts.length} attempts, ` +
              `${killed.unfinishedDeliveries.length} webhook deliveries; ${killed.dueChains.length} chains due`
          );
          smtp.behaviour = "accept";
        }

        // The last restart: it recovers, the outbox drains (every event out at least once) and a SIGTERM ends it cleanly.
        const last = await startGatewayProcess(dataDir, env);
        gateway = last;
        expect(
          await checkRecovery(last.url, adminKey, dataDir, ledger, killed!, Date.now(), random.fork(-(CYCLES + 1))),
          "recovery from the last kill"
        ).toEqual([]);
        const db = openJournal(dataDir);
        try {
          await eventually(
            "undelivered outbox rows",
            () => db.prepare("SELECT COUNT(*) FROM outbox WHERE status != 'delivered'").pluck().get(),
            (left) => left === 0,
            60_000
          );
          const received = new Set(receiver.received.map((delivery) => delivery.headers["webhook-id"]));
          const queued = db.prepare("SELECT DISTINCT event_id FROM outbox").pluck().all() as string[];
          expect(queued.filter((id) => !received.has(id))).toEqual([]);
          console.log(
            `crash suite: ${CYCLES} cycles (${killsDuringStart} killed during start), ${ledger.sends.size} answered alerts, ${ledger.closed.size} acks/resolves, ${queued.length} webhook events, all kept`
          );
        } finally {
          db.close();
        }
        last.child.kill("SIGTERM");
        expect(await last.exited).toBe(0);
        const closed = openJournal(dataDir);
        expect(closed.pragma("integrity_check", {simple: true})).toBe("ok");
        closed.close();
        passed = true;
      } finally {
        gateway?.child.kill("SIGKILL");
        await Promise.all([smtp.stop(), receiver.close()]);
        if (passed) rmSync(dataDir, {recursive: true, force: true});
        else console.log(`crash suite: data dir kept for inspection: ${dataDir} (seed ${SEED})`);
      }
    },
    60_000 + CYCLES * 10_000
  );
});
