import {
  AdditionalProperties,
  array,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  Max,
  MaxItems,
  MaxLength,
  Min,
  MinItems,
  MinLength,
  Nullable,
  Pattern,
  Required,
  Schema,
  string,
  UniqueItems
} from "@tsed/schema";
import {WEEKDAYS} from "../../domain/schedules/schedule.js";

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$|^24:00$/;
const LAYER_TYPES = ["rotation", "shift_pattern"] as const;
const MAX_CYCLE_DAYS = 366;
const MAX_SHIFTS_A_DAY = 12;

@AdditionalProperties(false)
export class TimeWindowModel {
  @Required() @Pattern(HH_MM) @Description("HH:MM in the schedule's zone") start: string;
  @Required()
  @Pattern(HH_MM)
  @Description("HH:MM (24:00 for midnight); at or before start, the window crosses midnight")
  end: string;
}

@AdditionalProperties(false)
export class LayerRestrictionsModel {
  @CollectionOf(String)
  @Enum(...WEEKDAYS)
  @UniqueItems()
  @Description("Weekdays the layer applies on (a window belongs to the day it starts); every day when absent")
  weekdays?: string[];
  @CollectionOf(TimeWindowModel)
  @MaxItems(12)
  @Description("Times of day the layer applies; the whole day when absent")
  windows?: TimeWindowModel[];
}

@AdditionalProperties(false)
export class ShiftOfDayModel {
  @Required() @MinLength(1) @MaxLength(64) name: string;
  @Required()
  @Pattern(/^([01]\d|2[0-3]):[0-5]\d$/)
  @Description("HH:MM; the shift runs until the next shift of the day starts")
  starts: string;
}

@AdditionalProperties(false)
export class CrewModel {
  @Required() @MinLength(1) @MaxLength(64) @Description("The name the cycle uses") name: string;
  @Required() @Format("uuid") @Description("Recipient or group on call for the crew's shifts") target: string;
}

/**
 * One layer: a rotation (members, a shift length, starts_at, restrictions) or a shift pattern
 * (shifts, crews, cycle, starts_on). Fields of the other kind are refused.
 */
@AdditionalProperties(false)
export class ScheduleLayerModel {
  @Required() @Enum(...LAYER_TYPES) type: string;
  @MinLength(1) @MaxLength(128) name?: string;
  @CollectionOf(String)
  @Format("uuid")
  @MaxItems(100)
  @Description("Rotation: recipient uuids, in turn order")
  members?: string[];
  @Integer()
  @Min(1)
  @Max(8784)
  @Description("Rotation: shift length in hours of the zone's wall clock (give one of the three lengths)")
  shift_length_hours?: number;
  @Integer() @Min(1) @Max(366) @Description("Rotation: shift length in days") shift_length_days?: number;
  @Integer() @Min(1) @Max(52) @Description("Rotation: shift length in weeks") shift_length_weeks?: number;
  @Format("date-time")
  @Description("Rotation: the first hand-off; later ones follow at the same wall time")
  starts_at?: string;
  @Description("Rotation: when the layer applies") restrictions?: LayerRestrictionsModel;
  @CollectionOf(ShiftOfDayModel)
  @MaxItems(MAX_SHIFTS_A_DAY)
  @Description("Shift pattern: the shifts of a day, in the order they start")
  shifts?: ShiftOfDayModel[];
  @CollectionOf(CrewModel) @MaxItems(50) @Description("Shift pattern: the crews") crews?: CrewModel[];
  @Schema(
    array()
      .items(array().items(string().maxLength(64).nullable()).maxItems(MAX_SHIFTS_A_DAY))
      .maxItems(MAX_CYCLE_DAYS)
  )
  @Description(
    "Shift pattern: one entry per day of the cycle, naming the crew (or null for nobody) on each shift of that day; day 0 is starts_on, and the cycle repeats"
  )
  cycle?: (string | null)[][];
  @Pattern(/^\d{4}-\d{2}-\d{2}$/) @Description("Shift pattern: day 0 of the cycle, a local date") starts_on?: string;
}

/** The writable fields of a schedule: the body of POST, and what a merge patch must produce. */
@AdditionalProperties(false)
export class ScheduleInputModel {
  @Required() @MinLength(1) @MaxLength(128) name: string;
  @Required() @MinLength(1) @MaxLength(64) @Description("IANA time zone shifts are read in") timezone: string;
  @Required()
  @CollectionOf(ScheduleLayerModel)
  @MinItems(1)
  @MaxItems(10)
  @Description("Layers; a later layer wins where it has someone on call")
  layers: ScheduleLayerModel[];
  @Nullable(String)
  @Format("uuid")
  @Description("Recipient or group paged when nobody is on call; required (null or missing is refused with 400)")
  fallback?: string | null;
  @Description(
    'When a shift begins, tell whoever it puts on call through their first usable channel ("You are on call for Line 3 until 14:00"); false when absent'
  )
  handoff_notice?: boolean;
}

export class ScheduleOverrideModel {
  @Required() id: string;
  @Required() @Format("uuid") recipient_uuid: string;
  @Required() @Format("date-time") starts_at: string;
  @Required() @Format("date-time") ends_at: string;
  @Format("date-time") created_at?: string;
}

export class ScheduleOverrideListModel {
  @Required() @CollectionOf(ScheduleOverrideModel) items: ScheduleOverrideModel[];
}

@AdditionalProperties(false)
export class ScheduleOverrideInputModel {
  @Required() @Format("uuid") @Description("Who is on call instead") recipient_uuid: string;
  @Required() @Format("date-time") starts_at: string;
  @Required() @Format("date-time") @Description("Later than starts_at") ends_at: string;
}

export class ScheduleModel {
  @Required() @Format("uuid") uuid: string;
  @Required() name: string;
  @Required() timezone: string;
  @Required() @CollectionOf(ScheduleLayerModel) layers: ScheduleLayerModel[];
  @Required() @CollectionOf(ScheduleOverrideModel) overrides: ScheduleOverrideModel[];
  @Required() @Nullable(String) @Format("uuid") fallback: string | null;
  @Required() handoff_notice: boolean;
  @Required()
  @Description("Key-less iCal (RFC 5545) feed of the final shifts, to subscribe to from a calendar")
  ical_url: string;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class SchedulePageModel {
  @Required() @CollectionOf(ScheduleModel) items: ScheduleModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

export class RecipientFeedModel {
  @Required()
  @Nullable(String)
  @Description("Key-less iCal feed of the recipient's shifts in every schedule; null until made with ical-token/rotate")
  ical_url: string | null;
}

export class NamedRecipientModel {
  @Required() @Format("uuid") uuid: string;
  @Required() name: string;
}

export class ShiftTargetModel {
  @Required() @Format("uuid") uuid: string;
  @Required() @Enum("recipient", "group") kind: string;
  @Required() name: string;
}

export class ShiftModel {
  @Required() @Format("date-time") starts_at: string;
  @Required() @Format("date-time") ends_at: string;
  @Required() target: ShiftTargetModel;
  @Required()
  @CollectionOf(NamedRecipientModel)
  @Description("The recipients it pages")
  recipients: NamedRecipientModel[];
  @Required() @Enum("rotation", "shift_pattern", "override") source: string;
  @Required() @Nullable(Number) @Description("Index of the layer; null for an override") layer: number | null;
  @Required() @Nullable(String) layer_name: string | null;
  @Required() @Nullable(String) @Description("The shift of the day (shift patterns)") shift_name: string | null;
  @Required() @Nullable(String) @Description("The crew (shift patterns)") crew: string | null;
  @Required() @Nullable(String) override_id: string | null;
}

export class OnCallModel {
  @Required() @Format("date-time") at: string;
  @Required()
  @CollectionOf(NamedRecipientModel)
  @Description("Who is paged at that instant: the shift's recipients, or during a gap the fallback's")
  recipients: NamedRecipientModel[];
  @Required()
  @Nullable(ShiftModel)
  @Description("The final shift that puts them on call; null during a gap")
  shift: ShiftModel | null;
  @Required()
  @Nullable(ShiftTargetModel)
  @Description("During a gap, the fallback paged instead")
  fallback: ShiftTargetModel | null;
}

export class GapModel {
  @Required() @Format("date-time") starts_at: string;
  @Required() @Format("date-time") ends_at: string;
}

export class ShiftsModel {
  @Required() @CollectionOf(ShiftModel) shifts: ShiftModel[];
  @Required() @CollectionOf(GapModel) @Description("Where nobody is on call (the fallback is paged)") gaps: GapModel[];
}
