import {randomUUID} from "node:crypto";
import type {Group} from "../../domain/recipient.js";
import {applyMergePatch} from "../../domain/merge-patch.js";
import type {GroupsRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {Actor} from "../../domain/actor.js";
import type {AuditService} from "../shared/audit.service.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {
  AppError,
  notFound,
  pageOrInvalidCursor,
  priorityWithoutChannel,
  refuseReadOnlyFields
} from "../shared/errors.js";
import {priorityGapErrors} from "./paging-target.js";
import {refuseIfOpenNotifications, type PagingReferences} from "./paging-references.js";

export type GroupInput = Partial<Pick<Group, "name" | "members" | "strategy">>;
const WRITABLE: (keyof GroupInput)[] = ["name", "members", "strategy"];

/** What GroupsService works with, by name. */
export interface GroupsDeps {
  groups: GroupsRepository;
  recipients: RecipientsRepository;
  notifications: NotificationsRepository;
  audit: AuditService;
  clock: Clock;
  pagingReferences: PagingReferences;
}

/** Recipient groups: members paged one after another or all at once. */
export class GroupsService {
  constructor(private readonly deps: GroupsDeps) {}

  get(uuid: string): Group {
    const group = this.deps.groups.get(uuid);
    if (!group) throw notFound("group", uuid);
    return group;
  }

  list(limit: number, cursor: string | null): {items: Group[]; next: string | null} {
    return pageOrInvalidCursor(this.deps.groups.page(limit, cursor), "group");
  }

  private normalise(input: GroupInput, uuid: string, createdAt: string, nowIso: string): Group {
    const members = input.members ?? [];
    const unknown = members
      .map((member, index) => ({member, index}))
      .filter(({member}) => !this.deps.recipients.get(member));
    if (unknown.length) {
      throw new AppError("unknown_reference", `unknown recipient(s): ${unknown.map(({member}) => member).join(", ")}`, {
        errors: unknown.map(({member, index}) => ({
          pointer: `/members/${index}`,
          detail: `recipient ${member} does not exist`
        }))
      });
    }
    const directory = {recipients: this.deps.recipients, groups: this.deps.groups};
    const gaps = members.flatMap((member, index) => priorityGapErrors(member, directory, `/members/${index}`));
    if (gaps.length) throw priorityWithoutChannel(gaps);
    return {
      uuid,
      name: input.name as string,
      members,
      strategy: input.strategy ?? "sequential",
      created_at: createdAt,
      updated_at: nowIso
    };
  }

  async create(input: GroupInput, actor: Actor): Promise<Group> {
    const now = isoTimestamp(this.deps.clock.now());
    const group = this.normalise(input, randomUUID(), now, now);
    await this.deps.groups.insert(group);
    await this.deps.audit.record(
      actor,
      "group.created",
      {type: "group", id: group.uuid},
      {name: group.name, members: group.members}
    );
    return group;
  }

  patched(uuid: string, patch: Record<string, unknown>): GroupInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const group = this.get(uuid);
    return applyMergePatch({name: group.name, members: group.members, strategy: group.strategy}, patch) as GroupInput;
  }

  async replace(uuid: string, input: GroupInput, actor: Actor): Promise<Group> {
    const current = this.get(uuid);
    const updated = this.normalise(input, uuid, current.created_at, isoTimestamp(this.deps.clock.now()));
    if (!(await this.deps.groups.replace(updated))) throw notFound("group", uuid);
    await this.deps.audit.record(
      actor,
      "group.updated",
      {type: "group", id: uuid},
      {name: updated.name, members: updated.members, strategy: updated.strategy}
    );
    return updated;
  }

  async remove(uuid: string, actor: Actor): Promise<void> {
    const group = this.get(uuid);
    this.deps.pagingReferences.refuseIfPaged("group", uuid);
    refuseIfOpenNotifications(this.deps.notifications, "group", uuid);
    await this.deps.groups.remove(uuid);
    await this.deps.audit.record(actor, "group.deleted", {type: "group", id: uuid}, {name: group.name});
  }
}
