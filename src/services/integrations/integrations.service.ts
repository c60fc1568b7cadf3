import {applyMergePatch} from "../../domain/merge-patch.js";
import type {Priority} from "../../domain/vocabulary.js";
import type {Actor} from "../../domain/actor.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {newId} from "../../lib/ids.js";
import {regexProblem} from "../../lib/timed-regex.js";
import {emailAddressToken, newCredentials} from "./integration-credentials.js";
import type {RuleField, TextRule} from "../../domain/integration-rules.js";
import type {IntegrationRecord, UnmappedPolicy} from "../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../store/config/repositories.js";
import type {Journal} from "../../store/journal/journal.js";
import type {
  IntegrationStats,
  IntegrationStatsRepository,
  KeptMessage
} from "../../store/journal/integration-stats.repository.js";
import type {AuditService} from "../shared/audit.service.js";
import {invalid, notFound, pageOrInvalidCursor, refuseReadOnlyFields, type FieldError} from "../shared/errors.js";
import {resolveTarget, type TargetDirectory} from "../recipients/paging-target.js";
import {
  SNMP_TRAP_FIELDS,
  snmpTrapFieldProblems,
  snmpTrapFields,
  snmpTrapView,
  type SnmpTrapInput,
  type SnmpTrapView
} from "./snmp/snmp-settings.js";
import type {MqttConnectionState} from "../../domain/mqtt.js";
import {
  MQTT_FIELDS,
  mqttFieldProblems,
  mqttPatchBase,
  mqttRecordFields,
  mqttView,
  type MqttInput,
  type MqttView
} from "./mqtt/mqtt-settings.js";
import {
  PLC_FIELDS,
  plcFieldProblems,
  plcPatchBase,
  plcRecordFields,
  plcView,
  type PlcInput,
  type PlcLiveState,
  type PlcView
} from "./plc/plc-settings.js";

export type IntegrationKind = IntegrationRecord["kind"];
export const INTEGRATION_KINDS: readonly IntegrationKind[] = [
  "generic",
  "alertmanager",
  "email",
  "mqtt",
  "snmp_trap",
  "modbus",
  "opcua"
];

/** The kinds whose messages are text mapped by rules, and the fields their rules may look at. */
const RULE_FIELDS_BY_KIND: Partial<Record<IntegrationKind, readonly RuleField[]>> = {
  email: ["sender", "subject", "body"],
  mqtt: ["topic", "payload"]
};

/** The kinds a device transport feeds (their messages may map to nothing). */
const DEVICE_KINDS: readonly IntegrationKind[] = ["email", "mqtt", "snmp_trap"];

/** The fields a client may write; `kind` only at creation. */
export interface IntegrationInput extends SnmpTrapInput, MqttInput, PlcInput {
  name: string;
  kind: IntegrationKind;
  target: string;
  default_priority?: Priority;
  rules?: TextRule[];
  unmapped?: UnmappedPolicy;
}

const WRITABLE = [
  "name",
  "target",
  "default_priority",
  "rules",
  "unmapped",
  ...SNMP_TRAP_FIELDS,
  ...MQTT_FIELDS,
  ...PLC_FIELDS
] as const;

/** A device kind's policy for what maps to nothing ("page" unless set); nothing for other kinds. */
function unmappedField(kind: IntegrationKind, policy: UnmappedPolicy | undefined): {unmapped?: UnmappedPolicy} {
  return DEVICE_KINDS.includes(kind) ? {unmapped: policy ?? "page"} : {};
}

/** What the API shows of an integration: never its secret. */
export interface IntegrationView extends Partial<SnmpTrapView>, Partial<MqttView>, Partial<PlcView> {
  id: string;
  name: string;
  kind: IntegrationKind;
  target: string;
  default_priority: Priority;
  /** The keyless address for senders that can neither sign nor set headers; null for modbus and opcua. */
  url: string | null;
  /** Email integrations: the address devices send to (`<token>@<inbound_email.domain>`); null for other kinds. */
  address: string | null;
  /** Email and MQTT integrations: the mapping rules, in order. */
  rules?: TextRule[];
  /** Device kinds: "page" (a message no rule maps pages as an alert) or "keep" (it is only kept in the log). */
  unmapped?: UnmappedPolicy;
  /** Messages received by a device transport (email, MQTT, SNMP traps) and what became of them. */
  stats: IntegrationStats;
  created_at: string;
  updated_at: string;
}

/** A device integration set to keep what no rule maps, which has kept such messages lately: nobody was paged for them. */
export interface UnmappedWarning {
  integration_id: string;
  name: string;
  /** Unmapped messages among the newest kept in its log, within the last 24 hours. */
  messages: number;
  last_at: string;
}

// How far back a kept unmapped message still warns, and how much of the log is looked at.
const UNMAPPED_WARNING_MS = 24 * 3600_000;
const UNMAPPED_WARNING_SCAN = 50;

/** What the integrations service works with. */
export interface IntegrationsServiceDeps {
  integrations: IntegrationsRepository;
  targets: TargetDirectory;
  stats: IntegrationStatsRepository;
  journal: Journal;
  audit: AuditService;
  clock: Clock;
  /** The absolute base of integration URLs: settings.public_url, or the address the gateway listens on. */
  publicBase: () => string;
  /** The domain of email integrations' addresses (inbound_email.domain, else the box's name). */
  emailDomain: () => string;
  /** The MQTT clients: an integration's broker connection now, and a nudge after each change so they follow it. */
  mqtt?: {connection(integrationId: string): MqttConnectionState | null; changed(): void};
  /** The PLC links (modbus, opcua): an integration's link and points now, and a nudge after each change. */
  plc?: {
    state(integrationId: string): PlcLiveState | null;
    changed(): void;
    readNow(id: string): Promise<PlcLiveState>;
  };
}

/**
 * Inbound integrations' admin use cases. Their events are checked by IntegrationCredentials and
 * handled by IntegrationEvents.
 */
export class IntegrationsService {
  private readonly integrations: IntegrationsRepository;
  private readonly audit: AuditService;
  private readonly clock: Clock;

  constructor(private readonly deps: IntegrationsServiceDeps) {
    ({integrations: this.integrations, audit: this.audit, clock: this.clock} = deps);
  }

  view(integration: IntegrationRecord): IntegrationView {
    const {id, name, kind, target, default_priority, created_at, updated_at} = integration;
    const url = integration.url_token
      ? `${this.deps.publicBase().replace(/\/+$/, "")}/api/v1/integrations/${id}/events?token=${integration.url_token}`
      : null;
    const address = kind === "email" ? `${emailAddressToken(integration)}@${this.deps.emailDomain()}` : null;
    const rules = RULE_FIELDS_BY_KIND[kind] ? {rules: integration.rules ?? []} : {};
    const stats = this.deps.journal.read(() => this.deps.stats.stats(id));
    const trap = kind === "snmp_trap" ? snmpTrapView(integration) : {};
    const mqtt = mqttView(integration, this.deps.mqtt?.connection(id) ?? null);
    const plc = plcView(integration, this.deps.plc?.state(id) ?? null);
    return {
      id,
      name,
      kind,
      target,
      default_priority,
      url,
      address,
      ...rules,
      ...unmappedField(kind, integration.unmapped),
      ...trap,
      ...mqtt,
      ...plc,
      stats,
      created_at,
      updated_at
    };
  }

  /** The messages an integration kept (mapped to nothing, or refused), newest first; `before` pages on. */
  log(id: string, limit: number, before: number | null): {items: KeptMessage[]; next: number | null} {
    this.get(id);
    const items = this.deps.journal.read(() => this.deps.stats.kept(id, limit, before));
    return {items, next: items.length === limit ? items[items.length - 1].id : null};
  }

  /** A PLC integration's points read now, through its link ("read now" on the dashboard and API). */
  async readNow(id: string): Promise<IntegrationView> {
    const integration = this.get(id);
    await this.deps.plc?.readNow(id);
    return this.view(integration);
  }

  get(id: string): IntegrationRecord {
    const integration = this.integrations.get(id);
    if (!integration) throw notFound("integration", id);
    return integration;
  }

  /** For /readyz and the dashboard: "keep" integrations that kept unmapped messages in the last 24 hours. */
  unmappedWarnings(): UnmappedWarning[] {
    const sinceIso = isoTimestamp(this.clock.now() - UNMAPPED_WARNING_MS);
    return this.integrations
      .all()
      .filter((integration) => integration.unmapped === "keep")
      .flatMap((integration) => {
        const recent = this.deps.journal
          .read(() => this.deps.stats.kept(integration.id, UNMAPPED_WARNING_SCAN, null))
          .filter((kept) => kept.outcome === "unmapped" && kept.received_at >= sinceIso);
        if (recent.length === 0) return [];
        return [
          {
            integration_id: integration.id,
            name: integration.name,
            messages: recent.length,
            last_at: recent[0].received_at
          }
        ];
      });
  }

  list(limit: number, cursor: string | null): {items: IntegrationRecord[]; next: string | null} {
    return pageOrInvalidCursor(this.integrations.page(limit, cursor), "integration");
  }

  private checkTarget(target: string): void {
    resolveTarget(target, this.deps.targets, "/target", this.clock.now());
  }

  /** Rules only where the kind reads text, on the fields it has, with patterns that compile. */
  private checkRules(input: IntegrationInput): void {
    if (input.unmapped !== undefined && input.unmapped !== null && !DEVICE_KINDS.includes(input.kind))
      throw invalid([
        {
          pointer: "/unmapped",
          detail: `a ${input.kind} integration maps every event; unmapped is for email, mqtt and snmp_trap`
        }
      ]);
    if (input.rules === undefined) return;
    const fields = RULE_FIELDS_BY_KIND[input.kind];
    if (!fields)
      throw invalid([{pointer: "/rules", detail: `a ${input.kind} integration has no rules (email and mqtt have)`}]);
    const errors: FieldError[] = input.rules.flatMap((rule, index): FieldError[] => {
      if (!fields.includes(rule.field))
        return [{pointer: `/rules/${index}/field`, detail: `a ${input.kind} rule looks at ${fields.join(", ")}`}];
      const problem = rule.match === "regex" ? regexProblem(rule.pattern) : null;
      return problem ? [{pointer: `/rules/${index}/pattern`, detail: `not a regular expression: ${problem}`}] : [];
    });
    if (errors.length) throw invalid(errors);
  }

  /** Trap fields only on a trap integration, and no community or v3 user another one has. */
  private checkTrapFields(kind: IntegrationKind, input: SnmpTrapInput, id: string | null): void {
    const others = this.integrations.all().filter((other) => other.id !== id);
    const errors = snmpTrapFieldProblems(kind, input, others);
    if (errors.length) throw invalid(errors);
  }

  /** MQTT fields only on an mqtt integration, which needs a broker, topic filters and a client id of its own; PLC fields only on a PLC. */
  private checkMqttFields(kind: IntegrationKind, input: IntegrationInput, id: string | null): void {
    const others = this.integrations.all().filter((other) => other.id !== id);
    const errors = [...mqttFieldProblems(kind, input, others), ...plcFieldProblems(kind, input)];
    if (errors.length) throw invalid(errors);
  }

  /** Changes of device integrations, told to the transports that follow them. */
  private changed(): void {
    this.deps.mqtt?.changed();
    this.deps.plc?.changed();
  }

  /** Creates an integration; its secret (none for modbus and opcua) is returned here and never again. */
  async create(
    input: IntegrationInput,
    actor: Actor
  ): Promise<{integration: IntegrationRecord; secret: string | null}> {
    this.checkTarget(input.target);
    this.checkRules(input);
    this.checkTrapFields(input.kind, input, null);
    this.checkMqttFields(input.kind, input, null);
    const nowMs = this.clock.now();
    const now = isoTimestamp(nowMs);
    const credentials = newCredentials(input.kind);
    const integration: IntegrationRecord = {
      id: newId("int", nowMs),
      name: input.name,
      kind: input.kind,
      target: input.target,
      default_priority: input.default_priority ?? "high",
      ...credentials,
      ...(input.rules ? {rules: input.rules} : {}),
      ...unmappedField(input.kind, input.unmapped),
      ...snmpTrapFields(input),
      ...mqttRecordFields(input.kind, input),
      ...plcRecordFields(input.kind, input),
      created_at: now,
      updated_at: now
    };
    await this.integrations.insert(integration);
    this.changed();
    await this.audit.record(
      actor,
      "integration.created",
      {type: "integration", id: integration.id},
      {name: integration.name, kind: integration.kind, target: integration.target}
    );
    return {integration, secret: credentials.secret ?? null};
  }

  /** The document a merge patch produces (kind included, unchanged), for the caller to validate before `replace`. */
  patched(id: string, patch: Record<string, unknown>): IntegrationInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const current = this.get(id);
    const {name, kind, target, default_priority, rules, unmapped} = current;
    const base = {...snmpTrapFields(current), ...mqttPatchBase(current), ...plcPatchBase(current)};
    return applyMergePatch({name, kind, target, default_priority, rules, unmapped, ...base}, patch) as IntegrationInput;
  }

  async replace(id: string, input: IntegrationInput, actor: Actor): Promise<IntegrationRecord> {
    const current = this.get(id);
    this.checkTarget(input.target);
    this.checkRules({...input, kind: current.kind});
    this.checkTrapFields(current.kind, input, id);
    this.checkMqttFields(current.kind, input, id);
    const {rules: _, community: _community, v3_users: _users, trap_rules: _trapRules, ...kept} = current;
    const updated: IntegrationRecord = {
      ...kept,
      name: input.name,
      target: input.target,
      default_priority: input.default_priority ?? "high",
      ...(input.rules ? {rules: input.rules} : {}),
      ...unmappedField(current.kind, input.unmapped),
      ...snmpTrapFields(input),
      ...mqttRecordFields(current.kind, input),
      ...plcRecordFields(current.kind, input),
      updated_at: isoTimestamp(this.clock.now())
    };
    if (!(await this.integrations.replace(updated))) throw notFound("integration", id);
    this.changed();
    await this.audit.record(
      actor,
      "integration.updated",
      {type: "integration", id},
      {fields: WRITABLE.filter((field) => JSON.stringify(current[field]) !== JSON.stringify(updated[field]))}
    );
    return updated;
  }

  /**
   * A new secret and URL token; the old ones stop working at once, as after a leak they must.
   * The id, and so the alerts' dedup keys, stay: a sender reconfigured with the new credentials
   * resolves what it fired before.
   */
  async rotateCredentials(id: string, actor: Actor): Promise<{integration: IntegrationRecord; secret: string}> {
    const current = this.get(id);
    const {secret, url_token} = newCredentials(current.kind);
    if (!secret)
      throw invalid([
        {
          pointer: "/id",
          detail: `a ${current.kind} integration has no credentials: Klaxon asks the device, nothing sends to it`
        }
      ]);
    const rotated: IntegrationRecord = {
      ...current,
      secret,
      url_token,
      updated_at: isoTimestamp(this.clock.now())
    };
    if (!(await this.integrations.replace(rotated))) throw notFound("integration", id);
    await this.audit.record(actor, "integration.credentials_rotated", {type: "integration", id}, {name: current.name});
    return {integration: rotated, secret};
  }

  /** Deletes the integration; its credentials stop working at once. Alerts it raised stay as they are. */
  async remove(id: string, actor: Actor): Promise<void> {
    const integration = this.get(id);
    await this.integrations.remove(id);
    this.changed();
    await this.audit.record(actor, "integration.deleted", {type: "integration", id}, {name: integration.name});
  }
}
