/**
 * SNMP messages written out in BER by hand, for packets no stock tool will send: an SNMPv3
 * message with no user, a BIT STRING binding, any BER type, lies in a length. Plain TLV writing
 * (X.690 definite lengths); nothing here checks what it writes.
 */

/** One TLV: the tag byte, the definite length, the contents. */
export function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let head: Buffer;
  if (length < 0x80) head = Buffer.from([tag, length]);
  else if (length < 0x100) head = Buffer.from([tag, 0x81, length]);
  else head = Buffer.from([tag, 0x82, length >> 8, length & 0xff]);
  return Buffer.concat([head, content]);
}

export const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
export const octets = (value: string | Buffer, tag = 0x04) =>
  tlv(tag, typeof value === "string" ? Buffer.from(value) : value);

/** A two's-complement INTEGER (or another integer-shaped tag: Counter32 0x41, Gauge 0x42, TimeTicks 0x43). */
export function int(value: number, tag = 0x02): Buffer {
  const bytes: number[] = [];
  let rest = value;
  do {
    bytes.unshift(rest & 0xff);
    rest = Math.floor(rest / 256);
  } while (rest !== 0 && rest !== -1);
  if (value >= 0 && (bytes[0] & 0x80) !== 0) bytes.unshift(0);
  return tlv(tag, Buffer.from(bytes));
}

export function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

export const SYS_UP_TIME = "1.3.6.1.2.1.1.3.0";
export const SNMP_TRAP_OID = "1.3.6.1.6.3.1.1.4.1.0";
/** PDU tags: v1 Trap, InformRequest, SNMPv2-Trap. */
export const PDU = {trap: 0xa4, inform: 0xa6, trapV2: 0xa7} as const;

/** A v2 notification PDU (trap or inform): sysUpTime.0, snmpTrapOID.0, then the given bindings. */
export function notificationPdu(tag: number, trapOid: string, bindings: Buffer[], requestId = 0x1234): Buffer {
  return tlv(
    tag,
    Buffer.concat([
      int(requestId),
      int(0),
      int(0),
      seq(seq(oid(SYS_UP_TIME), int(100, 0x43)), seq(oid(SNMP_TRAP_OID), oid(trapOid)), ...bindings)
    ])
  );
}

/** A BIT STRING binding (type 3): the one net-snmp reads but cannot write back. */
export const bitStringBinding = (at: string) => seq(oid(at), tlv(0x03, Buffer.from([0x00, 0xa5])));

export const v2cMessage = (community: string, pdu: Buffer) => seq(int(1), octets(community), pdu);

/** An SNMPv3 message at noAuthNoPriv (msgFlags `flags`, default reportable): no digest, plain scoped PDU. */
export function v3NoAuthMessage(options: {user: string; engineId: Buffer; pdu: Buffer; flags?: number}): Buffer {
  const security = seq(octets(options.engineId), int(0), int(0), octets(options.user), octets(""), octets(""));
  return seq(
    int(3),
    seq(int(0x2345), int(65507), octets(Buffer.from([options.flags ?? 0x04])), int(3)),
    octets(security),
    seq(octets(options.engineId), octets(""), options.pdu)
  );
}
