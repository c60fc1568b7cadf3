/** The pure escalation planner: steps of a policy snapshot, quiet hours, and the reducer. */
export {advance, levelStarting, nextInTurn, startEscalation} from "./escalation-planner.js";
export type {
  EscalationContext,
  EscalationEffect,
  EscalationEvent,
  EscalationState,
  EscalationTransition
} from "./escalation-planner.js";
export {
  countSteps,
  firstStepOfLevel,
  levelOf,
  memberChainLength,
  planStep,
  stepSlots,
  stepWaitSeconds
} from "./escalation-steps.js";
export type {LevelPosition, StepContact, StepSlot} from "./escalation-steps.js";
export {quietHoursEnd} from "./quiet-hours.js";
