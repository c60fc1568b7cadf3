import {
  acknowledgeCondition,
  AttributeIds,
  constructEventFilter,
  type ClientSession,
  type ClientSubscription,
  type LocalizedText,
  type NodeId,
  ObjectIds,
  ObjectTypeIds,
  StatusCodes,
  TimestampsToReturn,
  type Variant
} from "node-opcua-client";
import type {DeviceAlarm} from "../plc/plc-link.js";
import {statusInWords} from "./opcua-words.js";

// The condition fields asked of every event, in this order (OPC UA Part 9; "ConditionId" is the
// condition's own node id, which the filter library selects specially).
const FIELDS = [
  "EventId",
  "ConditionId",
  "EventType",
  "SourceName",
  "Message",
  "Severity",
  "Time",
  "ActiveState.Id",
  "AckedState.Id",
  "Retain",
  "ClientUserId",
  "Comment"
] as const;
type Field = (typeof FIELDS)[number];

const REFRESH_START = ObjectTypeIds.RefreshStartEventType as number;
const REFRESH_END = ObjectTypeIds.RefreshEndEventType as number;
const REFRESH_REQUIRED = ObjectTypeIds.RefreshRequiredEventType as number;

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The number of a standard (namespace 0, numeric) event type; null for a vendor's own. */
function standardType(eventType: NodeId | null): number | null {
  return eventType?.namespace === 0 && typeof eventType.value === "number" ? eventType.value : null;
}

/**
 * The server's conditions as Klaxon last saw them, turned into DeviceAlarms. It keeps each
 * condition's latest EventId (the Acknowledge method names the event it acknowledges) and does the
 * refresh bookkeeping of OPC UA Part 9 4.5: a condition Klaxon knew that is not re-sent between
 * RefreshStart and RefreshEnd ended while the link was down (cleared and acknowledged), so it is
 * reported inactive and acknowledged rather than left open.
 */
export class ConditionTracker {
  private readonly known = new Map<string, {alarm: DeviceAlarm; eventId: Buffer}>();
  private refreshed: Set<string> | null = null;

  constructor(
    private readonly emit: (alarm: DeviceAlarm) => void,
    private readonly refreshRequired: () => void
  ) {}

  /** One event notification's fields, in the order of FIELDS. */
  event(values: readonly Variant[]): void {
    const field = (name: Field): unknown => values[FIELDS.indexOf(name)]?.value ?? null;
    const eventType = standardType(field("EventType") as NodeId | null);
    if (eventType === REFRESH_START) this.refreshed = new Set();
    else if (eventType === REFRESH_END) this.endRefresh();
    else if (eventType === REFRESH_REQUIRED) this.refreshRequired();
    const conditionNode = field("ConditionId") as NodeId | null;
    const eventId = field("EventId");
    // Events that are not a condition's (audit, system) carry no ConditionId.
    if (!conditionNode || conditionNode.isEmpty() || !Buffer.isBuffer(eventId)) return;
    const conditionId = conditionNode.toString();
    const severity = Number(field("Severity"));
    const time = field("Time");
    const alarm: DeviceAlarm = {
      conditionId,
      active: field("ActiveState.Id") === true,
      acknowledged: field("AckedState.Id") === true,
      severity: Number.isFinite(severity) ? Math.min(1000, Math.max(1, severity)) : 1,
      message: (field("Message") as LocalizedText | null)?.text ?? "",
      source: text(field("SourceName")),
      acknowledgedBy: text(field("ClientUserId")),
      comment: (field("Comment") as LocalizedText | null)?.text ?? "",
      time: time instanceof Date ? time : new Date()
    };
    this.refreshed?.add(conditionId);
    // A condition no longer retained (inactive and acknowledged) is finished: forget it once said.
    if (field("Retain") === false && !alarm.active && alarm.acknowledged) this.known.delete(conditionId);
    else this.known.set(conditionId, {alarm, eventId: Buffer.from(eventId)});
    this.emit(alarm);
  }

  /** The event id to acknowledge a condition with, when the condition is known. */
  eventIdOf(conditionId: string): Buffer | null {
    return this.known.get(conditionId)?.eventId ?? null;
  }

  private endRefresh(): void {
    const refreshed = this.refreshed;
    this.refreshed = null;
    if (!refreshed) return;
    for (const [conditionId, {alarm}] of [...this.known]) {
      if (refreshed.has(conditionId)) continue;
      this.known.delete(conditionId);
      this.emit({...alarm, active: false, acknowledged: true});
    }
  }
}

/** Subscribes to the Server object's events, filtered to the condition fields, feeding the tracker. */
export async function monitorConditions(subscription: ClientSubscription, tracker: ConditionTracker): Promise<void> {
  const item = await subscription.monitor(
    {nodeId: `i=${ObjectIds.Server}`, attributeId: AttributeIds.EventNotifier},
    {samplingInterval: 0, discardOldest: false, queueSize: 1000, filter: constructEventFilter([...FIELDS])},
    TimestampsToReturn.Both
  );
  // A server without Alarms & Conditions refuses the event item: its points still work, so this is
  // said (in words) to the caller, not made a reason to drop the link.
  if (!item.statusCode.isGood())
    throw new Error(`the server refused the alarm subscription: ${statusInWords(item.statusCode.name)}`);
  item.on("changed", (values: Variant[]) => tracker.event(values));
}

/** Calls the condition's Acknowledge method; an alarm already acknowledged (on the SCADA side) is fine. */
export async function acknowledgeOnServer(
  session: ClientSession,
  target: {conditionId: string; eventId: Buffer},
  comment: string
): Promise<void> {
  const status = await acknowledgeCondition(session, target.conditionId, target.eventId, comment);
  if (status.isGood() || status.value === StatusCodes.BadConditionBranchAlreadyAcked.value) return;
  throw new Error(`the server refused the acknowledgement: ${statusInWords(status.name)}`);
}
