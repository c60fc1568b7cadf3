import {listAll} from "./api.js";

/** Recipients, groups, schedules and escalation policies by uuid, so pages can show names where the API gives uuids. */
export async function loadTargets() {
  const [recipients, groups, schedules, policies] = await Promise.all([
    listAll("/api/v1/recipients"),
    listAll("/api/v1/groups"),
    listAll("/api/v1/schedules"),
    listAll("/api/v1/escalation-policies")
  ]);
  const names = new Map();
  for (const recipient of recipients) names.set(recipient.uuid, recipient.name);
  for (const group of groups) names.set(group.uuid, `${group.name} (group)`);
  for (const schedule of schedules) names.set(schedule.uuid, `${schedule.name} (schedule)`);
  for (const policy of policies) names.set(policy.uuid, `${policy.name} (policy)`);
  return {recipients, groups, schedules, policies, nameOf: (uuid) => names.get(uuid) ?? uuid};
}

/** Options for a <select> of a schedule's own members, crews and fallback: recipients, then groups (no schedules). */
export function targetOptions(targets) {
  return [
    ...targets.recipients.map((recipient) => [recipient.uuid, recipient.name]),
    ...targets.groups.map((group) => [group.uuid, `${group.name} (group)`])
  ];
}

/** Options for a policy level: recipients, groups, then schedules (never a policy: policies cannot nest). */
export function levelTargetOptions(targets) {
  return [
    ...targetOptions(targets),
    ...targets.schedules.map((schedule) => [schedule.uuid, `${schedule.name} (schedule)`])
  ];
}

/** Options for what an alert, heartbeat or integration pages, or a filter by it: recipients, groups, schedules, then policies. */
export function pagedTargetOptions(targets) {
  return [
    ...levelTargetOptions(targets),
    ...targets.policies.map((policy) => [policy.uuid, `${policy.name} (policy)`])
  ];
}
