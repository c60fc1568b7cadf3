import {applyMergePatch} from "../../domain/merge-patch.js";
import type {Priority} from "../../domain/vocabulary.js";
import type {Actor} from "../../domain/actor.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {newId} from "../../lib/ids.js";
import {secretToken} from "../../lib/tokens.js";
import {newWebhookSecret} from "../../lib/webhook-signing.js";
import type {IntegrationRecord} from "../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import {notFound, pageOrInvalidCursor, refuseReadOnlyFields} from "../shared/errors.js";
import {resolveTarget, type TargetDirectory} from "../recipients/paging-target.js";

export type IntegrationKind = IntegrationRecord["kind"];
export const INTEGRATION_KINDS: readonly IntegrationKind[] = ["generic", "alertmanager"];

/** The fields a client may write; `kind` only at creation. */
export interface IntegrationInput {
  name: string;
  kind: IntegrationKind;
  target: string;
  default_priority?: Priority;
}

const WRITABLE = ["name", "target", "default_priority"] as const;

/** What the API shows of an integration: never its secret. */
export interface IntegrationView {
  id: string;
  name: string;
  kind: IntegrationKind;
  target: string;
  default_priority: Priority;
  /** The keyless address for senders that can neither sign nor set headers. */
  url: string;
  created_at: string;
  updated_at: string;
}

/**
 * Inbound integrations' admin use cases. Their events are checked by IntegrationCredentials and
 * handled by IntegrationEvents.
 */
export class IntegrationsService {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly targets: TargetDirectory,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    /** The absolute base of integration URLs: settings.public_url, or the address the gateway listens on. */
    private readonly publicBase: () => string
  ) {}

  view(integration: IntegrationRecord): IntegrationView {
    const {id, name, kind, target, default_priority, created_at, updated_at} = integration;
    const url = `${this.publicBase().replace(/\/+$/, "")}/api/v1/integrations/${id}/events?token=${integration.url_token}`;
    return {id, name, kind, target, default_priority, url, created_at, updated_at};
  }

  get(id: string): IntegrationRecord {
    const integration = this.integrations.get(id);
    if (!integration) throw notFound("integration", id);
    return integration;
  }

  list(limit: number, cursor: string | null): {items: IntegrationRecord[]; next: string | null} {
    return pageOrInvalidCursor(this.integrations.page(limit, cursor), "integration");
  }

  private checkTarget(target: string): void {
    resolveTarget(target, this.targets, "/target", this.clock.now());
  }

  /** Creates an integration; its secret is returned here and never again. */
  async create(input: IntegrationInput, actor: Actor): Promise<{integration: IntegrationRecord; secret: string}> {
    this.checkTarget(input.target);
    const nowMs = this.clock.now();
    const now = isoTimestamp(nowMs);
    const secret = newWebhookSecret();
    const integration: IntegrationRecord = {
      id: newId("int", nowMs),
      name: input.name,
      kind: input.kind,
      target: input.target,
      default_priority: input.default_priority ?? "high",
      secret,
      url_token: secretToken(),
      created_at: now,
      updated_at: now
    };
    await this.integrations.insert(integration);
    await this.audit.record(
      actor,
      "integration.created",
      {type: "integration", id: integration.id},
      {name: integration.name, kind: integration.kind, target: integration.target}
    );
    return {integration, secret};
  }

  /** The document a merge patch produces (kind included, unchanged), for the caller to validate before `replace`. */
  patched(id: string, patch: Record<string, unknown>): IntegrationInput {
    refuseReadOnlyFields(patch, WRITABLE);
    const {name, kind, target, default_priority} = this.get(id);
    return applyMergePatch({name, kind, target, default_priority}, patch) as IntegrationInput;
  }

  async replace(id: string, input: IntegrationInput, actor: Actor): Promise<IntegrationRecord> {
    const current = this.get(id);
    this.checkTarget(input.target);
    const updated: IntegrationRecord = {
      ...current,
      name: input.name,
      target: input.target,
      default_priority: input.default_priority ?? "high",
      updated_at: isoTimestamp(this.clock.now())
    };
    if (!(await this.integrations.replace(updated))) throw notFound("integration", id);
    await this.audit.record(
      actor,
      "integration.updated",
      {type: "integration", id},
      {fields: WRITABLE.filter((field) => current[field] !== updated[field])}
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
    const secret = newWebhookSecret();
    const rotated: IntegrationRecord = {
      ...current,
      secret,
      url_token: secretToken(),
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
    await this.audit.record(actor, "integration.deleted", {type: "integration", id}, {name: integration.name});
  }
}
