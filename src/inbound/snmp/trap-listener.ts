// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- net-snmp ships no types; this names their declaration beside it (and shows depcruise that it is used)
/// <reference path="./net-snmp.d.ts" />
import dgram, {type Socket, type SocketType} from "node:dgram";
import {once} from "node:events";
import {
  AuthProtocols,
  createReceiver,
  ObjectType,
  PduType,
  PrivProtocols,
  SecurityLevel,
  type Notification,
  type ReceivedPdu,
  type ReceivedVarbind,
  type Receiver,
  type ReceiverError
} from "net-snmp";

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

/** A packet refused before it became a trap: malformed BER, an unknown community or user, a failed digest. */
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

export interface TrapListenerOptions {
  port: number;
  /** The address to bind: 0.0.0.0 (every IPv4 address), or one address, e.g. 127.0.0.1. */
  address: string;
  /** Handed each trap; what it returns is not awaited (UDP has no back-pressure), a rejection is its own to log. */
  onTrap: (trap: ReceivedTrap) => unknown;
  onRefused: (refusal: TrapRefusal) => void;
  /**
   * The communities and users to let in, asked before each datagram is read: a change to the
   * integrations applies to the next packet, with no event to wire.
   */
  credentials: () => TrapCredentials;
}

// SNMPv2-MIB (RFC 3418, as bundled in net-snmp's lib/mibs/SNMPv2-MIB.mib): sysUpTime ::= { system 3 },
// snmpTrapOID ::= { snmpTrap 1 } with snmpTrap ::= { snmpMIBObjects 4 } = 1.3.6.1.6.3.1.1.4, and
// snmpTraps ::= { snmpMIBObjects 5 }, under which coldStart is 1 ... linkUp 4, authenticationFailure 5.
const SYS_UP_TIME = "1.3.6.1.2.1.1.3.0";
const SNMP_TRAP_OID = "1.3.6.1.6.3.1.1.4.1.0";
const SNMP_TRAPS = "1.3.6.1.6.3.1.1.5";
/** RFC 1157's generic-trap value for enterpriseSpecific. */
const ENTERPRISE_SPECIFIC = 6;

/**
 * The box's one SNMP notification receiver (net-snmp's Receiver): v1 and v2c traps, informs (which
 * the receiver acknowledges as soon as they pass authentication) and v3 traps and informs under
 * USM. Only the communities and users of trap integrations get in: the receiver checks them, and
 * everything it turns away (unknown community or user, wrong digest, malformed BER) reaches
 * `onRefused` with the sender's address, never an exception.
 */
export class TrapListener {
  private receiver: Receiver | null = null;
  private readonly sockets: Socket[] = [];
  private bound = false;
  /** The credentials the receiver holds, as JSON: compared, never logged. */
  private applied = "";

  constructor(private readonly options: TrapListenerOptions) {}

  /** Binds the port; rejects when it cannot (in use, or below 1024 without CAP_NET_BIND_SERVICE). */
  async start(): Promise<void> {
    const bound: Promise<void>[] = [];
    const open = (type: SocketType): Socket => {
      const socket = dgram.createSocket(type);
      // Registered before the receiver's own listener, so it runs first for every datagram.
      socket.on("message", () => this.syncCredentials());
      this.sockets.push(socket);
      bound.push(once(socket, "listening").then(() => undefined));
      return socket;
    };
    this.receiver = createReceiver(
      {
        port: this.options.port,
        address: this.options.address,
        transport: "udp4",
        includeAuthentication: true,
        dgramModule: {createSocket: open}
      },
      (error, notification) => this.receive(error, notification)
    );
    try {
      await Promise.all(bound);
      this.bound = true;
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Makes the receiver accept exactly the current communities and users (a no-op while they stay the same). */
  private syncCredentials(): void {
    const authorizer = this.receiver?.getAuthorizer();
    const credentials = this.options.credentials();
    const fingerprint = JSON.stringify(credentials);
    if (!authorizer || fingerprint === this.applied) return;
    this.applied = fingerprint;
    for (const community of authorizer.getCommunities().slice()) authorizer.deleteCommunity(community);
    for (const user of authorizer.getUsers().slice()) authorizer.deleteUser(user.name);
    for (const community of credentials.communities) authorizer.addCommunity(community);
    for (const user of credentials.users)
      authorizer.addUser({
        name: user.name,
        level: SecurityLevel.authPriv,
        authProtocol: AuthProtocols[user.authProtocol],
        authKey: user.authKey,
        privProtocol: PrivProtocols[user.privProtocol],
        privKey: user.privKey
      });
  }

  async stop(): Promise<void> {
    const receiver = this.receiver;
    this.receiver = null;
    this.bound = false;
    this.applied = "";
    if (!receiver) return;
    await Promise.all(this.sockets.map((socket) => new Promise<void>((done) => socket.close(() => done()))));
    this.sockets.length = 0;
  }

  private receive(error: ReceiverError | null, notification: Notification | null): void {
    // A socket error before the port is bound rejects start() (node's once() sees it); nothing to count.
    if (error && !error.rinfo && !this.bound) return;
    if (error || !notification) {
      const rinfo = error?.rinfo;
      this.options.onRefused({
        agent: rinfo?.address ?? "unknown",
        reason: refusalReason(error),
        size: rinfo?.size ?? 0
      });
      return;
    }
    const refuse = (reason: string) =>
      this.options.onRefused({agent: notification.rinfo.address, reason, size: notification.rinfo.size});
    const trap = trapOf(notification);
    if (!trap) return refuse("a notification without snmpTrapOID.0 as its second binding");
    // The receiver lets an SNMPv3 message with no user name and no authentication through; only authPriv gets in.
    if (trap.credential.kind === "user" && !trap.credential.name)
      return refuse("SNMPv3 without a user and authentication (noAuthNoPriv)");
    this.options.onTrap(trap);
  }
}

function refusalReason(error: ReceiverError | null): string {
  const message = error?.message ?? "unreadable packet";
  // The receiver names the community it did not know; a wrong community is a secret of someone else's.
  if (/community/i.test(message)) return "unknown community";
  if (/user/i.test(message) && /not found/i.test(message)) return "unknown SNMPv3 user";
  if (/digest/i.test(message)) return "wrong SNMPv3 authentication key (digest mismatch)";
  if (error?.name === "ProcessingError") return "malformed packet (not readable BER)";
  return message.length > 200 ? message.slice(0, 200) : message;
}

function trapOf({pdu, rinfo}: Notification): ReceivedTrap | null {
  const credential =
    pdu.community !== undefined
      ? {kind: "community" as const, name: pdu.community}
      : {kind: "user" as const, name: pdu.user ?? ""};
  const common = {agent: rinfo.address, credential, size: rinfo.size};
  if (pdu.type === PduType.Trap)
    return {...common, version: "v1", inform: false, trapOid: v1TrapOid(pdu), varbinds: pdu.varbinds.map(asText)};
  const [upTime, trapOid, ...rest] = pdu.varbinds;
  if (upTime?.oid !== SYS_UP_TIME || trapOid?.oid !== SNMP_TRAP_OID || typeof trapOid.value !== "string") return null;
  return {
    ...common,
    version: credential.kind === "user" ? "v3" : "v2c",
    inform: pdu.type === PduType.InformRequest,
    trapOid: trapOid.value,
    varbinds: rest.map(asText)
  };
}

/**
 * RFC 3584 section 3.1: a v1 generic trap becomes snmpTraps.(generic-trap + 1); an
 * enterpriseSpecific one becomes the enterprise, then 0, then the specific-trap number.
 */
function v1TrapOid(pdu: ReceivedPdu): string {
  if (pdu.generic !== ENTERPRISE_SPECIFIC) return `${SNMP_TRAPS}.${(pdu.generic ?? 0) + 1}`;
  return `${pdu.enterprise ?? ""}.0.${pdu.specific ?? 0}`;
}

function asText(varbind: ReceivedVarbind): TrapVarbind {
  return {oid: varbind.oid, value: valueText(varbind)};
}

function valueText({type, value}: ReceivedVarbind): string {
  if (Buffer.isBuffer(value)) {
    if (type === ObjectType.Counter64) return value.length ? BigInt(`0x${value.toString("hex")}`).toString() : "0";
    const text = value.toString("utf8");
    return type === ObjectType.OctetString && printable(text) ? text : `0x${value.toString("hex")}`;
  }
  // Integers, counters and time ticks arrive as numbers, OIDs and IP addresses as text, Null as null.
  if (typeof value === "number" || typeof value === "string" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  return "";
}

/** Text a person can read: no control characters but tab and line breaks, and valid UTF-8. */
function printable(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if ((code < 0x20 && char !== "\t" && char !== "\n" && char !== "\r") || code === 0x7f || code === 0xfffd)
      return false;
  }
  return true;
}
