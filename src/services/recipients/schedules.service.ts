import {randomUUID} from "node:crypto";
import type {Actor} from "../../domain/actor.js";
import {applyMergePatch} from "../../domain/merge-patch.js";
import type {Schedule, ScheduleLayer} from "../../domain/schedules/schedule.js";
import {scheduleProblems} from "../../domain/schedules/schedule-problems.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {secretToken} from "../../lib/tokens.js";
import type {GroupsRepository, RecipientsRepository, SchedulesRepository} from "../../store/config/repositories.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {AuditService} from "../shared/audit.service.js";
import {
  AppError,
  invalid,
  notFound,
  pageOrInvalidCursor,
  priorityWithoutChannel,
  refuseReadOnlyFields,
  type FieldError
} from "../shared/errors.js";
import {refuseIfOpenNotifications, type PagingReferences} from "./paging-references.js";
import {priorityGapErrors} from "./paging-target.js";

export type ScheduleInput = Partial<Pick<Schedule, "name" | "timezone" | "layers" | "fallback" | "handoff_notice">>;
const WRITABLE: (keyof ScheduleInput)[] = ["name", "timezone", "layers", "fallback", "handoff_notice"];

/** The fields each kind of layer may carry: one schema model serves both kinds, so the rest are refused here. */
const LAYER_FIELDS: Record<ScheduleLayer["type"], string[]> = {
  rotation: [
    "type",
    "name",
    "members",
    "shift_length_hours",
    "shift_length_days",
    "shift_length_weeks",
    "starts_at",
    "restrictions"
  ],
  shift_pattern: ["type", "name", "shifts", "crews", "cycle", "starts_on"]
};
const REQUIRED_LAYER_FIELDS: Record<ScheduleLayer["type"], string[]> = {
  rotation: ["members", "starts_at"],
  shift_pattern: ["shifts", "crews", "cycle", "starts_on"]
};

/** The key-less address of a calendar feed. */
export function icalUrl(publicBase: string, token: string): string {
  return `${publicBase.replace(/\/+$/, "")}/ical/${token}.ics`;
}

/** What the API shows of a schedule: everything but the feed token, and the feed's URL instead. */
export interface ScheduleView extends Omit<Schedule, "ical_token"> {
  handoff_notice: boolean;
  ical_url: string;
}

export interface SchedulesDependencies {
  schedules: SchedulesRepository;
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  notifications: NotificationsRepository;
  audit: AuditService;
  clock: Clock;
  pagingReferences: PagingReferences;
  /** The gateway's public URL, for the feed URL. */
  publicBase: () => string;
}

function layerShapeErrors(layers: ScheduleLayer[]): FieldError[] {
  return layers.flatMap((layer, index) => {
    const record = layer as unknown as Record<string, unknown>;
    return [
      ...Object.keys(record)
        .filter((field) => !LAYER_FIELDS[layer.type].includes(field))
        .map((field) => ({pointer: `/layers/${index}/${field}`, detail: `a ${layer.type} layer has no "${field}"`})),
      ...REQUIRED_LAYER_FIELDS[layer.type]
        .filter((field) => record[field] === undefined)
        .map((field) => ({pointer: `/layers/${index}/${field}`, detail: `a ${layer.type} layer needs "${field}"`}))
    ];
  });
}

/** On-call schedules: who a schedule target pages, by layers of rotations and shift patterns. */
export class SchedulesService {
  constructor(private readonly deps: SchedulesDependencies) {}

  get(uuid: string): Schedule {
    const schedule = this.deps.schedules.get(uuid);
    if (!schedule) throw notFound("schedule", uuid);
    return schedule;
  }

  view(schedule: Schedule): ScheduleView {
    const {ical_token: token, ...shown} = schedule;
    return {...shown, handoff_notice: shown.handoff_notice ?? false, ical_url: icalUrl(this.deps.publicBase(), token)};
  }

  all(): Schedule[] {
    return this.deps.schedules.all();
  }

  list(limit: number, cursor: string | null): {items: Schedule[]; next: string | null} {
    return pageOrInvalidCursor(this.deps.schedules.page(limit, cursor), "schedule");
  }

  /** Every recipient or group the schedule names, with where: layer members, crews and the fallback. */
  private static references(
    input: Required<ScheduleInput>
  ): Array<{uuid: string; pointer: string; recipientOnly: boolean}> {
    const refs = input.layers.flatMap((layer, index) =>
      layer.type === "rotation"
        ? layer.members.map((uuid, position) => ({
            uuid,
            pointer: `/layers/${index}/members/${position}`,
            recipientOnly: true
          }))
        : layer.crews.map((crew, position) => ({
            uuid: crew.target,
            pointer: `/layers/${index}/crews/${position}/target`,
            recipientOnly: false
          }))
    );
    return input.fallback === null
      ? refs
      : [...refs, {uuid: input.fallback, pointer: "/fallback", recipientOnly: false}];
  }

  /** Members must be recipients; crews and the fallback recipients or groups. */
  private unknownReferences(input: Required<ScheduleInput>): FieldError[] {
    const isRecipient = (uuid: string) => this.deps.recipients.get(uuid) !== null;
    const isTarget = (uuid: string) => isRecipient(uuid) || this.deps.groups.get(uuid) !== null;
    return SchedulesService.references(input).flatMap(({uuid, pointer, recipientOnly}) => {
      if (recipientOnly ? isRecipient(uuid) : isTarget(uuid)) return [];
      const detail = recipientOnly ? `recipient ${uuid} does not exist` : `no recipient or group has the uuid ${uuid}`;
      return [{pointer, detail}];
    });
  }

  private normalise(
    input: ScheduleInput,
    kept: Pick<Schedule, "uuid" | "overrides" | "ical_token" | "created_at">
  ): Schedule {
    const complete: Required<ScheduleInput> = {
      name: input.name as string,
      timezone: input.timezone as string,
      layers: input.layers ?? [],
      fallback: input.fallback ?? null,
      handoff_notice: input.handoff_notice ?? false
    };
    const shapeErrors = layerShapeErrors(complete.layers);
    if (shapeErrors.length) throw invalid(shapeErrors);
    const problems = scheduleProblems(complete);
    // Required: an alert accepted in a gap must page someone, never end exhausted with nobody paged.
    if (complete.fallback === null)
      problems.push({pointer: "/fallback", detail: "a schedule needs a fallback: who is paged when nobody is on call"});
    if (problems.length) throw invalid(problems);
    const unknown = this.unknownReferences(complete);
    if (unknown.length)
      throw new AppError("unknown_reference", unknown.map((error) => error.detail).join("; "), {errors: unknown});
    const directory = {recipients: this.deps.recipients, groups: this.deps.groups};
    const gaps = SchedulesService.references(complete).flatMap(({uuid, pointer}) =>
      priorityGapErrors(uuid, directory, pointer)
    );
    if (gaps.length) throw priorityWithoutChannel(gaps);
    return {...kept, ...complete, updated_at: isoTimestamp(this.deps.clock.now())};
  }

  async create(input: ScheduleInput, actor: Actor): Promise<Schedule> {
    const now = isoTimestamp(this.deps.clock.now());
    const schedule = this.normalise(input, {
      uuid: randomUUID(),
      overrides: [],
      ical_token: secretToken(),
      created_at: now
    });
    await this.deps.schedules.insert(schedule);
    await this.deps.audit.record(
      actor,
      "schedule.created",
      {type: "schedule", id: schedule.uuid},
      {name: schedule.name}
    );
    return schedule;
  }

  /** The document a merge patch produces, for the caller to validate before `replace`. */
  patched(uuid: string, patch: Record<string, unknown>): ScheduleInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const schedule = this.get(uuid);
    return applyMergePatch(
      Object.fromEntries(WRITABLE.map((field) => [field, this.view(schedule)[field]])),
      patch
    ) as ScheduleInput;
  }

  async replace(uuid: string, input: ScheduleInput, actor: Actor): Promise<Schedule> {
    // Checked inside the serialised update: an override added meanwhile is kept.
    const updated = await this.modify(uuid, (current) => this.normalise(input, current));
    await this.deps.audit.record(actor, "schedule.updated", {type: "schedule", id: uuid}, {name: updated.name});
    return updated;
  }

  /**
   * Changes the stored schedule in the config store's serialised update, so `change` checks
   * against every change made before it (two overrides sent at once cannot both pass).
   */
  async modify(uuid: string, change: (current: Schedule) => Schedule): Promise<Schedule> {
    const changed = await this.deps.schedules.modify(uuid, (current) => ({
      ...change(current),
      updated_at: isoTimestamp(this.deps.clock.now())
    }));
    if (!changed) throw notFound("schedule", uuid);
    return changed;
  }

  async remove(uuid: string, actor: Actor): Promise<void> {
    const schedule = this.get(uuid);
    this.deps.pagingReferences.refuseIfPaged("schedule", uuid);
    refuseIfOpenNotifications(this.deps.notifications, "schedule", uuid);
    await this.deps.schedules.remove(uuid);
    await this.deps.audit.record(actor, "schedule.deleted", {type: "schedule", id: uuid}, {name: schedule.name});
  }

  /** A new feed token: subscribed calendars stop updating until they get the new URL. */
  async rotateIcalToken(uuid: string, actor: Actor): Promise<Schedule> {
    const rotated = await this.modify(uuid, (current) => ({...current, ical_token: secretToken()}));
    await this.deps.audit.record(actor, "schedule.ical_url_rotated", {type: "schedule", id: uuid}, {});
    return rotated;
  }
}
