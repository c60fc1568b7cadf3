import type {SnmpV3User} from "../../../domain/snmp-trap.js";
import type {RateLimiter} from "../../../lib/rate-limiter.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../../store/config/repositories.js";
import type {DeviceIntake, DeviceMessage} from "../intake/device-intake.js";
import {trapActions, trapName, trapText, type TrapFacts} from "./snmp-mapping.js";

/** A trap as the listener hands it over. */
export interface IncomingTrap extends TrapFacts {
  credential: {kind: "community" | "user"; name: string};
  size: number;
}

/** What the listener lets in: every trap integration's community and v3 users. */
export interface TrapCredentialList {
  communities: string[];
  users: {
    name: string;
    authProtocol: SnmpV3User["auth_protocol"];
    authKey: string;
    privProtocol: SnmpV3User["priv_protocol"];
    privKey: string;
  }[];
}

/**
 * Where the SNMP trap listener hands its traps: each goes to the integration whose community or
 * v3 user it came with, is mapped (its rules, then the built-in table) and taken by the
 * DeviceIntake, which rate-limits the agent, counts it, and keeps an unknown trap in the log.
 */
export class SnmpTrapIntake {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly intake: DeviceIntake,
    /** Per agent, for packets refused before they name an integration: a flood of them is not each written down. */
    private readonly refusals: RateLimiter
  ) {}

  credentials(): TrapCredentialList {
    const traps = this.trapIntegrations();
    return {
      communities: traps.flatMap((integration) => (integration.community ? [integration.community] : [])),
      users: traps.flatMap((integration) =>
        (integration.v3_users ?? []).map((user) => ({
          name: user.name,
          authProtocol: user.auth_protocol,
          authKey: user.auth_key,
          privProtocol: user.priv_protocol,
          privKey: user.priv_key
        }))
      )
    };
  }

  /** Resolves once the trap's outcome is committed; rejects when the journal cannot commit. */
  async receive(trap: IncomingTrap): Promise<void> {
    const message: DeviceMessage = {
      transport: "snmp_trap",
      origin: trap.agent,
      summary: trapName(trap.trapOid),
      body: trapText(trap),
      size: trap.size
    };
    const integration = this.trapIntegrations().find((candidate) =>
      trap.credential.kind === "community"
        ? candidate.community === trap.credential.name
        : (candidate.v3_users ?? []).some((user) => user.name === trap.credential.name)
    );
    // Changed or deleted between the listener's check and now.
    if (!integration)
      return this.refused(trap.agent, trap.size, `no snmp_trap integration has this ${trap.credential.kind}`);
    await this.intake.take(
      integration,
      message,
      trapActions(trap, integration.trap_rules ?? [], integration.default_priority)
    );
  }

  /** A packet the listener could not take (unreadable BER, an unknown community or user, a wrong key). */
  refused(agent: string, size: number, reason: string): void {
    if (!this.refusals.take(agent).allowed) return;
    this.intake.refuse(
      null,
      {transport: "snmp_trap", origin: agent, summary: "refused packet", body: "", size},
      reason
    );
  }

  private trapIntegrations(): IntegrationRecord[] {
    return this.integrations.all().filter((integration) => integration.kind === "snmp_trap");
  }
}
