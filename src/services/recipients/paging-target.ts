import type {PagedTarget, Target} from "../../domain/policy.js";
import {onCallAt} from "../../domain/schedules/on-call.js";
import type {SendTarget} from "../../domain/policy-levels.js";
import type {
  EscalationPoliciesRepository,
  GroupsRepository,
  RecipientsRepository,
  SchedulesRepository
} from "../../store/config/repositories.js";
import {ANY_BOX, planWarnings, priorityGaps, type BoxChannels, type PlanWarning} from "../../domain/plan-coverage.js";
import {unknownReference, type FieldError} from "../shared/errors.js";

/** Where recipients, groups, schedules and escalation policies are looked up. */
export interface TargetDirectory {
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  schedules: SchedulesRepository;
  policies: EscalationPoliciesRepository;
}

/** The recipient or group a uuid names, or null. A group's members that no longer exist are left out. */
export function pagedTarget(
  uuid: string,
  directory: Pick<TargetDirectory, "recipients" | "groups">
): PagedTarget | null {
  const recipient = directory.recipients.get(uuid);
  if (recipient) return {kind: "recipient", recipient};
  const group = directory.groups.get(uuid);
  if (!group) return null;
  const members = group.members.map((member) => directory.recipients.get(member)).filter((member) => member !== null);
  return {kind: "group", group, members};
}

/**
 * The recipient, group, schedule or escalation policy a uuid names: what an alert pages, and what
 * a heartbeat or an integration will page. A schedule comes with whoever is on call at `at`, or
 * its fallback in a gap; a policy with each level's targets so resolved. A uuid naming none is
 * refused as unknown_reference, pointing at the field it came in (`pointer`).
 */
export function resolveTarget(uuid: string, directory: TargetDirectory, pointer: string, at: number): SendTarget {
  const policy = directory.policies.get(uuid);
  if (!policy) return resolveLevelTarget(uuid, directory, pointer, at);
  return {
    kind: "policy",
    policy: {uuid, name: policy.name, repeat: policy.repeat},
    levels: policy.levels.map((level) => ({
      escalate_after_minutes: level.escalate_after_minutes,
      targets: level.targets.map((target) => resolveLevelTarget(target, directory, pointer, at))
    }))
  };
}

/** A recipient, group or schedule (what a policy's level may name), resolved as `resolveTarget` does. */
export function resolveLevelTarget(uuid: string, directory: TargetDirectory, pointer: string, at: number): Target {
  const paged = pagedTarget(uuid, directory);
  if (paged) return paged;
  const schedule = directory.schedules.get(uuid);
  if (!schedule)
    throw unknownReference(pointer, `no recipient, group, schedule or escalation policy has the uuid ${uuid}`);
  const onCall = onCallAt(schedule, at)?.target ?? schedule.fallback;
  return {
    kind: "schedule",
    schedule: {uuid, name: schedule.name, timezone: schedule.timezone},
    onCall: onCall === null ? null : pagedTarget(onCall, directory),
    fallback: schedule.fallback === null ? null : pagedTarget(schedule.fallback, directory)
  };
}

/**
 * Why a recipient or group would page some priority on no channel, judged on the recipients' own
 * settings, as errors at `pointer`: a group or schedule may not name such a target (a recipient
 * written before the rule, or edited in the config store by hand).
 */
export function priorityGapErrors(
  uuid: string,
  directory: Pick<TargetDirectory, "recipients" | "groups">,
  pointer: string
): FieldError[] {
  const paged = pagedTarget(uuid, directory);
  const recipients = paged === null ? [] : paged.kind === "recipient" ? [paged.recipient] : paged.members;
  return recipients.flatMap((recipient) =>
    priorityGaps(recipient, ANY_BOX).map((gap) => ({pointer, detail: `recipient ${recipient.name}: ${gap.reason}`}))
  );
}

/** What the configured recipients and groups will not do on a box that can do `box` (see PlanWarning). */
export function configurationWarnings(
  directory: Pick<TargetDirectory, "recipients" | "groups">,
  box: BoxChannels
): PlanWarning[] {
  const groups = directory.groups.all().map((group) => {
    const paged = pagedTarget(group.uuid, directory);
    return {group, members: paged?.kind === "group" ? paged.members : []};
  });
  return planWarnings(directory.recipients.all(), groups, box);
}
