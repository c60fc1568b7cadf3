import {eventually} from "../support/eventually.js";
import {openJournal, stepsRunTwice, type KillSnapshot} from "./journal-checks.js";
import {settled, type Ledger} from "./ledger.js";
import type {SeededRandom} from "./seeded-random.js";

/** How many answered subjects of each kind are read back through the API after each restart. */
const SAMPLE = 3;

/**
 * After a restart on the same data dir: what was in flight at the kill is recorded as
 * interrupted (and not run again), every chain that was due gets its step, and through the API
 * answered keys still replay, created keys still sign in (revoked ones do not), and closed alerts
 * are still closed. Waits (bounded) for the runner's first passes; returns the problems found.
 */
export async function checkRecovery(
  url: string,
  adminKey: string,
  dataDir: string,
  ledger: Ledger,
  killed: KillSnapshot,
  servingAtMs: number,
  random: SeededRandom
): Promise<string[]> {
  const problems: string[] = [];
  const servingAtIso = new Date(servingAtMs).toISOString();
  const db = openJournal(dataDir);
  try {
    const attempt = db.prepare("SELECT outcome, error FROM attempts WHERE id = ?");
    for (const id of killed.pendingAttempts) {
      const row = attempt.get(id) as {outcome: string; error: string | null} | undefined;
      if (row?.outcome !== "failed" || !row.error?.startsWith("interrupted"))
        problems.push(
          `attempt ${id}, in flight at the kill, is now ${JSON.stringify(row)} (expected failed: interrupted)`
        );
    }
    const delivery = db.prepare("SELECT finished_at, error FROM webhook_deliveries WHERE id = ?");
    for (const id of killed.unfinishedDeliveries) {
      const row = delivery.get(id) as {finished_at: string | null; error: string | null} | undefined;
      if (!row?.finished_at || !row.error?.startsWith("interrupted"))
        problems.push(
          `webhook delivery ${id}, in flight at the kill, is now ${JSON.stringify(row)} (expected interrupted)`
        );
    }
    // The runner fires what is due in its first passes after the start; nothing due may be left behind.
    const stillDue = db
      .prepare("SELECT notification_id FROM escalations WHERE state = 'running' AND next_step_at <= ? LIMIT 5")
      .pluck();
    try {
      await eventually(
        "chains still due after the restart",
        () => stillDue.all(servingAtIso),
        (due) => due.length === 0,
        20_000
      );
    } catch (error) {
      problems.push((error as Error).message);
    }
    // A chain due at the kill resumed: it paged again since (any step: a chain that joined a storm
    // runs the steps it skipped ahead of last), ran out, joined a storm's chain, or waits for a channel, saying so.
    const resumed = db
      .prepare(
        `SELECT e.state = 'exhausted' OR e.grouped_with IS NOT NULL OR e.waiting_for IS NOT NULL
         OR EXISTS (SELECT 1 FROM attempts a WHERE a.notification_id = e.notification_id AND a.started_at >= ?)
       FROM escalations e WHERE e.notification_id = ?`
      )
      .pluck();
    for (const chain of killed.dueChains) {
      if (!resumed.get(killed.killedAtIso, chain.notification_id))
        problems.push(
          `chain ${chain.notification_id}, due at step ${chain.step} at the kill, did not get its step after the restart`
        );
    }
    problems.push(...stepsRunTwice(db));
  } finally {
    db.close();
  }
  problems.push(...(await throughTheApi(url, adminKey, ledger, random)));
  return problems;
}

async function throughTheApi(url: string, adminKey: string, ledger: Ledger, random: SeededRandom): Promise<string[]> {
  const problems: string[] = [];
  const sample = <T>(items: T[]) => Array.from({length: Math.min(SAMPLE, items.length)}, () => random.pick(items));
  const keyed = [...ledger.sends.values()].filter((sent) => sent.idempotency !== null);
  for (const sent of sample(keyed)) {
    const response = await fetch(`${url}/api/v1/notifications/send`, {
      method: "POST",
      headers: {"X-API-Key": adminKey, "Content-Type": "application/json", "Idempotency-Key": sent.idempotency!.key},
      body: sent.idempotency!.body
    });
    const body = (await response.json()) as {notification_uuid?: string};
    if (
      response.status !== 202 ||
      body.notification_uuid !== sent.id ||
      response.headers.get("idempotent-replayed") !== "true"
    )
      problems.push(
        `replaying ${sent.idempotency!.key} after the restart gave ${response.status} ${JSON.stringify(body)}, not ${sent.id}`
      );
  }
  for (const [id, key] of sample(settled(ledger.keys, ledger.adminInDoubt))) {
    const response = await fetch(`${url}/api/v1/notifications?limit=1`, {headers: {"X-API-Key": key.key}});
    await response.body?.cancel();
    const expected = key.state === "active" ? 200 : 401;
    if (response.status !== expected)
      problems.push(`${key.state} key ${id} got ${response.status} after the restart (expected ${expected})`);
  }
  for (const [id, as] of sample([...ledger.closed])) {
    const response = await fetch(`${url}/api/v1/notifications/${id}`, {headers: {"X-API-Key": adminKey}});
    const body = (await response.json()) as {status?: string};
    if (body.status !== as) problems.push(`answered ${as} alert ${id} reads as ${body.status} after the restart`);
  }
  return problems;
}
