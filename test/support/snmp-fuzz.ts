import {int, notificationPdu, octets, oid, PDU, seq, tlv, v2cMessage, v3NoAuthMessage} from "./snmp-ber.js";

/** A seeded PRNG (mulberry32): the same seed gives the same packets, so a failure can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What the fuzzer knows of the listener: the community and v3 user it lets in, captured authentic packets. */
export interface FuzzTarget {
  community: string;
  user: string;
  /** Real authPriv traps (from snmptrap): sent mutated, and now and then as they are (replays). */
  captured: Buffer[];
}

// Every universal and SNMP application tag a binding's value may carry (X.690, RFC 2578, RFC 3416),
// and a few that are none of them.
const VALUE_TAGS = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x40, 0x41, 0x42, 0x43, 0x44, 0x46, 0x47, 0x80, 0x81, 0x82];
const ODD_TAGS = [0x00, 0x09, 0x0c, 0x13, 0x1f, 0x30, 0x31, 0x45, 0x48, 0xa0, 0xff];

/**
 * Structure-aware SNMP packets: v1 traps, v2c traps and informs, SNMPv3 at noAuthNoPriv (no user,
 * a known user, a stranger; traps, informs, discoveries), v3 claiming authentication with a made-up
 * digest, and captured authPriv traps, with bindings of every BER type; then, for most, a
 * mutation: a truncation, a lie in a length, a flipped byte or trailing junk.
 */
export class SnmpFuzzer {
  constructor(
    private readonly random: () => number,
    private readonly target: FuzzTarget
  ) {}

  packet(): Buffer {
    const message = this.message();
    const roll = this.random();
    if (roll < 0.3) return message;
    if (roll < 0.5) return message.subarray(0, this.below(message.length));
    if (roll < 0.75) return this.lieInALength(message);
    if (roll < 0.9) return this.flip(message);
    return Buffer.concat([message, this.bytes(this.below(40) + 1)]);
  }

  private message(): Buffer {
    const roll = this.random();
    if (roll < 0.2) return this.v1Trap();
    if (roll < 0.5) return v2cMessage(this.community(), this.notification());
    if (roll < 0.75)
      return v3NoAuthMessage({
        user: this.pick(["", this.target.user, "stranger"]),
        engineId: this.random() < 0.3 ? Buffer.alloc(0) : this.bytes(5 + this.below(28)),
        pdu: this.random() < 0.2 ? tlv(0xa0, Buffer.concat([int(7), int(0), int(0), seq()])) : this.notification(),
        flags: this.pick([0x00, 0x04, 0x01, 0x05, 0x03, 0x07, this.below(256)])
      });
    if (roll < 0.85) return this.v3WithMadeUpDigest();
    const captured = this.pick(this.target.captured);
    return this.random() < 0.1 ? captured : this.flip(captured);
  }

  private v1Trap(): Buffer {
    const pdu = tlv(
      PDU.trap,
      Buffer.concat([
        oid(this.oidText()),
        tlv(0x40, this.bytes(this.pick([4, 4, 4, 0, 6]))),
        int(this.below(9)),
        int(this.below(100_000)),
        int(this.below(2 ** 31), 0x43),
        seq(...this.bindings())
      ])
    );
    return seq(int(0), octets(this.community()), pdu);
  }

  private v3WithMadeUpDigest(): Buffer {
    const security = seq(
      octets(this.bytes(13)),
      int(this.below(1000)),
      int(this.below(100_000)),
      octets(this.pick([this.target.user, "", "stranger"])),
      octets(this.bytes(this.pick([12, 16, 24, 32, 0]))),
      octets(this.bytes(this.pick([8, 0, 16])))
    );
    const body =
      this.random() < 0.5 ? octets(this.bytes(this.below(200))) : seq(octets(""), octets(""), this.notification());
    return seq(
      int(3),
      seq(int(this.below(2 ** 31)), int(65507), octets(Buffer.from([this.pick([0x03, 0x07, 0x01])])), int(3)),
      octets(security),
      body
    );
  }

  private notification(): Buffer {
    const tag = this.pick([PDU.trapV2, PDU.inform, PDU.trapV2, 0xa2, 0xa3, 0xa8]);
    return notificationPdu(tag, this.oidText(), this.bindings(), this.below(2 ** 31));
  }

  private bindings(): Buffer[] {
    return Array.from({length: this.below(6)}, () => seq(oid(this.oidText()), this.value()));
  }

  private value(): Buffer {
    const tag = this.random() < 0.9 ? this.pick(VALUE_TAGS) : this.pick(ODD_TAGS);
    if (tag === 0x06) return oid(this.oidText());
    if (tag === 0x05 && this.random() < 0.7) return tlv(0x05, Buffer.alloc(0));
    if (tag === 0x04 && this.random() < 0.5) return octets("UPS on battery, 12 min left");
    const length = this.pick([0, 1, 2, 4, 5, 8, 9, 12, this.below(300)]);
    return tlv(tag, this.bytes(length));
  }

  private oidText(): string {
    const arcs = Array.from({length: 2 + this.below(12)}, () =>
      this.pick([this.below(10), this.below(300), this.below(2 ** 31), 2 ** 32 + this.below(1000)])
    );
    return `1.3.${arcs.join(".")}`;
  }

  private community(): string {
    return this.random() < 0.7
      ? this.target.community
      : this.pick(["public", "", "plant", "x".repeat(this.below(300))]);
  }

  /** One length byte of the packet set to something else: short, long, long-form, indefinite. */
  private lieInALength(message: Buffer): Buffer {
    const copy = Buffer.from(message);
    const at = 1 + 2 * this.below(Math.max(1, Math.floor((copy.length - 1) / 2)));
    copy[at] = this.pick([0x00, 0x7f, 0x80, 0x81, 0x84, 0xff, copy[at] + 1, copy[at] - 1, this.below(256)]) & 0xff;
    return copy;
  }

  /** One bit flipped somewhere, sometimes a few more. */
  private flip(message: Buffer): Buffer {
    const copy = Buffer.from(message);
    for (let flips = 1 + (this.random() < 0.2 ? this.below(4) : 0); flips > 0 && copy.length; flips--)
      copy[this.below(copy.length)] ^= 1 << this.below(8);
    return copy;
  }

  private bytes(length: number): Buffer {
    const bytes = Buffer.alloc(length);
    for (let at = 0; at < length; at++) bytes[at] = this.below(256);
    return bytes;
  }

  private below(limit: number): number {
    return Math.floor(this.random() * limit);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)];
  }
}
