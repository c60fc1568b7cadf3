import {
  timingOf,
  transition,
  type HeartbeatDefinition,
  type HeartbeatEffect,
  type HeartbeatEvent,
  type HeartbeatStatus
} from "../../domain/heartbeat.js";
import type {Priority} from "../../domain/vocabulary.js";
import {SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {secretToken, tokensEqual} from "../../lib/tokens.js";
import type {Logger} from "../../lib/logger.js";
import {SerialByKey} from "../../lib/serial-by-key.js";
import type {HeartbeatsRepository} from "../../store/config/repositories.js";
import type {Journal} from "../../store/journal/journal.js";
import type {HeartbeatStatesRepository, StoredHeartbeatState} from "../../store/journal/heartbeat-states.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import type {AuditService} from "../shared/audit.service.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import {AppError, invalid, notFound, pageOrInvalidCursor} from "../shared/errors.js";
import {resolveTarget, type TargetDirectory} from "../recipients/paging-target.js";
import {
  changedFields,
  definitionFrom,
  inputProblems,
  patchedInput,
  type HeartbeatInput
} from "./heartbeat-definition.js";
import {heartbeatOfDedupKey, HeartbeatPages, stateAfterPage, type HeartbeatAfterPage} from "./heartbeat-pages.js";

export {DEFAULT_GRACE_SECONDS, type HeartbeatInput} from "./heartbeat-definition.js";

/** What the heartbeats service works with. */
export interface HeartbeatsDeps {
  definitions: HeartbeatsRepository;
  states: HeartbeatStatesRepository;
  /** Where the target is looked up. */
  targets: TargetDirectory;
  notifications: NotificationsService;
  /** Where closed pages are heard of (`watch`). */
  chains: EscalationsRepository;
  journal: Journal;
  audit: AuditService;
  clock: Clock;
  logger: Logger;
  /** The absolute base of ping URLs: settings.public_url, or the address the gateway listens on. */
  publicBase: () => string;
  /** Told after a state change committed: the sweep re-aims its timer. */
  onRescheduled: () => void;
}

export type PingKind = "ping" | "start" | "fail";

/** What the API shows of a heartbeat: its definition (never the token itself), state and ping URL. */
export interface HeartbeatView extends Omit<HeartbeatDefinition, "ping_token"> {
  status: HeartbeatStatus;
  last_ping_at: string | null;
  last_start_at: string | null;
  expected_at: string | null;
  down_at: string | null;
  notification_id: string | null;
  ping_url: string;
}

/** What a pinger hears back: enough to see the ping counted, nothing of the definition. */
export interface PingAnswer {
  name: string;
  status: HeartbeatStatus;
  expected_at: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : isoTimestamp(ms));

/**
 * Heartbeats: definitions in the config store, state in the journal. Every change of one
 * heartbeat's state runs under that heartbeat's own lock, so a ping and the sweep never
 * interleave; the page or resolve a transition asks for is done before the new state commits,
 * so a crash in between repeats it (deduplicated, idempotent) rather than losing it.
 */
export class HeartbeatsService {
  private readonly serial = new SerialByKey();
  private readonly pages: HeartbeatPages;

  constructor(private readonly deps: HeartbeatsDeps) {
    this.pages = new HeartbeatPages(deps.notifications, deps.logger);
    // However a page is closed (API, dashboard, SMS, Telegram), a heartbeat still down is re-armed.
    deps.chains.watch({
      stopped: (id) =>
        void this.pageClosed(id).catch((error: unknown) =>
          deps.logger.error("heartbeat: re-arming after its page closed failed", {notification_id: id, error})
        )
    });
  }

  /**
   * A page closed by someone while its heartbeat had not come back: the heartbeat stays down but
   * forgets the page, so its next failure or missed deadline pages again. The heartbeat's own
   * resolve (a good ping) finds the page already forgotten and changes nothing.
   */
  private pageClosed(notificationId: string): Promise<void> {
    const name = this.deps.journal.read(() => this.deps.states.pagedWith(notificationId));
    if (!name) return Promise.resolve();
    return this.locked(name, async () => {
      const definition = this.deps.definitions.get(name);
      const stored = this.deps.journal.read(() => this.deps.states.get(name));
      if (!definition || stored.notification_id !== notificationId) return;
      await this.applyLocked(definition, {type: "page_closed"}, SYSTEM_ACTOR);
    });
  }

  /** The state of the heartbeat `dedupKey` names once the re-arming queued before is done; null for other alerts. */
  async afterPageClosed(dedupKey: string | null): Promise<HeartbeatAfterPage | null> {
    const name = heartbeatOfDedupKey(dedupKey);
    if (name === null || !this.deps.definitions.get(name)) return null;
    const state = await this.locked(name, () =>
      Promise.resolve(this.deps.journal.read(() => this.deps.states.get(name)))
    );
    return stateAfterPage(name, state.status, iso(state.down_at));
  }

  view(definition: HeartbeatDefinition): HeartbeatView {
    const {ping_token: token, ...shown} = definition;
    const state = this.deps.journal.read(() => this.deps.states.get(definition.name));
    return {
      ...shown,
      status: state.status,
      last_ping_at: iso(state.last_ping_at),
      last_start_at: iso(state.last_start_at),
      expected_at: iso(state.expected_at),
      down_at: iso(state.down_at),
      notification_id: state.notification_id,
      ping_url: `${this.deps.publicBase().replace(/\/+$/, "")}/ping/${token}`
    };
  }

  get(name: string): HeartbeatDefinition {
    const definition = this.deps.definitions.get(name);
    if (!definition) throw notFound("heartbeat", name);
    return definition;
  }

  list(limit: number, cursor: string | null): {items: HeartbeatDefinition[]; next: string | null} {
    return pageOrInvalidCursor(this.deps.definitions.page(limit, cursor), "heartbeat");
  }

  private validate(input: HeartbeatInput): void {
    const errors = inputProblems(input, this.deps.clock.now());
    if (errors.length) throw invalid(errors);
    resolveTarget(input.target, this.deps.targets, "/target", this.deps.clock.now());
  }

  /** Creates a heartbeat; it stays `new` (inert) until its first ping. */
  create(
    name: string,
    input: HeartbeatInput,
    actor: Actor,
    createdByIntegration: string | null = null
  ): Promise<HeartbeatDefinition> {
    return this.locked(name, () => this.insert(name, input, actor, createdByIntegration));
  }

  private async insert(
    name: string,
    input: HeartbeatInput,
    actor: Actor,
    createdByIntegration: string | null
  ): Promise<HeartbeatDefinition> {
    this.validate(input);
    if (this.deps.definitions.get(name)) throw new AppError("conflict", `a heartbeat named ${name} already exists`);
    const now = isoTimestamp(this.deps.clock.now());
    const definition = definitionFrom(
      name,
      input,
      {ping_token: secretToken(), created_by_integration: createdByIntegration, created_at: now},
      now
    );
    await this.deps.definitions.insert(definition);
    await this.deps.audit.record(
      actor,
      "heartbeat.created",
      {type: "heartbeat", id: name},
      {target: definition.target, period_seconds: definition.period_seconds, schedule: definition.schedule}
    );
    return definition;
  }

  /** The document a merge patch produces, for the caller to validate before `replace`. */
  patched(name: string, patch: Record<string, unknown>): HeartbeatInput {
    return patchedInput(this.get(name), patch);
  }

  /** Replaces the writable fields; a new schedule or grace moves the deadlines at once. */
  replace(name: string, input: HeartbeatInput, actor: Actor): Promise<HeartbeatDefinition> {
    return this.locked(name, async () => {
      const current = this.get(name);
      this.validate(input);
      const {ping_token, created_by_integration, created_at} = current;
      const updated = definitionFrom(
        name,
        input,
        {ping_token, created_by_integration, created_at},
        isoTimestamp(this.deps.clock.now())
      );
      if (!(await this.deps.definitions.replace(updated))) throw notFound("heartbeat", name);
      await this.deps.audit.record(
        actor,
        "heartbeat.updated",
        {type: "heartbeat", id: name},
        {fields: changedFields(current, updated)}
      );
      await this.applyLocked(updated, {type: "reconfigured"}, actor);
      return updated;
    });
  }

  /** A new ping URL token; the old URL stops working at once. Schedule, state and pages stay. */
  rotatePingUrl(name: string, actor: Actor): Promise<HeartbeatDefinition> {
    return this.locked(name, async () => {
      const rotated = {...this.get(name), ping_token: secretToken(), updated_at: isoTimestamp(this.deps.clock.now())};
      if (!(await this.deps.definitions.replace(rotated))) throw notFound("heartbeat", name);
      await this.deps.audit.record(actor, "heartbeat.ping_url_rotated", {type: "heartbeat", id: name}, {});
      return rotated;
    });
  }

  /** Deletes the heartbeat and its state. A down page it raised stays open for people to close. */
  remove(name: string, actor: Actor): Promise<void> {
    return this.locked(name, async () => {
      this.get(name);
      await this.deps.definitions.remove(name);
      await this.deps.journal.write(() => {
        this.deps.states.remove(name);
        this.deps.audit.append(actor, "heartbeat.deleted", {type: "heartbeat", id: name}, {});
      });
      this.deps.onRescheduled();
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

  /** A ping with a key, by name; a failure may name the failed command's exit code. */
  async ping(name: string, kind: PingKind, actor: Actor, exitCode?: number): Promise<PingAnswer> {
    const event: HeartbeatEvent =
      kind === "fail" && exitCode !== undefined ? {type: "fail", exit_code: exitCode} : {type: kind};
    return this.pingAnswer(await this.apply(name, event, actor));
  }

  /** A keyless ping through the ping URL; null when no heartbeat has this token. */
  async pingByToken(token: string, kind: PingKind, exitCode?: number): Promise<PingAnswer | null> {
    const definition = this.deps.definitions.all().find((candidate) => tokensEqual(token, candidate.ping_token));
    if (!definition) return null;
    return this.ping(definition.name, kind, SYSTEM_ACTOR, exitCode);
  }

  /**
   * A `heartbeat` event from an integration: pings the named heartbeat, first creating it
   * (paging the integration's target) when it does not exist yet.
   */
  async pingOrCreate(
    name: string,
    periodSeconds: number | undefined,
    integration: {id: string; target: string; default_priority: Priority},
    actor: Actor
  ): Promise<PingAnswer & {created: boolean}> {
    const result = await this.locked(name, async () => {
      let definition = this.deps.definitions.get(name);
      const created = definition === null;
      if (!definition) {
        if (periodSeconds === undefined)
          throw invalid([
            {
              pointer: "/period_seconds",
              detail: `heartbeat ${name} does not exist yet; period_seconds is needed to create it`
            }
          ]);
        definition = await this.insert(
          name,
          {period_seconds: periodSeconds, target: integration.target, priority: integration.default_priority},
          actor,
          integration.id
        );
      }
      await this.applyLocked(definition, {type: "ping"}, actor);
      return {definition, created};
    });
    return {...this.pingAnswer(result.definition), created: result.created};
  }

  private pingAnswer(definition: HeartbeatDefinition): PingAnswer {
    const state = this.deps.journal.read(() => this.deps.states.get(definition.name));
    return {name: definition.name, status: state.status, expected_at: iso(state.expected_at)};
  }

  /**
   * After a restart: every deadline becomes at least a full grace from now, because devices
   * could not ping a gateway that was not serving. One transaction for all of them.
   */
  async recoverAfterRestart(): Promise<number> {
    const nowMs = this.deps.clock.now();
    const now = isoTimestamp(nowMs);
    const moved = await this.deps.journal.write(() => {
      let count = 0;
      for (const {name, state} of this.deps.states.watched()) {
        const definition = this.deps.definitions.get(name);
        if (!definition) continue;
        const next = transition(state, {type: "restart"}, timingOf(definition), nowMs).state;
        if (next.down_at !== state.down_at) count++;
        this.deps.states.save(name, {...next, notification_id: state.notification_id}, now);
      }
      return count;
    });
    this.deps.onRescheduled();
    return moved;
  }

  /**
   * One sweep: every heartbeat whose sweep time has come gets a `due` event (turning late or
   * down). A heartbeat is looked at once per pass, so a failing one cannot spin the loop.
   */
  async sweep(batch = 100): Promise<void> {
    const seen = new Set<string>();
    for (;;) {
      const due = this.deps.journal
        .read(() => this.deps.states.due(isoTimestamp(this.deps.clock.now()), batch))
        .filter((name) => !seen.has(name));
      if (due.length === 0) return;
      for (const name of due) {
        seen.add(name);
        if (!this.deps.definitions.get(name)) {
          // State left behind by a deletion that crashed half-way.
          await this.deps.journal.write(() => this.deps.states.remove(name));
          continue;
        }
        await this.apply(name, {type: "due"}, SYSTEM_ACTOR);
      }
    }
  }

  /** The earliest stored sweep time, for the monitor's timer. */
  earliestDue(): number | null {
    return this.deps.journal.read(() => this.deps.states.earliestDue());
  }

  // A ping and the sweep never interleave for one heartbeat.
  private locked<T>(name: string, work: () => Promise<T>): Promise<T> {
    return this.serial.run(name, work);
  }

  private async applyLocked(definition: HeartbeatDefinition, event: HeartbeatEvent, actor: Actor): Promise<void> {
    const nowMs = this.deps.clock.now();
    const stored = this.deps.journal.read(() => this.deps.states.get(definition.name));
    const {state, effects} = transition(stored, event, timingOf(definition), nowMs);
    let notificationId = event.type === "page_closed" ? null : stored.notification_id;
    for (const effect of effects) {
      if (effect.type === "page") notificationId = await this.pages.page(definition, stored, effect);
      if (effect.type === "resolve" && notificationId !== null) {
        await this.pages.resolve(definition.name, notificationId);
        notificationId = null;
      }
    }
    const next: StoredHeartbeatState = {...state, paged: notificationId !== null, notification_id: notificationId};
    await this.deps.journal.write(() => {
      this.deps.states.save(definition.name, next, isoTimestamp(nowMs));
      for (const effect of effects.filter(
        (each): each is Extract<HeartbeatEffect, {type: "status_changed"}> => each.type === "status_changed"
      )) {
        const reason = effects.find((each) => each.type === "page");
        this.deps.audit.append(
          actor,
          `heartbeat.${effect.to}`,
          {type: "heartbeat", id: definition.name},
          {
            from: effect.from,
            ...(reason ? {reason: reason.reason, notification_id: notificationId} : {}),
            ...(reason?.exit_code === undefined ? {} : {exit_code: reason.exit_code})
          }
        );
      }
    });
    if (effects.some((effect) => effect.type === "status_changed"))
      this.deps.logger.info("heartbeat status changed", {
        heartbeat: definition.name,
        status: state.status,
        from: stored.status
      });
    this.deps.onRescheduled();
  }
}
