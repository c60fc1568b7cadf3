/** The pure escalation planner: steps of a policy snapshot, quiet hours, and the reducer. */
export {advance, startEscalation} from "./escalation-planner.js";
export type {
  EscalationContext,
  EscalationEffect,
  EscalationEvent,
  EscalationState,
  EscalationTransition
} from "./escalation-planner.js";
export {countSteps, memberChainLength, planStep, stepSlots} from "./escalation-steps.js";
export type {StepContact, StepSlot} from "./escalation-steps.js";
export {quietHoursEnd} from "./quiet-hours.js";
