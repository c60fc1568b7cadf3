import {
  timingOf, transition, type HeartbeatDefinition, type HeartbeatEffect, type HeartbeatEvent, type HeartbeatStatus
} from "../../domain/heartbeat.js";
import {cronProblem} from "../../domain/cron.js";
import {applyMergePatch} from "../../domain/merge-patch.js";
import {isValidTimeZone} from "../../domain/recipient.js";
import type {Priority} from "../../domain/vocabulary.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {secretToken, tokensEqual} from "../../lib/tokens.js";
import type {Logger} from "../../lib/logger.js";
import type {GroupsRepository, HeartbeatsRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {Journal} from "../../store/journal/journal.js";
import type {HeartbeatStatesRepository, StoredHeartbeatState} from "../../store/journal/heartbeat-states.repository.js";
import {SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import {AppError, invalid, notFound, pageOrInvalidCursor, refuseReadOnlyFields, type FieldError} from "../shared/errors.js";
import {resolveTarget} from "../recipients/paging-target.js";

/** The fields a client may write (name only at creation). */
export interface HeartbeatInput {
  period_seconds?: number;
  schedule?: string;
  timezone?: string;
  grace_seconds?: number;
  target: string;
  priority?: Priority;
}

export type PingKind = "ping" | "start" | "fail";

/** What the API shows of a heartbeat: definition, state and its ping URL. */
export interface HeartbeatView {
  name: string;
  period_seconds: number | null;
  schedule: string | null;
  timezone: string | null;
  grace_seconds: number;
  target: string;
  priority: Priority;
  status: HeartbeatStatus;
  last_ping_at: string | null;
  last_start_at: string | null;
  expected_at: string | null;
  down_at: string | null;
  notification_id: string | null;
  ping_url: string;
  created_by_integration: string | null;
  created_at: string;
  updated_at: string;
}

/** What a pinger hears back: enough to see the ping counted, nothing of the definition. */
export interface PingAnswer {
  name: string;
  status: HeartbeatStatus;
  expected_at: string | null;
}

const WRITABLE: (keyof HeartbeatInput)[] = ["period_seconds", "schedule", "timezone", "grace_seconds", "target", "priority"];
export const DEFAULT_GRACE_SECONDS = 60;
const iso = (ms: number | null) => (ms === null ? null : isoTimestamp(ms));

/** The dedup key of a heartbeat's down page: a second page for the same outage merges into the first. */
function heartbeatDedupKey(name: string): string {
  return `heartbeat:${name}`;
}

/**
 * Heartbeats: definitions in the config store, state in the journal. Every change of one
 * heartbeat's state runs under that heartbeat's own lock, so a ping and the sweep never
 * interleave; the page or resolve a transition asks for is done before the new state commits,
 * so a crash in between repeats it (deduplicated, idempotent) rather than losing it.
 */
export class HeartbeatsService {
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly definitions: HeartbeatsRepository,
    private readonly states: HeartbeatStatesRepository,
    private readonly recipients: RecipientsRepository,
    private readonly groups: GroupsRepository,
    private readonly notifications: NotificationsService,
    private readonly journal: Journal,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** The absolute base of ping URLs: settings.public_url, or the address the gateway listens on. */
    private readonly publicBase: () => string,
    /** Told after a state change committed: the sweep re-aims its timer. */
    private readonly onRescheduled: () => void
  ) {}

  view(definition: HeartbeatDefinition): HeartbeatView {
    const {ping_token: token, ...shown} = definition;
    const state = this.journal.read(() => this.states.get(definition.name));
    return {
      ...shown,
      status: state.status,
      last_ping_at: iso(state.last_ping_at),
      last_start_at: iso(state.last_start_at),
      expected_at: iso(state.expected_at),
      down_at: iso(state.down_at),
      notification_id: state.notification_id,
      ping_url: `${this.publicBase().replace(/\/+$/, "")}/ping/${token}`
    };
  }

  get(name: string): HeartbeatDefinition {
    const definition = this.definitions.get(name);
    if (!definition) throw notFound("heartbeat", name);
    return definition;
  }

  list(limit: number, cursor: string | null): {items: HeartbeatDefinition[]; next: string | null} {
    return pageOrInvalidCursor(this.definitions.page(limit, cursor), "heartbeat");
  }

  private check(input: HeartbeatInput): FieldError[] {
    const errors: FieldError[] = [];
    const hasPeriod = input.period_seconds !== undefined;
    const hasSchedule = input.schedule !== undefined;
    if (hasPeriod === hasSchedule) errors.push({pointer: "/period_seconds", detail: "give either period_seconds or schedule (with timezone), not both and not neither"});
    if (hasSchedule && input.timezone === undefined) errors.push({pointer: "/timezone", detail: "a cron schedule needs a timezone (an IANA zone such as Europe/Berlin)"});
    if (!hasSchedule && input.timezone !== undefined) errors.push({pointer: "/timezone", detail: "timezone only applies to a cron schedule"});
    if (input.timezone !== undefined && !isValidTimeZone(input.timezone)) errors.push({pointer: "/timezone", detail: `"${input.timezone}" is not an IANA time zone`});
    else if (hasSchedule && input.timezone !== undefined) {
      const problem = cronProblem(input.schedule as string, input.timezone, this.clock.now());
      if (problem) errors.push({pointer: "/schedule", detail: problem});
    }
    return errors;
  }

  private validate(input: HeartbeatInput): void {
    const errors = this.check(input);
    if (errors.length) throw invalid(errors);
    resolveTarget(input.target, {recipients: this.recipients, groups: this.groups}, "/target");
  }

  private definitionFrom(name: string, input: HeartbeatInput, base: Pick<HeartbeatDefinition, "ping_token" | "created_by_integration" | "created_at">, nowIso: string): HeartbeatDefinition {
    return {
      name,
      period_seconds: input.period_seconds ?? null,
      schedule: input.schedule ?? null,
      timezone: input.timezone ?? null,
      grace_seconds: input.grace_seconds ?? DEFAULT_GRACE_SECONDS,
      target: input.target,
      priority: input.priority ?? "high",
      ...base,
      updated_at: nowIso
    };
  }

  /** Creates a heartbeat; it stays `new` (inert) until its first ping. */
  create(name: string, input: HeartbeatInput, actor: Actor, createdByIntegration: string | null = null): Promise<HeartbeatDefinition> {
    return this.locked(name, () => this.insert(name, input, actor, createdByIntegration));
  }

  private async insert(name: string, input: HeartbeatInput, actor: Actor, createdByIntegration: string | null): Promise<HeartbeatDefinition> {
    this.validate(input);
    if (this.definitions.get(name)) throw new AppError("conflict", `a heartbeat named ${name} already exists`);
    const now = isoTimestamp(this.clock.now());
    const definition = this.definitionFrom(name, input, {ping_token: secretToken(), created_by_integration: createdByIntegration, created_at: now}, now);
    await this.definitions.insert(definition);
    await this.audit.record(actor, "heartbeat.created", {type: "heartbeat", id: name}, {target: definition.target, period_seconds: definition.period_seconds, schedule: definition.schedule});
    return definition;
  }

  /** The document a merge patch produces, for the caller to validate before `replace`. */
  patched(name: string, patch: Record<string, unknown>): HeartbeatInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const current = this.get(name);
    const writable = Object.fromEntries(WRITABLE.filter((field) => current[field] !== null).map((field) => [field, current[field]]));
    return applyMergePatch(writable, patch) as HeartbeatInput;
  }

  /** Replaces the writable fields; a new schedule or grace moves the deadlines at once. */
  replace(name: string, input: HeartbeatInput, actor: Actor): Promise<HeartbeatDefinition> {
    return this.locked(name, async () => {
      const current = this.get(name);
      this.validate(input);
      const {ping_token, created_by_integration, created_at} = current;
      const updated = this.definitionFrom(name, input, {ping_token, created_by_integration, created_at}, isoTimestamp(this.clock.now()));
      if (!(await this.definitions.replace(updated))) throw notFound("heartbeat", name);
      const fields = WRITABLE.filter((field) => current[field] !== updated[field]);
      await this.audit.record(actor, "heartbeat.updated", {type: "heartbeat", id: name}, {fields});
      await this.applyLocked(updated, {type: "reconfigured"}, actor);
      return updated;
    });
  }

  /** A new ping URL token; the old URL stops working at once. Schedule, state and pages stay. */
  rotatePingUrl(name: string, actor: Actor): Promise<HeartbeatDefinition> {
    return this.locked(name, async () => {
      const rotated = {...this.get(name), ping_token: secretToken(), updated_at: isoTimestamp(this.clock.now())};
      if (!(await this.definitions.replace(rotated))) throw notFound("heartbeat", name);
      await this.audit.record(actor, "heartbeat.ping_url_rotated", {type: "heartbeat", id: name}, {});
      return rotated;
    });
  }

  /** Deletes the heartbeat and its state. A down page it raised stays open for people to close. */
  remove(name: string, actor: Actor): Promise<void> {
    return this.locked(name, async () => {
      this.get(name);
      await this.definitions.remove(name);
      await this.journal.write(() => {
        this.states.remove(name);
        this.audit.append(actor, "heartbeat.deleted", {type: "heartbeat", id: name}, {});
      });
      this.onRescheduled();
    });
  }

  /** Runs one event through the state machine for the named heartbeat. */
  apply(name: string, event: HeartbeatEvent, actor: Actor): Promise<HeartbeatDefinition> {
    return this.locked(name, async () => {
      const definition = this.get(name);
      await this.applyLocked(definition, event, actor);
      return definition;
    });
  }

  /** A ping with a key, by name. */
  async ping(name: string, kind: PingKind, actor: Actor): Promise<PingAnswer> {
    return this.pingAnswer(await this.apply(name, {type: kind}, actor));
  }

  /** A keyless ping through the ping URL; null when no heartbeat has this token. */
  async pingByToken(token: string, kind: PingKind): Promise<PingAnswer | null> {
    const definition = this.definitions.all().find((candidate) => tokensEqual(token, candidate.ping_token));
    if (!definition) return null;
    return this.ping(definition.name, kind, SYSTEM_ACTOR);
  }

  /**
   * A `heartbeat` event from an integration: pings the named heartbeat, first creating it
   * (paging the integration's target) when it does not exist yet.
   */
  async pingOrCreate(name: string, periodSeconds: number | undefined, integration: {id: string; target: string; default_priority: Priority}, actor: Actor): Promise<PingAnswer & {created: boolean}> {
    const result = await this.locked(name, async () => {
      let definition = this.definitions.get(name);
      const created = definition === null;
      if (!definition) {
        if (periodSeconds === undefined) throw invalid([{pointer: "/period_seconds", detail: `heartbeat ${name} does not exist yet; period_seconds is needed to create it`}]);
        definition = await this.insert(name, {period_seconds: periodSeconds, target: integration.target, priority: integration.default_priority}, actor, integration.id);
      }
      await this.applyLocked(definition, {type: "ping"}, actor);
      return {definition, created};
    });
    return {...this.pingAnswer(result.definition), created: result.created};
  }

  private pingAnswer(definition: HeartbeatDefinition): PingAnswer {
    const state = this.journal.read(() => this.states.get(definition.name));
    return {name: definition.name, status: state.status, expected_at: iso(state.expected_at)};
  }

  /**
   * After a restart: every deadline becomes at least a full grace from now, because devices
   * could not ping a gateway that was not serving. One transaction for all of them.
   */
  async recoverAfterRestart(): Promise<number> {
    const nowMs = this.clock.now();
    const now = isoTimestamp(nowMs);
    const moved = await this.journal.write(() => {
      let count = 0;
      for (const {name, state} of this.states.watched()) {
        const definition = this.definitions.get(name);
        if (!definition) continue;
        const next = transition(state, {type: "restart"}, timingOf(definition), nowMs).state;
        if (next.down_at !== state.down_at) count++;
        this.states.save(name, {...next, notification_id: state.notification_id}, now);
      }
      return count;
    });
    this.onRescheduled();
    return moved;
  }

  /**
   * One sweep: every heartbeat whose sweep time has come gets a `due` event (turning late or
   * down). A heartbeat is looked at once per pass, so a failing one cannot spin the loop.
   */
  async sweep(batch = 100): Promise<void> {
    const seen = new Set<string>();
    for (;;) {
      const due = this.journal.read(() => this.states.due(isoTimestamp(this.clock.now()), batch)).filter((name) => !seen.has(name));
      if (due.length === 0) return;
      for (const name of due) {
        seen.add(name);
        if (!this.definitions.get(name)) {
          // State left behind by a deletion that crashed half-way.
          await this.journal.write(() => this.states.remove(name));
          continue;
        }
        await this.apply(name, {type: "due"}, SYSTEM_ACTOR);
      }
    }
  }

  /** The earliest stored sweep time, for the monitor's timer. */
  earliestDue(): number | null {
    return this.journal.read(() => this.states.earliestDue());
  }

  // Serialises work per heartbeat name; a failure does not block the next caller.
  private locked<T>(name: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(name) ?? Promise.resolve();
    const run = previous.then(work);
    const tail = run.catch(() => undefined);
    this.locks.set(name, tail);
    void tail.then(() => {
      if (this.locks.get(name) === tail) this.locks.delete(name);
    });
    return run;
  }

  private async applyLocked(definition: HeartbeatDefinition, event: HeartbeatEvent, actor: Actor): Promise<void> {
    const nowMs = this.clock.now();
    const stored = this.journal.read(() => this.states.get(definition.name));
    const {state, effects} = transition(stored, event, timingOf(definition), nowMs);
    let notificationId = stored.notification_id;
    for (const effect of effects) {
      if (effect.type === "page") notificationId = await this.page(definition, stored, effect.reason);
      if (effect.type === "resolve" && notificationId !== null) {
        await this.resolvePage(definition.name, notificationId);
        notificationId = null;
      }
    }
    const next: StoredHeartbeatState = {...state, paged: notificationId !== null, notification_id: notificationId};
    await this.journal.write(() => {
      this.states.save(definition.name, next, isoTimestamp(nowMs));
      for (const effect of effects.filter((each): each is Extract<HeartbeatEffect, {type: "status_changed"}> => each.type === "status_changed")) {
        const reason = effects.find((each) => each.type === "page");
        this.audit.append(actor, `heartbeat.${effect.to}`, {type: "heartbeat", id: definition.name}, {from: effect.from, ...(reason ? {reason: reason.reason, notification_id: notificationId} : {})});
      }
    });
    if (effects.some((effect) => effect.type === "status_changed")) this.logger.info("heartbeat status changed", {heartbeat: definition.name, status: state.status, from: stored.status});
    this.onRescheduled();
  }

  /** Pages the target; null when it cannot (the target was deleted), which is logged and audited. */
  private async page(definition: HeartbeatDefinition, before: StoredHeartbeatState, reason: "missed" | "failed"): Promise<string | null> {
    const lastPing = before.last_ping_at === null ? "never pinged" : `last ping ${isoTimestamp(before.last_ping_at)}`;
    const message = reason === "failed" ? `Heartbeat ${definition.name} reported a failure` : `Heartbeat ${definition.name} is down: no ping in time (${lastPing})`;
    try {
      const outcome = await this.notifications.send(
        {recipient_uuid: definition.target, message, priority: definition.priority, source: heartbeatDedupKey(definition.name), dedup_key: heartbeatDedupKey(definition.name)},
        SYSTEM_ACTOR
      );
      return outcome.view.id;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.logger.error("heartbeat is down but its target cannot be paged", {heartbeat: definition.name, target: definition.target, error});
      return null;
    }
  }

  private async resolvePage(name: string, notificationId: string): Promise<void> {
    try {
      await this.notifications.resolve(notificationId, SYSTEM_ACTOR);
    } catch (error) {
      // The page may have been removed by retention; there is nothing left to resolve.
      if (!(error instanceof AppError && error.code === "not_found")) throw error;
      this.logger.warn("heartbeat page to resolve no longer exists", {heartbeat: name, notification_id: notificationId});
    }
  }
}
