import {afterAll, afterEach, beforeAll, expect} from "vitest";
import {
  startTestGateway,
  type SettingsOverrides,
  type TestGateway,
  type TestGatewayOptions
} from "../support/gateway.js";
import {startSmtpPeer, type SmtpPeer, type SmtpPeerOptions} from "../support/smtp-peer.js";
import {eventually} from "../support/eventually.js";

export const PASSWORD = "Sm7p-Pa55word-9f3";
export const PUBLIC_URL = "http://klaxon.factory.lan:8080";

export interface EmailRig {
  gw: TestGateway;
  peer: SmtpPeer;
  /** A recipient reachable by email only (and by SMS, which this gateway lacks, when asked). */
  recipient(fields?: Record<string, unknown>): Promise<string>;
  send(recipient: string, fields?: Record<string, unknown>): Promise<string>;
  /** The notification once every delivery the runner started has been recorded. */
  notification(id: string): Promise<any>;
  emailState(): Promise<{available: boolean; reason: string | null; details: Record<string, any>}>;
}

let rigs: EmailRig[] = [];

/** Registers the clean-up: every rig made in a test is stopped after it. */
export function stopEmailRigs(): void {
  afterEach(async () => {
    for (const rig of rigs) {
      await rig.gw.stop();
      await rig.peer.stop();
    }
    rigs = [];
  });
}

/**
 * One rig for every test of the describe block that calls this (started in its beforeAll, stopped
 * in its afterAll, never by `stopEmailRigs`): each test then keeps apart with its own recipients
 * and addresses, and counts the peer's mail from where it started.
 */
export function shareEmailRig(options: EmailRigOptions = {}): () => EmailRig {
  let shared: EmailRig | null = null;
  beforeAll(async () => {
    shared = await emailRig(options);
    rigs = rigs.filter((rig) => rig !== shared);
  });
  afterAll(async () => {
    await shared?.gw.stop();
    await shared?.peer.stop();
    shared = null;
  });
  return () => shared!;
}

export interface EmailRigOptions {
  smtp?: SettingsOverrides["smtp"];
  /** The gateway's own SMTP listener for email integrations (off unless given a port). */
  inboundEmail?: SettingsOverrides["inbound_email"];
  publicUrl?: string;
  /** Further settings (an SNMP trap port, say) for a test that needs more doors than email. */
  settings?: SettingsOverrides;
  gateway?: TestGatewayOptions;
  peer?: SmtpPeerOptions;
}

/**
 * A gateway with the production drivers (only SMTP configured), talking to a loopback SMTP peer
 * that wants a login. Stopped after each test of the file that registers `stopEmailRigs`.
 */
export async function emailRig(options: EmailRigOptions = {}): Promise<EmailRig> {
  const peer = await startSmtpPeer({auth: {user: "klaxon", password: PASSWORD}, ...options.peer});
  const gw = await startTestGateway(
    {
      public_url: options.publicUrl ?? PUBLIC_URL,
      smtp: {
        host: "127.0.0.1",
        port: peer.port,
        from: "Klaxon <klaxon@factory.lan>",
        user: "klaxon",
        password: PASSWORD,
        timeout_seconds: 2,
        check_seconds: 1,
        ...options.smtp
      },
      ...(options.inboundEmail ? {inbound_email: options.inboundEmail} : {}),
      ...options.settings
    },
    {drivers: "production", ...options.gateway}
  );
  const runner = () => gw.gateway.services.runner;
  // Deterministic tests: the first server check, started with the gateway, has had its answer.
  await eventually(
    "first SMTP check",
    () => emailStateOf(gw),
    (state) => state.details.state !== "unknown"
  );
  const rig: EmailRig = {
    gw,
    peer,
    async recipient(fields = {}) {
      const answer = await gw.call("POST", "/api/v1/recipients", {
        body: {name: "Maria", email: "maria@factory.lan", escalation: {ack_timeout_seconds: 60, repeat: 0}, ...fields}
      });
      expect(answer.status).toBe(201);
      return answer.body.uuid;
    },
    async send(recipient, fields = {}) {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {
          recipient_uuid: recipient,
          message: "Oil temperature high",
          priority: "critical",
          source: "press-7",
          ...fields
        }
      });
      expect(answer.status).toBe(202);
      return answer.body.notification_uuid;
    },
    async notification(id) {
      await runner().idle();
      return (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    },
    emailState: () => emailStateOf(gw)
  };
  rigs.push(rig);
  return rig;
}

async function emailStateOf(
  gw: TestGateway
): Promise<{available: boolean; reason: string | null; details: Record<string, any>}> {
  const ready = await gw.call("GET", "/readyz");
  return ready.body.channels.find((channel: {channel: string}) => channel.channel === "email");
}

export {eventually};
