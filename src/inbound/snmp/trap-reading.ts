// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- net-snmp ships no types; this names their declaration beside it (and shows depcruise that it is used)
/// <reference path="./net-snmp.d.ts" />
import {EventEmitter} from "node:events";
import {
  AuthProtocols,
  createReceiver,
  ObjectType,
  PduType,
  PrivProtocols,
  SecurityLevel,
  type ListenerSocket,
  type Message,
  type ReceivedPdu,
  type ReceivedVarbind,
  type Receiver,
  type ReceiverError
} from "net-snmp";
import {
  TIME_WINDOW_SECONDS,
  type ParserData,
  type ParserEvent,
  type Peer,
  type ReceivedTrap,
  type TrapCredentials,
  type TrapVarbind,
  type UsmStamp
} from "./trap-types.js";

// SNMPv2-MIB (RFC 3418, as bundled in net-snmp's lib/mibs/SNMPv2-MIB.mib): sysUpTime ::= { system 3 },
// snmpTrapOID ::= { snmpTrap 1 } with snmpTrap ::= { snmpMIBObjects 4 } = 1.3.6.1.6.3.1.1.4, and
// snmpTraps ::= { snmpMIBObjects 5 }, under which coldStart is 1 ... linkUp 4, authenticationFailure 5.
const SYS_UP_TIME = "1.3.6.1.2.1.1.3.0";
const SNMP_TRAP_OID = "1.3.6.1.6.3.1.1.4.1.0";
const SNMP_TRAPS = "1.3.6.1.6.3.1.1.5";
/** RFC 1157's generic-trap value for enterpriseSpecific. */
const ENTERPRISE_SPECIFIC = 6;
// net-snmp's UsmErrorType codes (RFC 3414 §3.2 report OIDs usmStats.N).
const UNKNOWN_USER_NAME = "3";
const NOT_IN_TIME_WINDOW = "2";
const UNKNOWN_ENGINE_ID = "4";
/** The value types net-snmp's writeVarbinds can encode; an inform's answer carries others as NULL. */
const WRITABLE_TYPES = new Set([1, 2, 4, 5, 6, 64, 65, 66, 67, 68, 70, 128, 129, 130]);

/**
 * Reads one datagram into a trap, a reply or a refusal, inside the parser worker. It uses
 * net-snmp's reading and USM checks (processIncoming: community, user, digest, decryption) but
 * decides itself what is answered, unlike net-snmp's Receiver, which echoes an inform before the
 * application sees it and throws when the echo cannot be encoded (docs/upstream/net-snmp-inform-echo.md):
 * - nothing below authPriv is answered, or taken, except an engine discovery (an empty request
 *   that gets our engine ID; it echoes nothing of the sender's);
 * - an unknown user or a wrong security level gets no report (net-snmp would send one);
 * - an inform's answer is built here, its unencodable bindings as NULL, and sent by the main
 *   thread only once the replay guard let the inform in.
 */
export class TrapReader {
  private readonly receiver: Receiver;
  private applied = "";

  constructor(engine: ParserData) {
    // The Receiver is made only for its parts (authorizer, engine, the listener's reader): the
    // socket it opens is a stand-in that never binds, so it never reads or answers a packet itself.
    const stand_in: ListenerSocket = Object.assign(new EventEmitter(), {
      bind: () => undefined,
      send: () => undefined,
      close: () => undefined
    });
    this.receiver = createReceiver(
      {port: 1, engineID: engine.engineId, dgramModule: {createSocket: () => stand_in}},
      () => undefined
    );
    this.receiver.engine.engineBoots = engine.engineBoots;
  }

  /** Makes the reader accept exactly these communities and users (a no-op while they stay the same). */
  apply(credentials: TrapCredentials): void {
    const fingerprint = JSON.stringify(credentials);
    if (fingerprint === this.applied) return;
    this.applied = fingerprint;
    const authorizer = this.receiver.getAuthorizer();
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

  read(bytes: Buffer, from: Peer, size: number, engineTime: number): ParserEvent {
    const refuse = (reason: string): ParserEvent => ({kind: "refused", refusal: {agent: from.address, reason, size}});
    let failure: ReceiverError | null = null;
    let incoming;
    try {
      incoming = this.receiver.listener.constructor.processIncoming(bytes, this.receiver.getAuthorizer(), (error) => {
        failure ??= error;
      });
    } catch {
      return refuse("malformed packet (not readable BER)");
    }
    if (!incoming) return refuse(refusalReason(failure));
    if ("report" in incoming)
      return refuse(
        incoming.errorType === UNKNOWN_USER_NAME ? "unknown SNMPv3 user" : "SNMPv3 below authPriv for its user"
      );
    const message = incoming;
    this.receiver.engine.engineTime = engineTime;
    if (message.version === 3 && !message.hasAuthentication()) {
      if (isDiscovery(message)) return {kind: "reply", bytes: this.report(message, UNKNOWN_ENGINE_ID), to: from};
      return refuse("SNMPv3 without a user and authentication (noAuthNoPriv)");
    }
    const usm = stampOf(message);
    if (usm && usm.engineId === this.receiver.engine.engineID.toString("hex") && !this.timely(usm, engineTime))
      return {kind: "reply", bytes: this.report(message, NOT_IN_TIME_WINDOW), to: from};
    const {type} = message.pdu;
    if (type !== PduType.Trap && type !== PduType.TrapV2 && type !== PduType.InformRequest)
      return refuse(`unexpected PDU type ${type}`);
    const trap = trapOf(message, from.address, size);
    if (!trap) return refuse("a notification without snmpTrapOID.0 as its second binding");
    return {kind: "trap", trap, usm, reply: trap.inform ? informAnswer(message) : null, from};
  }

  /**
   * RFC 3414 §3.2 step 7a, for a message to our own engine (an inform): same boots, time within
   * the window. The answer is a usmStatsNotInTimeWindows report with our time, so the sender
   * can resynchronise (after the gateway restarted, say).
   */
  private timely(usm: UsmStamp, engineTime: number): boolean {
    return usm.boots === this.receiver.engine.engineBoots && Math.abs(usm.time - engineTime) <= TIME_WINDOW_SECONDS;
  }

  private report(message: Message, errorType: string): Uint8Array {
    return message.createReportResponseMessage(this.receiver.engine, "", errorType).toBuffer();
  }
}

/** An SNMPv3 engine discovery (RFC 3414 §4): an unauthenticated, reportable GetRequest of no user. */
function isDiscovery(message: Message): boolean {
  return (
    message.pdu.type === PduType.GetRequest &&
    Boolean(message.isReportable()) &&
    !message.msgSecurityParameters?.msgUserName &&
    message.pdu.varbinds.length === 0
  );
}

function stampOf(message: Message): UsmStamp | null {
  const params = message.msgSecurityParameters;
  if (message.version !== 3 || !params) return null;
  return {
    engineId: Buffer.from(params.msgAuthoritativeEngineID).toString("hex"),
    boots: params.msgAuthoritativeEngineBoots,
    time: params.msgAuthoritativeEngineTime,
    digest: Buffer.from(params.msgAuthenticationParameters).toString("hex")
  };
}

/**
 * The Response to an InformRequest carries its bindings (RFC 3416 §4.2.7). net-snmp reads some
 * types it cannot write (BIT STRING): those go back as NULL rather than no answer. Null when
 * even that cannot be encoded: the inform is taken, unanswered, and the sender retries.
 */
function informAnswer(message: Message): Uint8Array | null {
  // The trap was read out of this message already: it is turned into its answer in place.
  message.pdu.type = PduType.GetResponse;
  message.pdu.varbinds = message.pdu.varbinds.map((varbind) =>
    WRITABLE_TYPES.has(varbind.type) ? varbind : {oid: varbind.oid, type: ObjectType.Null, value: null}
  );
  message.buffer = null;
  message.setReportable(false);
  try {
    return message.toBuffer();
  } catch {
    return null;
  }
}

function refusalReason(error: ReceiverError | null): string {
  const message = error?.message ?? "unreadable packet";
  // net-snmp names the community it did not know; a wrong community is a secret of someone else's.
  if (/community/i.test(message)) return "unknown community";
  if (/user/i.test(message) && /not found/i.test(message)) return "unknown SNMPv3 user";
  if (/digest/i.test(message)) return "wrong SNMPv3 authentication key (digest mismatch)";
  if (/decrypt/i.test(message)) return "wrong SNMPv3 privacy key (cannot decrypt)";
  if (/requires/i.test(message)) return "SNMPv3 below authPriv for its user";
  return message.length > 200 ? message.slice(0, 200) : message;
}

function trapOf(message: Message, agent: string, size: number): ReceivedTrap | null {
  const {pdu} = message;
  const credential =
    message.version !== 3
      ? {kind: "community" as const, name: message.community ?? ""}
      : {kind: "user" as const, name: message.user?.name ?? ""};
  const common = {agent, credential, size};
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
  return {oid: String(varbind.oid), value: valueText(varbind)};
}

function valueText({type, value}: ReceivedVarbind): string {
  if (Buffer.isBuffer(value)) {
    if (type === ObjectType.Counter64) return value.length ? BigInt(`0x${value.toString("hex")}`).toString() : "0";
    const text = value.toString("utf8");
    return type === ObjectType.OctetString && printable(text) ? text : `0x${value.toString("hex")}`;
  }
  // Integers, counters and time ticks arrive as numbers, OIDs, IP addresses and bit strings as text, Null as null.
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
