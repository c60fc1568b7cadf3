import {listAll} from "./api.js";

/** Recipients and groups by uuid, so pages can show names where the API gives uuids. */
export async function loadTargets() {
  const [recipients, groups] = await Promise.all([listAll("/api/v1/recipients"), listAll("/api/v1/groups")]);
  const names = new Map();
  for (const recipient of recipients) names.set(recipient.uuid, recipient.name);
  for (const group of groups) names.set(group.uuid, `${group.name} (group)`);
  return {recipients, groups, nameOf: (uuid) => names.get(uuid) ?? uuid};
}

/** Options for a <select> of paging targets: recipients, then groups. */
export function targetOptions(targets) {
  return [
    ...targets.recipients.map((recipient) => [recipient.uuid, recipient.name]),
    ...targets.groups.map((group) => [group.uuid, `${group.name} (group)`])
  ];
}
