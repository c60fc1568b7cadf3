import {expect} from "vitest";
import {levelOf, quietHoursEnd} from "../../src/domain/escalation/index.js";
import type {PolicySnapshot} from "../../src/domain/policy.js";
import {urgencyRank, type Priority} from "../../src/domain/vocabulary.js";
import {CONTACT_UNUSABLE} from "../../src/store/journal/contact-failures.repository.js";
import type {RecordingDriver} from "./recording-driver.js";
import type {Rig} from "./runner-rig.js";

/** What the test saw from outside: each voice call (when, to whom, for which alerts) and each restart. */
export interface Observed {
  /** `epoch`: restarts before the call (the storm grouping is in memory: a restart may cost one extra call). */
  voiceCalls: Array<{at: number; epoch: number; contact: string; alerts: string[]; priorities: Priority[]}>;
  restarts: number[];
}

interface ChainRow {
  id: string;
  status: string;
  priority: Priority;
  target_kind: string;
  state: string;
  next_step_at: string | null;
  waiting_for: string | null;
  steps_total: number;
  progress: string;
  policy: string;
}

interface AttemptRow {
  id: string;
  recipient_uuid: string;
  channel: string;
  step: number;
  outcome: string;
  started_at: string;
}

const NOT_CARRIED = new Set(["skipped", "deferred"]);
const REACHED = new Set(["sent", "delivered", "answered", "pending"]);
/** The priorities an on-call person's quiet hours may hold back (docs/schedules.md); the model's own copy. */
const QUIET_FOR_ON_CALL = new Set<Priority>(["low", "info"]);

/**
 * The invariants of the paging guarantee (issue 16), checked against the journal after each
 * command. `settled`: every channel has worked long enough for every chain to run out.
 */
export function checkInvariants(r: Rig, observed: Observed, {settled}: {settled: boolean}): void {
  const db = r.gw.gateway.journal.db;
  const now = r.clock.now();
  const chains = db
    .prepare(
      `SELECT n.id, n.status, n.priority, n.target_kind, e.state, e.next_step_at, e.waiting_for, e.steps_total, e.progress, e.policy
    FROM notifications n JOIN escalations e ON e.notification_id = n.id`
    )
    .all() as ChainRow[];
  const attemptsOf = db.prepare(
    "SELECT id, recipient_uuid, channel, step, outcome, started_at FROM attempts WHERE notification_id = ?"
  );
  const eventsOf = db.prepare("SELECT type, sequence, body FROM events WHERE notification_id = ? ORDER BY rowid");
  for (const chain of chains) {
    const attempts = attemptsOf.all(chain.id) as AttemptRow[];
    const open = chain.status === "queued" || chain.status === "notifying";
    // I1: an open notification always has a wake-up ahead (nothing due is left unfired) or a recorded wait.
    if (open) {
      expect(chain.state, `${chain.id} is open`).toBe("running");
      expect(
        chain.next_step_at !== null && Date.parse(chain.next_step_at) > now,
        `${chain.id} has a wake-up ahead`
      ).toBe(true);
      // Once every channel works again, only a contact marked unusable may still hold an alert
      // back, and it says so: the guarantee is a person reached, or somebody told it cannot be.
      if (settled) {
        const waits = JSON.parse(chain.waiting_for ?? "[]") as Array<{reason: string}>;
        expect(
          waits.length > 0 && waits.every((wait) => wait.reason === CONTACT_UNUSABLE),
          `${chain.id} still open once everything settled`
        ).toBe(true);
      }
    }
    // I2 and I4: exhausted only after every step was carried, each by a contact that reached a channel.
    if (chain.status === "exhausted") {
      // A plan with no step is undeliverable and loud, never exhausted: nobody was paged (issue 30 item 1).
      expect(chain.steps_total, `${chain.id} exhausted a plan with no step`).toBeGreaterThan(0);
      const carried = (JSON.parse(chain.progress) as {carried: number[]}).carried;
      expect(carried, `${chain.id} carried every step`).toEqual(
        Array.from({length: chain.steps_total}, (_, step) => step)
      );
      for (let step = 0; step < chain.steps_total; step++) {
        expect(
          attempts.some((a) => a.step === step && !NOT_CARRIED.has(a.outcome)),
          `${chain.id} step ${step} has a carried contact`
        ).toBe(true);
      }
    }
    // I5: quiet hours are respected, except for the priorities they let through.
    const policy = JSON.parse(chain.policy) as PolicySnapshot;
    for (const attempt of attempts.filter((a) => !NOT_CARRIED.has(a.outcome))) {
      const quiet = membersOfStep(policy, attempt.step).find(
        (member) => member.recipient_uuid === attempt.recipient_uuid
      )?.quiet_hours;
      if (!quiet || quiet.allow_priorities.includes(chain.priority)) continue;
      expect(
        quietHoursEnd(quiet, Date.parse(attempt.started_at)),
        `${chain.id} paged ${attempt.recipient_uuid} in quiet hours`
      ).toBeNull();
    }
    // I9 (issue 30): on call means reachable. An alert to a schedule, but for low and info, pages
    // its on-call person through their quiet hours: never deferred, never waiting for them to end.
    if (chain.target_kind === "schedule" && !QUIET_FOR_ON_CALL.has(chain.priority)) {
      expect(
        attempts.filter((a) => a.outcome === "deferred"),
        `${chain.id} (${chain.priority}, to a schedule) deferred by quiet hours`
      ).toEqual([]);
      expect(
        chain.waiting_for ?? "",
        `${chain.id} (${chain.priority}, to a schedule) waits for quiet hours`
      ).not.toMatch(/quiet hours/);
    }
    const events = eventsOf.all(chain.id) as Array<{type: string; sequence: number; body: string}>;
    checkEvents(chain.id, events);
    if (policy.levels) checkPolicyLevels(chain.id, policy, attempts, events);
  }
  checkOneCallPerInstant(r, observed);
  checkAuditorQuestion(r);
  checkJoinDelay(r);
}

/**
 * I7 (issue 30): the paging auditor's question, asked by the real auditor of the journal and the
 * clock as they are now: every alert not closed or held had a page carried within the deadline
 * of acceptance, or the journal records an allowed reason (quiet hours, a wait for a channel).
 */
export function checkAuditorQuestion(r: Rig): void {
  expect(
    r.gw.gateway.operations.auditor.question(),
    "alerts with no page carried in time and no allowed reason"
  ).toEqual([]);
}

/**
 * I8: an alert that joined another's paging (a storm) is named in a page to that person within
 * storm.max_join_delay_seconds of its acceptance. Checked on the state: a chain waiting behind
 * another is due by then, and I1 says nothing due is left unfired; so once the limit has passed
 * it is no longer waiting behind anyone, its own step has been carried (or recorded as skipped,
 * deferred or waiting for a channel).
 */
function checkJoinDelay(r: Rig): void {
  const limitMs = r.gw.gateway.settings.storm.max_join_delay_seconds * 1000;
  const waiting = r.gw.gateway.journal.db
    .prepare(
      `SELECT n.id, n.created_at, e.next_step_at, e.grouped_with FROM notifications n JOIN escalations e ON e.notification_id = n.id
    WHERE e.state = 'running' AND e.grouped_with IS NOT NULL`
    )
    .all() as Array<{id: string; created_at: string; next_step_at: string; grouped_with: string}>;
  for (const chain of waiting)
    expect(
      Date.parse(chain.next_step_at) - Date.parse(chain.created_at),
      `${chain.id} waits behind ${chain.grouped_with} longer than storm.max_join_delay_seconds`
    ).toBeLessThanOrEqual(limitMs);
}

/** The people a step may page: a policy's level's own (with that level's quiet hours), else every member. */
function membersOfStep(policy: PolicySnapshot, step: number): PolicySnapshot["members"] {
  const at = levelOf(policy, step);
  return at === null ? policy.members : policy.levels![at.level].members;
}

/**
 * I10 (issue 32), for an alert sent to an escalation policy: every page of a step goes to a
 * person of that step's level; each level is announced (`escalation.level`) before its step; and
 * an acknowledgement by anyone stops the whole policy: no level starts and no step pages after it.
 */
function checkPolicyLevels(
  id: string,
  policy: PolicySnapshot,
  attempts: AttemptRow[],
  events: Array<{type: string; body: string}>
): void {
  for (const attempt of attempts) {
    const people = membersOfStep(policy, attempt.step).map((member) => member.recipient_uuid);
    expect(people, `${id}: step ${attempt.step} paged someone outside its level`).toContain(attempt.recipient_uuid);
  }
  let levelAnnounced = false;
  let acknowledged = false;
  for (const event of events) {
    if (event.type === "notification.acknowledged") acknowledged = true;
    if (acknowledged)
      expect(
        ["escalation.level", "escalation.step", "notification.sent"],
        `${id}: ${event.type} after the ack`
      ).not.toContain(event.type);
    if (event.type === "escalation.level") levelAnnounced = true;
    if (event.type === "escalation.step") {
      expect(levelAnnounced, `${id}: a step before any level was announced`).toBe(true);
      const step = (JSON.parse(event.body) as {data: {step: {number: number}}}).data.step.number - 1;
      expect(levelOf(policy, step), `${id}: step ${step} outside the policy`).not.toBeNull();
    }
  }
}

/** I6: each notification's events are numbered 1, 2, 3... in the order they happened, and that order is causal. */
function checkEvents(id: string, events: Array<{type: string; sequence: number; body: string}>): void {
  expect(
    events.map((event) => event.sequence),
    `${id} event sequence`
  ).toEqual(events.map((_, index) => index + 1));
  // An alert a maintenance window held starts with notification.suppressed instead.
  expect(["escalation.started", "notification.suppressed"], `${id} starts with escalation.started`).toContain(
    events[0]?.type
  );
  const steps = new Set<number>();
  const sent = new Set<string>();
  let exhausted = false;
  for (const event of events) {
    const data = JSON.parse(event.body).data;
    if (exhausted)
      expect(
        ["notification.acknowledged", "notification.resolved", "notification.delivered", "contact.failed"],
        `${id}: ${event.type} after exhausted`
      ).toContain(event.type);
    if (event.type === "escalation.step") steps.add(data.step.number);
    if (event.type === "notification.sent") {
      expect(steps.has(data.attempt.step), `${id}: sent before its step was announced`).toBe(true);
      sent.add(data.attempt.id);
    }
    if (event.type === "notification.delivered")
      expect(sent.has(data.attempt.id), `${id}: delivered before sent`).toBe(true);
    if (event.type === "escalation.exhausted") exhausted = true;
  }
}

/**
 * I3, at the grain the scripted clock allows: two voice calls to one person at the same instant
 * only when the later one carries an alert more urgent than all of the earlier call's, the
 * earlier call did not reach the person (a storm then has no page to join), or its alerts were
 * all closed by then (a new alert after an acknowledgement is a new incident).
 */
function checkOneCallPerInstant(r: Rig, observed: Observed): void {
  const db = r.gw.gateway.journal.db;
  const outcome = db
    .prepare("SELECT outcome FROM attempts WHERE notification_id = ? AND channel = 'voice_call' AND started_at = ?")
    .pluck();
  const closedAt = db.prepare("SELECT COALESCE(acknowledged_at, resolved_at) FROM notifications WHERE id = ?").pluck();
  const closedBy = (alert: string, at: number) => {
    const when = closedAt.get(alert) as string | null;
    return when !== null && Date.parse(when) <= at;
  };
  const calls = observed.voiceCalls;
  for (let i = 1; i < calls.length; i++) {
    for (let j = 0; j < i; j++) {
      const [earlier, later] = [calls[j], calls[i]];
      if (earlier.contact !== later.contact || earlier.at !== later.at || earlier.epoch !== later.epoch) continue;
      const reached = earlier.alerts.some((alert) =>
        REACHED.has(String(outcome.get(alert, new Date(earlier.at).toISOString())))
      );
      const moreUrgentCall =
        Math.min(...later.priorities.map(urgencyRank)) < Math.min(...earlier.priorities.map(urgencyRank));
      const closed = earlier.alerts.every((alert) => closedBy(alert, later.at));
      expect(
        !reached || moreUrgentCall || closed,
        `two calls to ${later.contact} at ${new Date(later.at).toISOString()}`
      ).toBe(true);
    }
  }
}

/**
 * Repairs every channel and runs every chain's wake-ups until nothing is scheduled (at most a
 * week on), but for chains waiting on an unusable contact: nothing but a person fixes those.
 */
export async function settleEverything(
  r: Rig,
  drivers: Record<string, RecordingDriver>,
  tick: () => Promise<void>
): Promise<void> {
  for (const driver of Object.values(drivers)) driver.repair();
  await r.runner().checkChannels();
  await tick();
  const next = r.gw.gateway.journal.db
    .prepare(
      `SELECT MIN(next_step_at) FROM escalations WHERE state = 'running'
    AND (waiting_for IS NULL OR EXISTS (SELECT 1 FROM json_each(waiting_for) WHERE json_extract(value, '$.reason') != ?))`
    )
    .bind(CONTACT_UNUSABLE)
    .pluck();
  const deadline = r.clock.now() + 7 * 86_400_000;
  for (
    let at = next.get() as string | null;
    at !== null && r.clock.now() < deadline;
    at = next.get() as string | null
  ) {
    r.clock.set(Math.max(r.clock.now(), Date.parse(at)));
    await tick();
  }
}
