import type {PagedTarget, Target} from "../../domain/policy.js";
import {onCallAt} from "../../domain/schedules/on-call.js";
import type {GroupsRepository, RecipientsRepository, SchedulesRepository} from "../../store/config/repositories.js";
import {unknownReference} from "../shared/errors.js";

/** Where recipients, groups and schedules are looked up. */
export interface TargetDirectory {
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  schedules: SchedulesRepository;
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
 * The recipient, group or schedule a uuid names: what an alert pages, and what a heartbeat or an
 * integration will page. A schedule comes with whoever is on call at `at`, or its fallback in a
 * gap. A uuid naming none is refused as unknown_reference, pointing at the field it came in
 * (`pointer`).
 */
export function resolveTarget(uuid: string, directory: TargetDirectory, pointer: string, at: number): Target {
  const paged = pagedTarget(uuid, directory);
  if (paged) return paged;
  const schedule = directory.schedules.get(uuid);
  if (!schedule) throw unknownReference(pointer, `no recipient, group or schedule has the uuid ${uuid}`);
  const onCall = onCallAt(schedule, at)?.target ?? schedule.fallback;
  return {
    kind: "schedule",
    schedule: {uuid, name: schedule.name},
    onCall: onCall === null ? null : pagedTarget(onCall, directory)
  };
}
