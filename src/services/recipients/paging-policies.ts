import type {PolicySnapshot} from "../../domain/policy.js";
import {levelAtStart, snapshotTarget, type SendTarget} from "../../domain/policy-levels.js";
import type {EscalationRecord} from "../../domain/notification.js";
import type {BoxChannels} from "../../domain/plan-coverage.js";
import {countSteps} from "../../domain/escalation/index.js";
import type {Priority} from "../../domain/vocabulary.js";
import type {Clock} from "../../lib/clock.js";
import {pagedTarget, resolveLevelTarget, resolveTarget, type TargetDirectory} from "./paging-target.js";

/** What the paging policies are read from, by name. */
export interface PagingPoliciesDeps {
  targets: TargetDirectory;
  clock: Clock;
  /** Which channels this box has configured: a snapshot leaves out the others. */
  box: BoxChannels;
}

/**
 * The policy an alert pages under, as the configuration has it: frozen into a snapshot when the
 * alert is accepted, raised or released, and asked again while its chain runs (a schedule's
 * hand-off). Both the notifications service and the escalation runner read policies here, so
 * neither has to ask the other.
 */
export class PagingPolicies {
  constructor(private readonly deps: PagingPoliciesDeps) {}

  /** The target a send names, now; an unknown uuid is refused at `/recipient_uuid`. */
  targetOf(uuid: string): SendTarget {
    return resolveTarget(uuid, this.deps.targets, "/recipient_uuid", this.deps.clock.now());
  }

  /** The policy of the recipient, group, schedule or escalation policy `uuid` names, as configured at `nowMs`. */
  current(uuid: string, priority: Priority, nowMs: number): PolicySnapshot {
    return this.snapshot(resolveTarget(uuid, this.deps.targets, "", nowMs), priority, nowMs);
  }

  /** A snapshot leaves out the channels this box has not configured: they would block the chain for nothing. */
  snapshot(target: SendTarget, priority: Priority, nowMs: number): PolicySnapshot {
    return snapshotTarget(target, priority, {now: nowMs, box: this.deps.box});
  }

  /**
   * For an escalation policy's chain whose next wake-up starts a level: the policy with that
   * level's schedules taken at `nowMs` (`levelAtStart`), so it pages whoever is on call when the
   * level starts; null when nothing changes, and for every other chain.
   */
  levelResolved(
    policy: PolicySnapshot,
    chain: Pick<EscalationRecord, "progress" | "steps_total">,
    nowMs: number
  ): PolicySnapshot | null {
    const {targets} = this.deps;
    return levelAtStart(policy, chain, (uuid) =>
      targets.schedules.get(uuid)
        ? this.snapshot(resolveLevelTarget(uuid, targets, "", nowMs), policy.priority, nowMs)
        : null
    );
  }

  /**
   * For a chain paging a schedule, the policy of whoever is on call at `nowMs` when that is no
   * longer whom `policy` pages (a hand-off, a gap and its fallback, or a low alert moving to the
   * fallback for quiet hours); null otherwise, and for recipients and groups, whose snapshot stands.
   */
  handOff(policy: PolicySnapshot, nowMs: number): PolicySnapshot | null {
    if (policy.target.kind !== "schedule") return countSteps(policy) === 0 ? this.mended(policy, nowMs) : null;
    if (!this.deps.targets.schedules.get(policy.target.uuid)) return null;
    const now = this.current(policy.target.uuid, policy.priority, nowMs);
    return now.on_call === policy.on_call ? null : now;
  }

  /**
   * An alert whose plan had no channel (it waits, undeliverable) takes its recipient's or group's
   * settings as they are now once they give it a channel: the fix of the configuration pages.
   */
  private mended(policy: PolicySnapshot, nowMs: number): PolicySnapshot | null {
    const paged = pagedTarget(policy.target.uuid, this.deps.targets);
    if (!paged) return null;
    const now = this.snapshot(paged, policy.priority, nowMs);
    return countSteps(now) > 0 ? now : null;
  }
}
