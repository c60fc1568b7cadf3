import {levelOf, nextInTurn, stepWaitSeconds} from "../../domain/escalation/index.js";
import type {AttemptRecord, EscalationRecord} from "../../domain/notification.js";
import type {PolicySnapshot} from "../../domain/policy.js";

/** One level of a policy in the long form: its targets as frozen, and whom it paged (each person once, first page). */
export interface LevelProgressView {
  number: number;
  targets: Array<{uuid: string; kind: string; name: string; on_call?: string | null}>;
  paged: Array<{recipient_uuid: string; name: string; channel: string; at: string; run: number}>;
}

/** Where an alert sent to an escalation policy stands: the level it is on, each level's pages, when the next level starts. */
export interface PolicyProgressView {
  uuid: string;
  name: string;
  /** The level (from 1) of the step carried most recently; null before the first. */
  level: number | null;
  /** The run (from 1) it is in: a policy with `repeat` runs its levels again. */
  run: number | null;
  runs: number;
  /** When the next level starts, as stored now; null when the chain does not run or this is the last level of the last run. */
  next_level_at: string | null;
  levels: LevelProgressView[];
}

const REACHED_A_DRIVER = (attempt: AttemptRecord) => attempt.outcome !== "skipped" && attempt.outcome !== "deferred";

/** The policy part of a notification's long form, from its frozen policy, its chain and its attempts. */
export function policyProgress(
  policy: PolicySnapshot,
  chain: EscalationRecord | null,
  attempts: AttemptRecord[]
): PolicyProgressView | null {
  if (!policy.levels) return null;
  const names = new Map(policy.members.map((member) => [member.recipient_uuid, member.name]));
  const current = chain?.progress.current ?? null;
  const at = current === null ? null : levelOf(policy, current);
  const levels = policy.levels.map((level, index) => {
    const paged = new Map<string, LevelProgressView["paged"][number]>();
    for (const attempt of attempts.filter(REACHED_A_DRIVER)) {
      const position = levelOf(policy, attempt.step);
      if (position?.level !== index || paged.has(attempt.recipient_uuid)) continue;
      paged.set(attempt.recipient_uuid, {
        recipient_uuid: attempt.recipient_uuid,
        name: names.get(attempt.recipient_uuid) ?? attempt.recipient_uuid,
        channel: attempt.channel,
        at: attempt.started_at,
        run: position.run + 1
      });
    }
    const targets = level.targets.map(({recipients: _recipients, ...target}) => target);
    return {number: index + 1, targets, paged: [...paged.values()]};
  });
  return {
    uuid: policy.target.uuid,
    name: policy.target.name,
    level: at === null ? null : at.level + 1,
    run: at === null ? null : at.run + 1,
    runs: 1 + (policy.repeat ?? 0),
    next_level_at: nextLevelAt(policy, chain),
    levels
  };
}

/**
 * The next wake-up, when it starts another level; else that wake-up plus the waits of the
 * current level's steps still to go. Null when nothing is scheduled or no level follows.
 */
function nextLevelAt(policy: PolicySnapshot, chain: EscalationRecord | null): string | null {
  if (!chain || chain.state !== "running" || chain.next_step_at === null) return null;
  const next = nextInTurn(chain);
  const nextAt = Date.parse(chain.next_step_at);
  const current = chain.progress.current === null ? null : levelOf(policy, chain.progress.current);
  if (next === null) return null;
  const position = levelOf(policy, next);
  if (current === null || position === null || position.ordinal !== current.ordinal)
    return position === null ? null : chain.next_step_at;
  let waitMs = 0;
  let step = next;
  for (; levelOf(policy, step)?.ordinal === current.ordinal; step += 1)
    waitMs += (stepWaitSeconds(policy, step) ?? 0) * 1000;
  return levelOf(policy, step) === null ? null : new Date(nextAt + waitMs).toISOString();
}
