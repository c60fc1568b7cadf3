import {randomUUID} from "node:crypto";
import {SYSTEM_ACTOR, type Actor} from "../../domain/actor.js";
import {
  windowStatus,
  type MaintenanceScope,
  type MaintenanceStatus,
  type MaintenanceWindow
} from "../../domain/maintenance.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Journal} from "../../store/journal/journal.js";
import type {MaintenanceWindowsRepository} from "../../store/journal/maintenance-windows.repository.js";
import type {HeartbeatsRepository, IntegrationsRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import {AppError, invalid, notFound, unknownReference} from "../shared/errors.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import {pagedTarget, type TargetDirectory} from "../recipients/paging-target.js";

/** A validated create request; instants are ISO 8601 with a zone. */
export interface MaintenanceInput extends Partial<MaintenanceScope> {
  starts_at?: string;
  ends_at: string;
  reason: string;
}

/** What the API shows of a window: the record and its status now. */
export interface MaintenanceView extends Omit<MaintenanceWindow, "released_at"> {
  status: MaintenanceStatus;
}

/** What the maintenance service works with. */
export interface MaintenanceDeps {
  journal: Journal;
  windows: MaintenanceWindowsRepository;
  notifications: NotificationsService;
  /** Where the scope's targets, integrations and heartbeats are looked up. */
  directory: TargetDirectory & {integrations: IntegrationsRepository; heartbeats: HeartbeatsRepository};
  audit: AuditService;
  clock: Clock;
  /** Told after a window was created or released: the releaser re-aims its timer. */
  onRescheduled: () => void;
}

const SCOPE_LISTS = ["targets", "sources", "integrations", "heartbeats"] as const;

/**
 * Maintenance windows: planned times in which matching alerts are accepted and recorded but
 * page nobody (the hold itself is on the send path, `Suppressions`). A window, its end and the
 * release of what it held live in the journal, each change one transaction with its audit entry.
 */
export class MaintenanceService {
  constructor(private readonly deps: MaintenanceDeps) {}

  view(window: MaintenanceWindow): MaintenanceView {
    const {released_at: _released, ...rest} = window;
    return {...rest, status: windowStatus(window, this.deps.clock.now())};
  }

  get(uuid: string): MaintenanceWindow {
    const window = this.deps.journal.read(() => this.deps.windows.get(uuid));
    if (!window) throw notFound("maintenance window", uuid);
    return window;
  }

  /** Newest start first, optionally only the windows with one status now. */
  list(status: MaintenanceStatus | undefined, limit: number): MaintenanceWindow[] {
    const now = isoTimestamp(this.deps.clock.now());
    const filters = {
      active: {starting: {atOrBefore: now}, ending: {after: now}},
      upcoming: {starting: {after: now}},
      ended: {ending: {atOrBefore: now}}
    } as const;
    return this.deps.journal.read(() => this.deps.windows.list({...(status ? filters[status] : {}), limit}));
  }

  async create(input: MaintenanceInput, actor: Actor): Promise<MaintenanceWindow> {
    const nowMs = this.deps.clock.now();
    const window: MaintenanceWindow = {
      uuid: randomUUID(),
      ...this.checkedTimes(input, nowMs),
      reason: input.reason.trim(),
      ...this.checkedScope(input),
      created_at: isoTimestamp(nowMs),
      created_by: actor,
      released_at: null
    };
    await this.deps.journal.write(() => {
      this.deps.windows.insert(window);
      const {uuid: _uuid, created_at: _at, created_by: _by, released_at: _released, ...detail} = window;
      this.deps.audit.append(actor, "maintenance.created", {type: "maintenance_window", id: window.uuid}, detail);
    });
    this.deps.onRescheduled();
    return window;
  }

  /** Ends an upcoming or active window now; what it held is released in the same transaction. */
  async end(uuid: string, actor: Actor): Promise<MaintenanceWindow> {
    const ended = await this.deps.journal.write(() => {
      const nowMs = this.deps.clock.now();
      const now = isoTimestamp(nowMs);
      const window = this.deps.windows.get(uuid);
      if (!window) throw notFound("maintenance window", uuid);
      if (!this.deps.windows.endNow(uuid, now))
        throw new AppError("conflict", `maintenance window ${uuid} ended at ${window.ends_at}`);
      this.release({...window, ends_at: now}, actor, nowMs, true);
      return this.deps.windows.get(uuid) as MaintenanceWindow;
    });
    this.deps.onRescheduled();
    return ended;
  }

  /** Deletes a window that has not begun; one that has begun is part of the record and is ended instead. */
  async remove(uuid: string, actor: Actor): Promise<void> {
    await this.deps.journal.write(() => {
      const window = this.deps.windows.get(uuid);
      if (!window) throw notFound("maintenance window", uuid);
      if (windowStatus(window, this.deps.clock.now()) !== "upcoming")
        throw new AppError("conflict", `maintenance window ${uuid} has begun: end it instead of deleting it`);
      this.deps.windows.remove(uuid);
      this.deps.audit.append(actor, "maintenance.deleted", {type: "maintenance_window", id: uuid}, {});
    });
    this.deps.onRescheduled();
  }

  /**
   * One pass of the releaser: every window past its end whose held alerts were not released
   * yet (including those that ended while the gateway was off) releases them, one transaction each.
   */
  async releaseEnded(batch = 20): Promise<void> {
    for (;;) {
      const due = this.deps.journal.read(() =>
        this.deps.windows.endedUnreleased(isoTimestamp(this.deps.clock.now()), batch)
      );
      if (due.length === 0) return;
      for (const window of due)
        await this.deps.journal.write(() => this.release(window, SYSTEM_ACTOR, this.deps.clock.now(), false));
    }
  }

  /** The earliest end still to handle (ms), for the releaser's timer. */
  earliestEnd(): number | null {
    const at = this.deps.journal.read(() => this.deps.windows.earliestEnd());
    return at === null ? null : Date.parse(at);
  }

  private release(window: MaintenanceWindow, actor: Actor, nowMs: number, early: boolean): void {
    if (!this.deps.windows.markReleased(window.uuid, isoTimestamp(nowMs))) return;
    const released = this.deps.notifications.releaseHeld(window, nowMs);
    this.deps.audit.append(
      actor,
      "maintenance.ended",
      {type: "maintenance_window", id: window.uuid},
      {
        ends_at: window.ends_at,
        early,
        released
      }
    );
  }

  private checkedTimes(input: MaintenanceInput, nowMs: number): {starts_at: string; ends_at: string} {
    const startMs = input.starts_at === undefined ? nowMs : Date.parse(input.starts_at);
    const endMs = Date.parse(input.ends_at);
    if (endMs <= startMs) throw invalid([{pointer: "/ends_at", detail: "must be later than starts_at"}]);
    if (endMs <= nowMs) throw invalid([{pointer: "/ends_at", detail: "must be in the future"}]);
    // A start in the past means "from now": the window holds nothing before it was made.
    return {starts_at: isoTimestamp(Math.max(startMs, nowMs)), ends_at: isoTimestamp(endMs)};
  }

  private checkedScope(input: MaintenanceInput): MaintenanceScope {
    const scope: MaintenanceScope = {
      targets: unique(input.targets),
      sources: unique(input.sources),
      integrations: unique(input.integrations),
      heartbeats: unique(input.heartbeats)
    };
    if (SCOPE_LISTS.every((list) => scope[list].length === 0))
      throw invalid([{pointer: "", detail: `name what the window covers: ${SCOPE_LISTS.join(", ")} (at least one)`}]);
    const {directory} = this.deps;
    const {integrations, heartbeats} = directory;
    const known = {
      targets: (uuid: string) =>
        pagedTarget(uuid, directory) !== null ||
        directory.schedules.get(uuid) !== null ||
        directory.policies.get(uuid) !== null,
      integrations: (id: string) => integrations.get(id) !== null,
      heartbeats: (name: string) => heartbeats.get(name) !== null
    };
    for (const list of ["targets", "integrations", "heartbeats"] as const) {
      const given = input[list] ?? [];
      const index = given.findIndex((item) => !known[list](item));
      if (index >= 0) throw unknownReference(`/${list}/${index}`, `no ${list.slice(0, -1)} ${given[index]} exists`);
    }
    return scope;
  }
}

function unique(list: string[] | undefined): string[] {
  return [...new Set(list ?? [])];
}
