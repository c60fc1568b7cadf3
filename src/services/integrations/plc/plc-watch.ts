import {
  ALARM_START,
  alarmLabel,
  alarmStep,
  chatteringText,
  type AlarmEffect,
  type AlarmSpec,
  type AlarmState
} from "../../../domain/plc/alarm-conditioning.js";
import {
  alarmSpecOf,
  PLC_DEFAULTS,
  priorityOfOpcUaSeverity,
  type PlcPointFields
} from "../../../domain/plc/plc-integration.js";
import {isoTimestamp, type Clock} from "../../../lib/clock.js";
import type {Logger} from "../../../lib/logger.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {AuditService} from "../../shared/audit.service.js";
import type {DeviceIntake, DeviceMessage} from "../intake/device-intake.js";
import type {InboundAction} from "../intake/integration-payloads.js";
import type {DeviceAlarm, LinkStatus, PlcLinkListener, PointReading} from "./plc-link.js";
import type {PlcLiveState, PointStateView} from "./plc-settings.js";

/** What a watch works with. */
export interface PlcWatchDeps {
  intake: DeviceIntake;
  /** Whether the integration's alert with this id is not yet resolved (an alarm that paged before a restart). */
  unresolved(integration: IntegrationRecord, alertId: string): boolean;
  /** Acknowledges the integration's open alert with this id: an alarm acknowledged on the device or SCADA side. */
  acknowledge(integration: IntegrationRecord, alertId: string, by: string, note: string | null): Promise<void>;
  /** Changes the text of the integration's alert with this id while it is not resolved (a point found chattering). */
  retitle(integration: IntegrationRecord, alertId: string, change: (message: string) => string): Promise<void>;
  /** Who acknowledged the integration's open alert with this id, once a person has. */
  acknowledgement(integration: IntegrationRecord, alertId: string): {by: string | null; note: string | null} | null;
  /** Acknowledges a condition on the device (OPC UA: its Acknowledge method), when the link can. */
  acknowledgeOnDevice(conditionId: string, by: string, comment: string): Promise<void>;
  /** Where an acknowledgement carried to the device is recorded. */
  audit: Pick<AuditService, "record">;
  clock: Clock;
  logger: Logger;
}

interface PointWatch {
  readonly fields: PlcPointFields;
  readonly spec: AlarmSpec | null;
  alarm: AlarmState;
  reading: PointReading | null;
}

/** The alert id of a point's alarm, of a device alarm (OPC UA condition), and of the link's page. */
export const pointAlertId = (point: string) => `point:${point}`;
export const conditionAlertId = (conditionId: string) => `condition:${conditionId}`;
export const LINK_ALERT_ID = "link";
/** What the link says before its first answer or error (a link just made, or after a restart). */
const NO_ANSWER_YET = "no answer from the device yet since the link started";

/**
 * One PLC integration's conditioning and link watch: readings step each point's alarm
 * (domain/plc/alarm-conditioning.ts) and the link's state is watched; what pages or resolves
 * goes through the device intake, as every device transport's alerts do, in order. An action the
 * journal could not take stays queued and is tried again on the next tick.
 */
export class PlcWatch implements PlcLinkListener {
  private readonly points = new Map<string, PointWatch>();
  private linkState: {state: LinkStatus["state"]; since: number; lastError: string | null; paged: boolean};
  private readonly queue: {action: InboundAction; summary: string}[] = [];
  // Device conditions paged and not yet acknowledged on both sides, by condition id.
  private readonly conditions = new Set<string>();
  private sending: Promise<void> | null = null;

  constructor(
    private integration: IntegrationRecord,
    private readonly deps: PlcWatchDeps
  ) {
    const now = deps.clock.now();
    for (const fields of integration.points ?? []) {
      const spec = fields.alarm ? alarmSpecOf(fields, fields.alarm, integration.default_priority) : null;
      // An alarm that paged before a restart is taken as active, so its clear still resolves it.
      const fired = spec !== null && deps.unresolved(integration, pointAlertId(fields.name));
      this.points.set(fields.name, {fields, spec, alarm: {...ALARM_START, fired}, reading: null});
    }
    // Unreachable until the first answer: a device that never answers is paged after the same wait.
    // Said in words, so a link just made or just restarted does not read as a broken one without a reason.
    const paged = deps.unresolved(integration, LINK_ALERT_ID);
    this.linkState = {state: "unreachable", since: now, lastError: NO_ANSWER_YET, paged};
  }

  reading(reading: PointReading): void {
    const point = this.points.get(reading.point);
    if (!point) return;
    point.reading = reading;
    this.step(point, reading.quality === "bad" ? null : reading.value);
  }

  link(status: LinkStatus): void {
    const now = this.deps.clock.now();
    if (status.state !== this.linkState.state) {
      this.linkState.state = status.state;
      this.linkState.since = now;
    }
    if (status.error) this.linkState.lastError = status.error;
    if (status.state === "connected" && this.linkState.paged) {
      this.linkState.paged = false;
      this.enqueue({action: "resolve", alert_id: LINK_ALERT_ID}, `PLC ${this.integration.name} answers again`);
    }
    this.watchLink(now);
  }

  alarm(alarm: DeviceAlarm): void {
    const alertId = conditionAlertId(alarm.conditionId);
    // Acknowledged on the device (or by us there): nothing left to carry back.
    if (alarm.acknowledged || !alarm.active) this.conditions.delete(alarm.conditionId);
    else this.conditions.add(alarm.conditionId);
    if (!alarm.active) {
      this.enqueue({action: "resolve", alert_id: alertId}, `${alarm.source}: ${alarm.message} (cleared)`);
      return;
    }
    const text = `${alarm.source}: ${alarm.message}`;
    this.enqueue(
      {
        action: "fire",
        alert_id: alertId,
        message: text,
        priority: priorityOfOpcUaSeverity(alarm.severity, this.integration.opcua?.severity_bands),
        source: this.integration.name,
        link: null,
        service: null,
        environment: null
      },
      text
    );
    if (alarm.acknowledged)
      this.afterSent("a device acknowledgement could not be applied", () =>
        this.deps.acknowledge(
          this.integration,
          alertId,
          acknowledgedAtDevice(this.integration, alarm),
          alarm.comment || null
        )
      );
  }

  /** Runs `change` once everything queued so far was handed to the intake (the alert it changes exists by then). */
  private afterSent(failure: string, change: () => Promise<void>): void {
    void this.sent().then(() =>
      change().catch((error: unknown) =>
        this.deps.logger.warn(failure, {integration: this.integration.name, error: (error as Error).message})
      )
    );
  }

  /**
   * Lets delays run out between readings, pages an unreachable device, retries what the journal
   * refused, and carries a person's acknowledgement of a device condition back to the device.
   */
  tick(): void {
    for (const point of this.points.values()) this.step(point, null);
    this.watchLink(this.deps.clock.now());
    this.flush();
    for (const conditionId of this.conditions) this.carryBack(conditionId);
  }

  private carryBack(conditionId: string): void {
    const ack = this.deps.acknowledgement(this.integration, conditionAlertId(conditionId));
    if (!ack) return;
    // Once, whatever the outcome: a server that refuses says so in the log, not every second.
    this.conditions.delete(conditionId);
    const by = ack.by ?? "Klaxon";
    const integration = {type: "integration", id: this.integration.id} as const;
    this.deps.acknowledgeOnDevice(conditionId, by, ack.note ?? "").then(
      async () => {
        this.deps.logger.info("alarm acknowledged on the device", {condition: conditionId, by});
        await this.deps.audit.record(integration, "integration.alarm_acknowledged_on_device", integration, {
          condition: conditionId,
          by,
          note: ack.note
        });
      },
      (error: unknown) =>
        this.deps.logger.warn("the device did not take the acknowledgement", {
          condition: conditionId,
          by,
          error: (error as Error).message
        })
    );
  }

  /** The integration record changed in ways that need no new link (name, target, priority). */
  renamed(integration: IntegrationRecord): void {
    this.integration = integration;
  }

  live(): PlcLiveState {
    const points: Record<string, PointStateView> = {};
    for (const [name, point] of this.points) {
      points[name] = {
        value: point.reading?.value ?? null,
        quality: point.reading?.quality ?? "bad",
        alarm: alarmLabel(point.alarm),
        read_at: point.reading ? point.reading.readAt.toISOString() : null
      };
    }
    const {state, since, lastError} = this.linkState;
    return {link: {state, since: isoTimestamp(since), last_error: lastError}, points};
  }

  /** Resolves once everything queued so far was handed to the intake (or failed and waits for a tick). */
  sent(): Promise<void> {
    return this.sending ?? Promise.resolve();
  }

  private step(point: PointWatch, value: number | boolean | null): void {
    if (!point.spec) return;
    const numeric = typeof value === "boolean" ? Number(value) : value;
    const {state, effects} = alarmStep(
      point.spec,
      point.alarm,
      {value: numeric, unit: point.fields.unit ?? ""},
      this.deps.clock.now()
    );
    point.alarm = state;
    const alertId = pointAlertId(point.fields.name);
    for (const effect of effects) {
      if (effect.kind === "chattering")
        this.afterSent("a chattering point's alert could not be retitled", () =>
          this.deps.retitle(this.integration, alertId, chatteringText)
        );
      else this.enqueue(...this.pointAction(alertId, point, effect));
    }
  }

  private pointAction(
    alertId: string,
    point: PointWatch,
    effect: Exclude<AlarmEffect, {kind: "chattering"}>
  ): [InboundAction, string] {
    if (effect.kind === "resolve")
      return [{action: "resolve", alert_id: alertId}, `${point.fields.name} back to normal`];
    return [
      {
        action: "fire",
        alert_id: alertId,
        message: effect.title,
        priority: effect.priority,
        source: this.integration.name,
        link: null,
        service: null,
        environment: null
      },
      effect.title
    ];
  }

  private watchLink(now: number): void {
    const {state, since, lastError, paged} = this.linkState;
    const afterMs = (this.integration.unreachable_after_seconds ?? PLC_DEFAULTS.unreachable_after_seconds) * 1000;
    if (state !== "unreachable" || paged || now - since < afterMs) return;
    this.linkState.paged = true;
    const title = `PLC ${this.integration.name} unreachable`;
    this.enqueue(
      {
        action: "fire",
        alert_id: LINK_ALERT_ID,
        message: lastError ? `${title}: ${lastError}` : title,
        priority: this.integration.default_priority,
        source: this.integration.name,
        link: null,
        service: null,
        environment: null
      },
      title
    );
  }

  private enqueue(action: InboundAction, summary: string): void {
    this.queue.push({action, summary});
    this.flush();
  }

  private flush(): void {
    if (this.sending || !this.queue.length) return;
    this.sending = (async () => {
      while (this.queue.length) {
        const {action, summary} = this.queue[0];
        const message: DeviceMessage = {
          transport: this.integration.kind as DeviceMessage["transport"],
          origin: `${this.integration.name}/${action.alert_id}`,
          summary,
          body: summary,
          size: 0
        };
        try {
          await this.deps.intake.take(this.integration, message, [action]);
          this.queue.shift();
        } catch (error) {
          this.deps.logger.error("a PLC alarm could not be committed; tried again in a moment", {
            integration: this.integration.name,
            alert_id: action.alert_id,
            error: (error as Error).message
          });
          return;
        }
      }
    })().finally(() => {
      this.sending = null;
    });
  }
}

/**
 * Who acknowledged a condition on the device side, and where, for `acknowledged_by` and the audit
 * (`acknowledged_via` stays "api": the contract has no device value): the OPC UA user the server
 * names (its ClientUserId), else that the server did not say.
 */
export function acknowledgedAtDevice(integration: IntegrationRecord, alarm: DeviceAlarm): string {
  const where = `on the SCADA/HMI via OPC UA (${integration.name})`;
  return alarm.acknowledgedBy ? `${alarm.acknowledgedBy} ${where}` : `an operator ${where}, user not reported`;
}
