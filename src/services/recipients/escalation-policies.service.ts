import {randomUUID} from "node:crypto";
import type {Actor} from "../../domain/actor.js";
import {applyMergePatch} from "../../domain/merge-patch.js";
import type {EscalationPolicy, PolicyLevel} from "../../domain/policy-levels.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
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
import {pagedTarget, priorityGapErrors, type TargetDirectory} from "./paging-target.js";

/** A policy as a client writes it: the last level's `escalate_after_minutes` may be left out. */
export interface PolicyInput {
  name?: string;
  repeat?: number;
  levels?: Array<{targets: string[]; escalate_after_minutes?: number | null}>;
}
const WRITABLE: (keyof PolicyInput)[] = ["name", "repeat", "levels"];

export interface EscalationPoliciesDependencies {
  directory: TargetDirectory;
  notifications: NotificationsRepository;
  audit: AuditService;
  clock: Clock;
  pagingReferences: PagingReferences;
}

/**
 * Escalation policies: ordered levels of recipients, groups and schedules, a delay before each
 * next level, and how often the whole policy runs again (docs/escalation-policies.md). A level
 * may not name a policy, its own or another, so a policy can never loop.
 */
export class EscalationPoliciesService {
  constructor(private readonly deps: EscalationPoliciesDependencies) {}

  get(uuid: string): EscalationPolicy {
    const policy = this.deps.directory.policies.get(uuid);
    if (!policy) throw notFound("escalation policy", uuid);
    return policy;
  }

  list(limit: number, cursor: string | null): {items: EscalationPolicy[]; next: string | null} {
    return pageOrInvalidCursor(this.deps.directory.policies.page(limit, cursor), "escalation policy");
  }

  async create(input: PolicyInput, actor: Actor): Promise<EscalationPolicy> {
    const now = isoTimestamp(this.deps.clock.now());
    const policy = this.normalise(input, randomUUID(), now, now);
    await this.deps.directory.policies.insert(policy);
    await this.audit(actor, "escalation_policy.created", policy);
    return policy;
  }

  patched(uuid: string, patch: Record<string, unknown>): PolicyInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const {name, repeat, levels} = this.get(uuid);
    return applyMergePatch({name, repeat, levels}, patch) as PolicyInput;
  }

  /** Alerts already paging under the policy keep the levels frozen when they were accepted. */
  async replace(uuid: string, input: PolicyInput, actor: Actor): Promise<EscalationPolicy> {
    const current = this.get(uuid);
    const updated = this.normalise(input, uuid, current.created_at, isoTimestamp(this.deps.clock.now()));
    if (!(await this.deps.directory.policies.replace(updated))) throw notFound("escalation policy", uuid);
    await this.audit(actor, "escalation_policy.updated", updated);
    return updated;
  }

  async remove(uuid: string, actor: Actor): Promise<void> {
    const policy = this.get(uuid);
    this.deps.pagingReferences.refuseIfPaged("escalation policy", uuid);
    refuseIfOpenNotifications(this.deps.notifications, "escalation policy", uuid);
    await this.deps.directory.policies.remove(uuid);
    await this.deps.audit.record(
      actor,
      "escalation_policy.deleted",
      {type: "escalation_policy", id: uuid},
      {name: policy.name}
    );
  }

  private audit(actor: Actor, action: string, policy: EscalationPolicy): Promise<void> {
    return this.deps.audit.record(
      actor,
      action,
      {type: "escalation_policy", id: policy.uuid},
      {name: policy.name, repeat: policy.repeat, levels: policy.levels}
    );
  }

  private normalise(input: PolicyInput, uuid: string, createdAt: string, nowIso: string): EscalationPolicy {
    const levels: PolicyLevel[] = (input.levels ?? []).map((level) => ({
      targets: level.targets,
      escalate_after_minutes: level.escalate_after_minutes ?? null
    }));
    const shape = shapeErrors(levels);
    if (shape.length) throw invalid(shape);
    const unknown = this.unknownTargets(levels, uuid);
    if (unknown.length)
      throw new AppError("unknown_reference", unknown.map((error) => error.detail).join("; "), {errors: unknown});
    const gaps = levels.flatMap((level, index) =>
      level.targets.flatMap((target, at) =>
        priorityGapErrors(target, this.deps.directory, `/levels/${index}/targets/${at}`)
      )
    );
    if (gaps.length) throw priorityWithoutChannel(gaps);
    return {
      uuid,
      name: input.name as string,
      repeat: input.repeat ?? 0,
      levels,
      created_at: createdAt,
      updated_at: nowIso
    };
  }

  /** Targets that are no recipient, group or schedule; a policy (this one or another) is named as such. */
  private unknownTargets(levels: PolicyLevel[], uuid: string): FieldError[] {
    const {directory} = this.deps;
    return levels.flatMap((level, index) =>
      level.targets.flatMap((target, at) => {
        const pointer = `/levels/${index}/targets/${at}`;
        if (target === uuid)
          return [{pointer, detail: `a level cannot page the policy itself (${target}): that would loop`}];
        const policy = directory.policies.get(target);
        if (policy)
          return [
            {
              pointer,
              detail: `${target} is the escalation policy ${policy.name}: a level pages recipients, groups and schedules, never a policy, so policies cannot loop`
            }
          ];
        if (pagedTarget(target, directory) || directory.schedules.get(target)) return [];
        return [{pointer, detail: `no recipient, group or schedule has the uuid ${target}`}];
      })
    );
  }
}

/** Levels the schema lets through but a policy cannot run: none, an empty one, a target twice, a level with no delay before the next. */
function shapeErrors(levels: PolicyLevel[]): FieldError[] {
  if (levels.length === 0) return [{pointer: "/levels", detail: "a policy needs at least one level"}];
  return levels.flatMap((level, index): FieldError[] => {
    const pointer = `/levels/${index}`;
    if (level.targets.length === 0)
      return [{pointer: `${pointer}/targets`, detail: "a level needs at least one target"}];
    const twice = level.targets.filter((target, at) => level.targets.indexOf(target) !== at);
    if (twice.length) return [{pointer: `${pointer}/targets`, detail: `names ${twice.join(", ")} twice`}];
    if (level.escalate_after_minutes === null && index < levels.length - 1)
      return [
        {
          pointer: `${pointer}/escalate_after_minutes`,
          detail: "every level but the last needs the minutes before the next level starts"
        }
      ];
    return [];
  });
}
