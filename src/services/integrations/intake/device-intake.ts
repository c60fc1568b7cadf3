import {createHash} from "node:crypto";
import {isoTimestamp, type Clock} from "../../../lib/clock.js";
import type {Logger} from "../../../lib/logger.js";
import {RateLimiter} from "../../../lib/rate-limiter.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {Journal} from "../../../store/journal/journal.js";
import type {
  IntakeOutcomeName,
  IntegrationStatsRepository
} from "../../../store/journal/integration-stats.repository.js";
import {AppError} from "../../shared/errors.js";
import type {EventResult, IntegrationEvents} from "./integration-events.js";
import type {InboundAction} from "./integration-payloads.js";

/** A message a device transport received, in the shape the intake counts and keeps. */
export interface DeviceMessage {
  transport: "email" | "mqtt" | "snmp_trap" | "modbus" | "opcua";
  /** Who sent it: mail sender / MQTT topic / agent address. Rate limiting keys on it. */
  origin: string;
  /** One line for the log (subject, topic, trap OID name). */
  summary: string;
  /** The content kept in the log when nothing maps (capped by the intake). */
  body: string;
  /** Bytes as received. */
  size: number;
  /**
   * What the rate limit keys on when it is not `origin`: a mail's client address, since a sender
   * can write any From it likes and would otherwise get a fresh allowance with each.
   */
  rateKey?: string;
}

/** What the intake did with a message. */
export type IntakeOutcome =
  | {status: "accepted"; results: EventResult[]}
  | {status: "unmapped"}
  /** `temporary`: rate-limited; a transport that can have the message sent again later (SMTP 451, an MQTT message left unacknowledged) should. */
  | {status: "refused"; reason: string; temporary: boolean};

/** What the intake works with. */
export interface DeviceIntakeDeps {
  events: IntegrationEvents;
  stats: IntegrationStatsRepository;
  journal: Journal;
  /** Per origin, with the HTTP API's rate (settings.rate_limit). */
  limiter: RateLimiter;
  clock: Clock;
  logger: Logger;
}

const SUMMARY_MAX = 300;
const ORIGIN_MAX = 300;
const BODY_MAX = 16_384;
const REASON_MAX = 500;
/** How much of an unmapped message's content its alert carries after the title. */
const UNMAPPED_TEXT_MAX = 1000;
/**
 * Messages kept in an integration's log per second (after a burst): a flood from many origins
 * (each within its rate limit) is counted in full but only sampled into the log, which holds the
 * newest 200 anyway; keeping each one would cost the flood's every message an insert and a trim.
 */
const KEEP_PER_SECOND = 100;
const KEEP_BURST = 1000;

function cap(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

/**
 * Where every device transport (email, MQTT, SNMP traps) hands its messages: counts them per
 * integration in the journal, rate-limits each origin as the HTTP API limits a key, runs the
 * actions as the HTTP event route does (the integration as the actor, so the audit reads the
 * same), and keeps what maps to nothing or is refused in the integration's log.
 */
export class DeviceIntake {
  private readonly keeping: RateLimiter;

  constructor(private readonly deps: DeviceIntakeDeps) {
    this.keeping = new RateLimiter(KEEP_PER_SECOND, KEEP_BURST, deps.clock);
  }

  /**
   * Counts the message, rate-limits per origin, runs `actions` through IntegrationEvents, or
   * keeps the message in the integration's log when `actions` is empty (`note` says why, e.g.
   * a rule's regex ran out of time). Resolves only after the journal commit, so a transport
   * may acknowledge the message then. A journal that cannot commit rejects
   * (StorageUnavailableError): the transport must not acknowledge, the sender retries.
   */
  async take(
    integration: IntegrationRecord,
    message: DeviceMessage,
    actions: InboundAction[],
    note: string | null = null
  ): Promise<IntakeOutcome> {
    const sender = message.rateKey ?? message.origin;
    if (!this.deps.limiter.take(`${message.transport}:${sender}`).allowed) {
      const reason = `rate limited: ${sender} sends faster than ${this.deps.limiter.perSecond}/s`;
      this.said("refused", integration, message, reason);
      // Not kept: a flood would push every useful message out of the log.
      await this.record(integration, message, "refused", {reason, keep: false});
      return {status: "refused", reason, temporary: true};
    }
    if (!actions.length) {
      const why = note || "no rule maps it";
      if (integration.unmapped === "keep") {
        this.said(
          "unmapped",
          integration,
          message,
          `${why}; kept in the integration's log, nobody paged (unmapped: keep)`
        );
        await this.record(integration, message, "unmapped", {reason: note, keep: true});
        return {status: "unmapped"};
      }
      // Nobody wrote a rule for it, yet a device sent it: page rather than keep it silently.
      this.said("unmapped", integration, message, `${why}; paged with the integration's default priority`);
      actions = [unmappedAlert(integration, message)];
    }
    let results: EventResult[];
    try {
      ({results} = await this.deps.events.handle(
        integration,
        actions,
        {type: "integration", id: integration.id},
        null
      ));
    } catch (error) {
      // What the HTTP route would answer 4xx (the target was deleted, a bad heartbeat name): the
      // message is refused and kept. Anything else (the journal cannot commit) is the transport's to report.
      if (!(error instanceof AppError)) throw error;
      this.said("refused", integration, message, error.message);
      await this.record(integration, message, "refused", {reason: error.message, keep: true});
      return {status: "refused", reason: error.message, temporary: false};
    }
    await this.record(integration, message, "accepted", {reason: null, keep: false});
    return {status: "accepted", results};
  }

  /** A message with nothing left to do (a retained copy of a state already acted on): counted as accepted, after its commit. */
  noted(integration: IntegrationRecord, message: DeviceMessage): Promise<void> {
    return this.record(integration, message, "accepted", {reason: null, keep: false});
  }

  /**
   * A message that could not be read at all (oversized, malformed MIME/BER, bad community):
   * counted as refused with the reason as last_error, and kept; `integration` null when it names
   * none (counted for the metric only). Never throws: a failure to record is logged.
   */
  refuse(integration: IntegrationRecord | null, message: DeviceMessage, reason: string): void {
    this.said("refused", integration, message, reason);
    const counted = {id: integration?.id ?? `*${message.transport}`, kind: integration?.kind ?? message.transport};
    this.record(counted, message, "refused", {reason, keep: integration !== null}).catch((error: unknown) =>
      this.deps.logger.warn("could not record a refused device message", {
        transport: message.transport,
        error: (error as Error).message
      })
    );
  }

  /**
   * One log line per refused or unmapped message (sender, integration, reason); the logger folds
   * identical lines, so a device repeating itself costs a line per 10 s with `repeated: N`.
   */
  private said(
    outcome: "refused" | "unmapped",
    integration: IntegrationRecord | null,
    message: DeviceMessage,
    reason: string
  ): void {
    this.deps.logger.warn(`device message ${outcome}`, {
      transport: message.transport,
      sender: cap(message.origin, ORIGIN_MAX),
      integration: integration?.name ?? null,
      integration_id: integration?.id ?? null,
      reason: cap(reason, REASON_MAX)
    });
  }

  private record(
    {id: integrationId, kind}: {id: string; kind: string},
    message: DeviceMessage,
    outcome: IntakeOutcomeName,
    {reason, keep}: {reason: string | null; keep: boolean}
  ): Promise<void> {
    const atIso = isoTimestamp(this.deps.clock.now());
    const error = outcome === "refused" && reason !== null ? cap(reason, REASON_MAX) : null;
    const kept = keep && outcome !== "accepted" && this.keeping.take(integrationId).allowed;
    return this.deps.journal.write(() => {
      this.deps.stats.count({integrationId, kind, outcome, atIso, error});
      if (kept)
        this.deps.stats.keep(integrationId, {
          received_at: atIso,
          outcome,
          origin: cap(message.origin, ORIGIN_MAX),
          summary: cap(message.summary, SUMMARY_MAX),
          body: cap(message.body, BODY_MAX),
          size: message.size,
          reason: reason === null ? null : cap(reason, REASON_MAX)
        });
    });
  }
}

/** A message's own words for its alert, on one line: a trap's first line (its name, OID and agent) the title and source already say. */
function detailsOf(message: DeviceMessage): string {
  const lines = message.body.split("\n");
  if (message.transport === "snmp_trap") lines.shift();
  return lines.join(" ").replace(/\s+/g, " ").trim();
}

/**
 * The alert a message no rule maps becomes: titled by its subject, topic or trap name, with the
 * start of its text, at the integration's default priority; keyed by sender and title, so a
 * device repeating itself merges into one alert rather than paging again.
 */
function unmappedAlert(integration: IntegrationRecord, message: DeviceMessage): InboundAction {
  const title = message.summary.trim() || `${message.transport} message`;
  const key = createHash("sha256").update(`${message.origin}\n${title}`).digest("hex").slice(0, 24);
  const text = detailsOf(message);
  // An MQTT topic is both the title and the source, and the page already names the source: said once.
  const words = title === message.origin.trim() ? [text || title] : [title, text].filter(Boolean);
  return {
    action: "fire",
    alert_id: `unmapped-${key}`,
    message: cap(words.join(": "), UNMAPPED_TEXT_MAX),
    priority: integration.default_priority,
    source: cap(message.origin, ORIGIN_MAX),
    link: null,
    service: null,
    environment: null
  };
}
