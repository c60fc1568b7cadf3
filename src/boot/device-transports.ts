import {readSmallFile} from "../lib/small-file.js";
import {hostname} from "node:os";
import type {Settings} from "../settings/defaults.js";
import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {TimedRegex} from "../lib/timed-regex.js";
import type {IntegrationsRepository} from "../store/config/repositories.js";
import type {DeviceIntake} from "../services/integrations/intake/device-intake.js";
import {EmailIntake} from "../services/integrations/email-intake.js";
import type {SmtpListener} from "../inbound/email/smtp-listener.js";
import {startTrapTransport} from "./snmp-trap-transport.js";
import type {ParserWorkers} from "../lib/parser-workers.js";

/**
 * The domain of email integrations' addresses: inbound_email.domain, else the host of
 * public_url (the name people already reach the box by), else the box's hostname.
 */
export function inboundEmailDomain(settings: Settings): string {
  if (settings.inbound_email.domain) return settings.inbound_email.domain;
  if (settings.public_url) return new URL(settings.public_url).hostname;
  return hostname();
}

/** A certificate or key, read off the main thread; a FIFO, device or directory is refused unread (lib/small-file.ts). */
async function readPem(path: string, what: string): Promise<Buffer> {
  try {
    return await readSmallFile(path);
  } catch (error) {
    throw new Error(`inbound_email.${what}: cannot read ${path}: ${(error as Error).message}`, {cause: error});
  }
}

/** What the device transports' listeners are wired to. */
export interface DeviceTransportDeps {
  integrations: IntegrationsRepository;
  intake: DeviceIntake;
  clock: Clock;
  /** Where a door's supervised parser worker is registered for /metrics and /readyz. */
  parserWorkers?: ParserWorkers;
}

/**
 * Binds the listeners of the device transports that are switched on (SNMP traps, email), before
 * the HTTP front opens; `stop` closes them. One that cannot start closes those already started
 * and stops the gateway's start.
 */
export async function startDeviceListeners(
  settings: Settings,
  deps: DeviceTransportDeps,
  logger: Logger
): Promise<{stop(): Promise<void>}> {
  const trapListener = await startTrapTransport(settings, deps, logger);
  const emailListener = await startEmailTransport(settings, deps, logger).catch(async (error: unknown) => {
    await trapListener?.stop();
    throw error;
  });
  return {
    stop: async () => {
      await emailListener?.stop();
      await trapListener?.stop();
    }
  };
}

/**
 * Starts the email integrations' SMTP listener when inbound_email.port is set (null when it is
 * 0, the default), wired to the device intake. A certificate or key that cannot be read, or a
 * port that cannot be bound, stops the start.
 */
async function startEmailTransport(
  settings: Settings,
  deps: DeviceTransportDeps,
  logger: Logger
): Promise<SmtpListener | null> {
  const config = settings.inbound_email;
  if (!config.port) return null;
  if (Boolean(config.tls_cert_file) !== Boolean(config.tls_key_file))
    throw new Error("inbound_email: set both tls_cert_file and tls_key_file for STARTTLS, or neither");
  // smtp-server and the MIME parser's worker are loaded only when the email intake is on (idle footprint, docs/benchmarks.md).
  const {SmtpListener} = await import("../inbound/email/smtp-listener.js");
  const regex = new TimedRegex();
  const emails = new EmailIntake({
    integrations: deps.integrations,
    intake: deps.intake,
    domain: () => inboundEmailDomain(settings),
    matcher: (pattern, text) => regex.match(pattern, text)
  });
  const listener = new SmtpListener(
    {
      port: config.port,
      address: config.address,
      domain: inboundEmailDomain(settings),
      maxBytes: config.max_bytes,
      tls: config.tls_cert_file
        ? {
            cert: await readPem(config.tls_cert_file, "tls_cert_file"),
            key: await readPem(config.tls_key_file, "tls_key_file")
          }
        : null,
      auth: config.user && config.password ? {user: config.user, password: config.password} : null,
      maxSessionsPerAddress: config.max_sessions_per_address,
      sessionMaxMs: config.session_max_seconds * 1000,
      authFailuresPerMinute: config.auth_failures_per_minute
    },
    emails,
    logger.child({component: "email-intake"}),
    deps.clock
  );
  await listener.start();
  deps.parserWorkers?.register("mime-parser", () => ({...listener.parserStats(), counters: {}}));
  return listener;
}
