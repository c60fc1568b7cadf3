import type {AuthProtocols, PrivProtocols} from "net-snmp";

/** One variable binding of a trap, its value as text (octet strings as UTF-8 when printable, else hex). */
export interface TrapVarbind {
  oid: string;
  value: string;
}

/** A trap or inform that passed the community or USM check, as the mapping sees it. */
export interface ReceivedTrap {
  /** The UDP source address: the agent, or the proxy that forwarded its trap. */
  agent: string;
  version: "v1" | "v2c" | "v3";
  /** The v1/v2c community or the v3 user name that let it in: it names the integration. */
  credential: {kind: "community" | "user"; name: string};
  inform: boolean;
  /** snmpTrapOID (a v1 trap's is derived as RFC 3584 section 3.1 says). */
  trapOid: string;
  /** The bindings after sysUpTime.0 and snmpTrapOID.0. */
  varbinds: TrapVarbind[];
  size: number;
}

/** A packet refused before it became a trap: malformed BER, an unknown community or user, a failed digest, a replay. */
export interface TrapRefusal {
  agent: string;
  reason: string;
  size: number;
}

/** A v3 user of one integration: always authPriv. */
export interface TrapUser {
  name: string;
  authProtocol: keyof typeof AuthProtocols;
  authKey: string;
  privProtocol: keyof typeof PrivProtocols;
  privKey: string;
}

/** Everything the receiver lets in: the communities and users of all trap integrations. */
export interface TrapCredentials {
  communities: string[];
  users: TrapUser[];
}

/** RFC 3414 §2.2.3: a message more than 150 s from the authoritative engine's time is not timely. */
export const TIME_WINDOW_SECONDS = 150;

/** The USM header of an authentic SNMPv3 message: what the replay guard (RFC 3414 §3.2 step 7) judges. */
export interface UsmStamp {
  /** msgAuthoritativeEngineID, hex: the sender's engine for a trap, ours for an inform. */
  engineId: string;
  boots: number;
  time: number;
  /** msgAuthenticationParameters, hex: the message's HMAC, which no two genuine messages share. */
  digest: string;
}

export interface Peer {
  address: string;
  port: number;
}

/** What the main thread hands the parser worker: the credentials to apply, or one datagram. */
export type ParserWork =
  | {kind: "credentials"; credentials: TrapCredentials}
  | {kind: "datagram"; bytes: Uint8Array; from: Peer; size: number; engineTime: number};

/** What the parser worker hands back for one datagram. */
export type ParserEvent =
  | {kind: "trap"; trap: ReceivedTrap; usm: UsmStamp | null; reply: Uint8Array | null; from: Peer}
  | {kind: "reply"; bytes: Uint8Array; to: Peer}
  | {kind: "refused"; refusal: TrapRefusal};

/** What the worker is started with: the identity of the box's own SNMP engine. */
export interface ParserData {
  /** Hex, fixed for the listener's life so a worker restart does not change it under senders. */
  engineId: string;
  engineBoots: number;
}
