import type {Target} from "../../domain/policy.js";
import type {GroupsRepository, RecipientsRepository} from "../../store/config/repositories.js";
import {unknownReference} from "../shared/errors.js";

/** Where recipients and groups are looked up. */
export interface TargetDirectory {
  recipients: RecipientsRepository;
  groups: GroupsRepository;
}

/**
 * The recipient or group a uuid names: what an alert pages, and what a heartbeat or an
 * integration will page. A uuid naming neither is refused as unknown_reference, pointing at the
 * field it came in (`pointer`). A group's members that no longer exist are left out.
 */
export function resolveTarget(uuid: string, directory: TargetDirectory, pointer: string): Target {
  const recipient = directory.recipients.get(uuid);
  if (recipient) return {kind: "recipient", recipient};
  const group = directory.groups.get(uuid);
  if (!group) throw unknownReference(pointer, `no recipient or group has the uuid ${uuid}`);
  const members = group.members.map((member) => directory.recipients.get(member)).filter((member) => member !== null);
  return {kind: "group", group, members};
}
