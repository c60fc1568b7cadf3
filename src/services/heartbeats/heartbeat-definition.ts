import {cronProblem} from "../../domain/cron.js";
import type {HeartbeatDefinition} from "../../domain/heartbeat.js";
import {applyMergePatch} from "../../domain/merge-patch.js";
import {isValidTimeZone} from "../../domain/recipient.js";
import type {Priority} from "../../domain/vocabulary.js";
import {refuseReadOnlyFields, type FieldError} from "../shared/errors.js";

/** The fields a client may write (name only at creation). */
export interface HeartbeatInput {
  period_seconds?: number;
  schedule?: string;
  timezone?: string;
  grace_seconds?: number;
  target: string;
  priority?: Priority;
}

/** What a definition keeps across edits: its URL token, who made it, and when. */
export type HeartbeatOrigin = Pick<HeartbeatDefinition, "ping_token" | "created_by_integration" | "created_at">;

export const WRITABLE: (keyof HeartbeatInput)[] = [
  "period_seconds",
  "schedule",
  "timezone",
  "grace_seconds",
  "target",
  "priority"
];
export const DEFAULT_GRACE_SECONDS = 60;

/** What is wrong with an input beyond its schema: a period or a schedule, and a schedule's zone. */
export function inputProblems(input: HeartbeatInput, nowMs: number): FieldError[] {
  const errors: FieldError[] = [];
  const hasPeriod = input.period_seconds !== undefined;
  const hasSchedule = input.schedule !== undefined;
  if (hasPeriod === hasSchedule)
    errors.push({
      pointer: "/period_seconds",
      detail: "give either period_seconds or schedule (with timezone), not both and not neither"
    });
  if (hasSchedule && input.timezone === undefined)
    errors.push({
      pointer: "/timezone",
      detail: "a cron schedule needs a timezone (an IANA zone such as Europe/Berlin)"
    });
  if (!hasSchedule && input.timezone !== undefined)
    errors.push({pointer: "/timezone", detail: "timezone only applies to a cron schedule"});
  if (input.timezone !== undefined && !isValidTimeZone(input.timezone))
    errors.push({pointer: "/timezone", detail: `"${input.timezone}" is not an IANA time zone`});
  else if (input.schedule !== undefined && input.timezone !== undefined) {
    const problem = cronProblem(input.schedule, input.timezone, nowMs);
    if (problem) errors.push({pointer: "/schedule", detail: problem});
  }
  return errors;
}

/** The stored definition for an input, with the defaults filled in. */
export function definitionFrom(
  name: string,
  input: HeartbeatInput,
  origin: HeartbeatOrigin,
  nowIso: string
): HeartbeatDefinition {
  return {
    name,
    period_seconds: input.period_seconds ?? null,
    schedule: input.schedule ?? null,
    timezone: input.timezone ?? null,
    grace_seconds: input.grace_seconds ?? DEFAULT_GRACE_SECONDS,
    target: input.target,
    priority: input.priority ?? "high",
    ...origin,
    updated_at: nowIso
  };
}

/** The document a merge patch makes of a definition's writable fields (read-only fields refused). */
export function patchedInput(current: HeartbeatDefinition, patch: Record<string, unknown>): HeartbeatInput {
  refuseReadOnlyFields(patch, WRITABLE);
  const writable = Object.fromEntries(
    WRITABLE.filter((field) => current[field] !== null).map((field) => [field, current[field]])
  );
  return applyMergePatch(writable, patch) as HeartbeatInput;
}

/** The fields an edit changed, for the audit record. */
export function changedFields(before: HeartbeatDefinition, after: HeartbeatDefinition): (keyof HeartbeatInput)[] {
  return WRITABLE.filter((field) => before[field] !== after[field]);
}
