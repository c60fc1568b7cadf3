import type {Actor} from "../../domain/actor.js";
import {finalShifts, gaps, onCallAt, wholeShiftsOverlapping, type FinalShift} from "../../domain/schedules/on-call.js";
import {MS_PER_DAY, overlappingOverride, type ScheduleOverride} from "../../domain/schedules/schedule.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {newId} from "../../lib/ids.js";
import type {GroupsRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import {AppError, invalid, notFound, unknownReference} from "../shared/errors.js";
import {pagedTarget} from "./paging-target.js";
import type {SchedulesService} from "./schedules.service.js";

/** The longest range one shifts query covers: a quarter, enough for any planning view. */
export const MAX_SHIFTS_RANGE_DAYS = 92;

export interface NamedRecipient {
  uuid: string;
  name: string;
}

/** A final shift as the API shows it: instants, who, and the layer or override behind it. */
export interface ShiftView {
  starts_at: string;
  ends_at: string;
  target: {uuid: string; kind: "recipient" | "group"; name: string};
  recipients: NamedRecipient[];
  source: "rotation" | "shift_pattern" | "override";
  layer: number | null;
  layer_name: string | null;
  shift_name: string | null;
  crew: string | null;
  override_id: string | null;
}

export interface OnCallView {
  at: string;
  /** The recipients paged now: the shift's, or during a gap the fallback's. */
  recipients: NamedRecipient[];
  /** The final shift holding `at`; null during a gap. */
  shift: ShiftView | null;
  /** During a gap, the fallback target (null when the schedule has none). */
  fallback: {uuid: string; kind: "recipient" | "group"; name: string} | null;
}

export interface OverrideInput {
  recipient_uuid: string;
  starts_at: string;
  ends_at: string;
}

/** What OnCallService works with, by name. */
export interface OnCallDeps {
  schedules: SchedulesService;
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  audit: AuditService;
  clock: Clock;
}

/** Who a schedule puts on call, its final shifts, and the overrides that change them. */
export class OnCallService {
  constructor(private readonly deps: OnCallDeps) {}

  /** A recipient or group by uuid, with the recipients it pages (a group's members that still exist). */
  private who(uuid: string): {target: ShiftView["target"]; recipients: NamedRecipient[]} {
    const paged = pagedTarget(uuid, {recipients: this.deps.recipients, groups: this.deps.groups});
    if (paged?.kind === "recipient")
      return {
        target: {uuid, kind: "recipient", name: paged.recipient.name},
        recipients: [{uuid, name: paged.recipient.name}]
      };
    const members = (paged?.members ?? []).map((member) => ({uuid: member.uuid, name: member.name}));
    return {target: {uuid, kind: "group", name: paged?.group.name ?? uuid}, recipients: members};
  }

  private shiftView(shift: FinalShift): ShiftView {
    const origin = shift.origin;
    return {
      starts_at: isoTimestamp(shift.start),
      ends_at: isoTimestamp(shift.end),
      ...this.who(shift.target),
      source: origin.kind,
      layer: origin.kind === "override" ? null : origin.layer,
      layer_name: origin.kind === "override" ? null : origin.layer_name,
      shift_name: origin.kind === "shift_pattern" ? origin.shift : null,
      crew: origin.kind === "shift_pattern" ? origin.crew : null,
      override_id: origin.kind === "override" ? origin.override_id : null
    };
  }

  onCall(uuid: string, at: number): OnCallView {
    const schedule = this.deps.schedules.get(uuid);
    const shift = onCallAt(schedule, at);
    if (shift) {
      const view = this.shiftView(shift);
      return {at: isoTimestamp(at), recipients: view.recipients, shift: view, fallback: null};
    }
    const fallback = schedule.fallback === null ? null : this.who(schedule.fallback);
    return {
      at: isoTimestamp(at),
      recipients: fallback?.recipients ?? [],
      shift: null,
      fallback: fallback?.target ?? null
    };
  }

  shifts(uuid: string, from: number, to: number): {shifts: ShiftView[]; gaps: {starts_at: string; ends_at: string}[]} {
    if (to <= from) throw invalid([{pointer: "/to", detail: "must be later than from"}]);
    if (to - from > MAX_SHIFTS_RANGE_DAYS * MS_PER_DAY)
      throw invalid([{pointer: "/to", detail: `at most ${MAX_SHIFTS_RANGE_DAYS} days after from`}]);
    const schedule = this.deps.schedules.get(uuid);
    return {
      shifts: finalShifts(schedule, from, to).map((shift) => this.shiftView(shift)),
      gaps: gaps(schedule, from, to).map((gap) => ({
        starts_at: isoTimestamp(gap.start),
        ends_at: isoTimestamp(gap.end)
      }))
    };
  }

  /** The shifts overlapping [from, to), whole: the first and last are not cut at the range's ends. */
  wholeShifts(uuid: string, from: number, to: number): ShiftView[] {
    return wholeShiftsOverlapping(this.deps.schedules.get(uuid), from, to).map((shift) => this.shiftView(shift));
  }

  overrides(uuid: string): ScheduleOverride[] {
    return this.deps.schedules.get(uuid).overrides;
  }

  /** Adds an override; one that shares time with another is refused (which would win is not obvious). */
  async addOverride(uuid: string, input: OverrideInput, actor: Actor): Promise<ScheduleOverride> {
    const [start, end] = [Date.parse(input.starts_at), Date.parse(input.ends_at)];
    if (!(end > start)) throw invalid([{pointer: "/ends_at", detail: "must be later than starts_at"}]);
    if (this.deps.groups.get(input.recipient_uuid))
      throw unknownReference(
        "/recipient_uuid",
        `${input.recipient_uuid} is a group: an override puts one recipient on call (name one of its members, ` +
          `or give the group a crew in a shift pattern)`
      );
    if (!this.deps.recipients.get(input.recipient_uuid))
      throw unknownReference("/recipient_uuid", `recipient ${input.recipient_uuid} does not exist`);
    const now = this.deps.clock.now();
    const override: ScheduleOverride = {
      id: newId("ovr", now),
      recipient_uuid: input.recipient_uuid,
      starts_at: isoTimestamp(start),
      ends_at: isoTimestamp(end),
      created_at: isoTimestamp(now)
    };
    await this.deps.schedules.modify(uuid, (schedule) => {
      const clash = overlappingOverride(schedule.overrides, override);
      if (clash)
        throw new AppError(
          "conflict",
          `the override overlaps override ${clash.id} (${clash.starts_at} to ${clash.ends_at}); change or delete that one first`
        );
      const overrides = [...schedule.overrides, override].sort(
        (a, b) => Date.parse(a.starts_at) - Date.parse(b.starts_at)
      );
      return {...schedule, overrides};
    });
    await this.deps.audit.record(actor, "schedule.override_created", {type: "schedule", id: uuid}, {...override});
    return override;
  }

  async removeOverride(uuid: string, id: string, actor: Actor): Promise<void> {
    let override: ScheduleOverride | undefined;
    await this.deps.schedules.modify(uuid, (schedule) => {
      override = schedule.overrides.find((candidate) => candidate.id === id);
      if (!override) throw notFound("override", id);
      return {...schedule, overrides: schedule.overrides.filter((candidate) => candidate.id !== id)};
    });
    await this.deps.audit.record(actor, "schedule.override_deleted", {type: "schedule", id: uuid}, {...override});
  }
}
