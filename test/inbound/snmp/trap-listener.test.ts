import {execFile} from "node:child_process";
import {randomBytes} from "node:crypto";
import {promisify} from "node:util";
import {createSocket} from "node:dgram";
import {afterAll, afterEach, describe, expect, it} from "vitest";
import {
  TrapListener,
  type ReceivedTrap,
  type TrapCredentials,
  type TrapRefusal
} from "../../../src/inbound/snmp/trap-listener.js";
import {eventually} from "../../support/eventually.js";
import {freeUdpPort, sendBytes, sendTrap, upsRoomUser} from "../../support/snmptrap.js";

const run = promisify(execFile);
const NO_USER_V3_TRAP =
  "3079020103300d020107020205dc040100020103041d301b040d80001f8880c0ffee00000000030201000201000400040004003046" +
  "040d80001f8880c0ffee00000000030400a7330201010201000201003028300d06082b060102010103004301013017060a2b0601" +
  "0603010104010006092b0601060301010503";
const UPS_ON_BATTERY = "1.3.6.1.2.1.33.2.1";
const LINK_DOWN = "1.3.6.1.6.3.1.1.5.3";
const user = upsRoomUser;
const plantCredentials: TrapCredentials = {
  communities: ["plant-traps"],
  users: [{name: user.name, authProtocol: "sha256", authKey: user.authKey, privProtocol: "aes", privKey: user.privKey}]
};

const running: TrapListener[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((listener) => listener.stop()));
});

/** What the listener handed over since the test's listen(). */
interface Heard {
  port: number;
  traps: ReceivedTrap[];
  refused: TrapRefusal[];
}

// Starting a listener starts its parser worker (a second or more): the tests with the plant's
// credentials share one, each with lists of its own; a test with other credentials gets its own.
let shared: {listener: TrapListener; port: number; heard: Heard} | null = null;
afterAll(async () => {
  await shared?.listener.stop();
});

async function start(
  credentials: () => TrapCredentials,
  heard: () => Heard
): Promise<{listener: TrapListener; port: number}> {
  const port = await freeUdpPort();
  const listener = new TrapListener({
    port,
    address: "127.0.0.1",
    onTrap: (trap) => heard().traps.push(trap),
    onRefused: (refusal) => heard().refused.push(refusal),
    credentials
  });
  await listener.start();
  return {listener, port};
}

async function listen(credentials?: () => TrapCredentials): Promise<Heard> {
  if (credentials) {
    const heard: Heard = {port: 0, traps: [], refused: []};
    const {listener, port} = await start(credentials, () => heard);
    running.push(listener);
    return Object.assign(heard, {port});
  }
  if (!shared) {
    const started = await start(
      () => plantCredentials,
      () => shared!.heard
    );
    shared = {...started, heard: {port: started.port, traps: [], refused: []}};
  }
  shared.heard = {port: shared.port, traps: [], refused: []};
  return shared.heard;
}

describe("the SNMP trap listener, fed by Debian's snmptrap", () => {
  it("hands over a v2c trap with its community, OID and bindings", async () => {
    const {port, traps} = await listen();
    await sendTrap(port, {version: "2c", community: "plant-traps"}, UPS_ON_BATTERY, [
      ["1.3.6.1.2.1.33.1.2.3.0", "i", "12"],
      ["1.3.6.1.2.1.1.5.0", "s", "ups-hall-b"]
    ]);
    const [trap] = await eventually(
      "the trap",
      () => traps,
      (list) => list.length === 1
    );
    expect(trap).toMatchObject({
      agent: "127.0.0.1",
      version: "v2c",
      credential: {kind: "community", name: "plant-traps"},
      inform: false,
      trapOid: UPS_ON_BATTERY,
      varbinds: [
        {oid: "1.3.6.1.2.1.33.1.2.3.0", value: "12"},
        {oid: "1.3.6.1.2.1.1.5.0", value: "ups-hall-b"}
      ]
    });
  });

  it("answers a v2c inform (snmptrap -Ci returns only once answered)", async () => {
    const {port, traps} = await listen();
    await sendTrap(port, {version: "2c", community: "plant-traps", inform: true}, LINK_DOWN, [
      ["1.3.6.1.2.1.2.2.1.1.3", "i", "3"]
    ]);
    expect(traps).toEqual([expect.objectContaining({inform: true, trapOid: LINK_DOWN})]);
  });

  it("takes v3 authPriv traps and informs of a known user", async () => {
    const {port, traps} = await listen();
    await sendTrap(port, {version: "3", user}, LINK_DOWN, [["1.3.6.1.2.1.2.2.1.1.1", "i", "1"]]);
    await sendTrap(port, {version: "3", user, inform: true}, LINK_DOWN, [["1.3.6.1.2.1.2.2.1.1.2", "i", "2"]]);
    const received = await eventually(
      "both",
      () => traps,
      (list) => list.length === 2
    );
    expect(received.map((trap) => [trap.version, trap.credential, trap.inform])).toEqual([
      ["v3", {kind: "user", name: "ups-room"}, false],
      ["v3", {kind: "user", name: "ups-room"}, true]
    ]);
  });

  it("derives a v1 trap's OID as RFC 3584 says (APC's upsOnBattery: enterprise 318, specific 5)", async () => {
    const {port, traps} = await listen();
    await sendTrap(
      port,
      {
        version: "1",
        community: "plant-traps",
        enterprise: "1.3.6.1.4.1.318",
        generic: 6,
        specific: 5
      },
      ""
    );
    await sendTrap(
      port,
      {
        version: "1",
        community: "plant-traps",
        enterprise: "1.3.6.1.4.1.318",
        generic: 2,
        specific: 0
      },
      ""
    );
    const received = await eventually(
      "both",
      () => traps,
      (list) => list.length === 2
    );
    expect(received.map((trap) => [trap.version, trap.trapOid])).toEqual([
      ["v1", "1.3.6.1.4.1.318.0.5"],
      ["v1", LINK_DOWN]
    ]);
  });

  it("refuses a wrong community, a wrong v3 key and an unknown user without naming the secret", async () => {
    const {port, traps, refused} = await listen();
    await sendTrap(port, {version: "2c", community: "guessed"}, LINK_DOWN);
    await sendTrap(port, {version: "3", user: {...user, authKey: "not-the-phrase"}}, LINK_DOWN);
    await sendTrap(port, {version: "3", user: {...user, name: "stranger"}}, LINK_DOWN);
    const seen = await eventually(
      "three refusals",
      () => refused,
      (list) => list.length === 3
    );
    expect(seen.map((refusal) => refusal.agent)).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.1"]);
    expect(seen.map((refusal) => refusal.reason)).toEqual([
      "unknown community",
      "wrong SNMPv3 authentication key (digest mismatch)",
      "unknown SNMPv3 user"
    ]);
    expect(JSON.stringify(seen)).not.toContain("guessed");
    expect(traps).toEqual([]);
  });

  it("refuses an SNMPv3 trap without authentication, of a known user or of none", async () => {
    const {port, traps, refused} = await listen();
    const engine = "0x80001f8880c0ffee0000000002";
    await run("snmptrap", [
      "-v",
      "3",
      "-l",
      "noAuthNoPriv",
      "-u",
      user.name,
      "-e",
      engine,
      "-m",
      "",
      `udp:127.0.0.1:${port}`,
      "",
      LINK_DOWN
    ]);
    // snmptrap will not send an empty user name: a linkDown as SNMPv3, noAuthNoPriv, msgUserName "",
    // written out in BER (the receiver itself lets such a message through).
    await sendBytes(port, [Buffer.from(NO_USER_V3_TRAP, "hex")]);
    const seen = await eventually(
      "both refused",
      () => refused,
      (list) => list.length === 2
    );
    expect(seen.map((refusal) => refusal.reason)).toEqual([
      "SNMPv3 below authPriv for its user",
      "SNMPv3 without a user and authentication (noAuthNoPriv)"
    ]);
    expect(traps).toEqual([]);
  });

  it("follows a change of credentials from the next packet on", async () => {
    let current = plantCredentials;
    const {port, traps, refused} = await listen(() => current);
    await sendTrap(port, {version: "2c", community: "plant-traps"}, LINK_DOWN);
    await eventually(
      "the first",
      () => traps.length,
      (count) => count === 1
    );
    current = {communities: ["rotated"], users: []};
    await sendTrap(port, {version: "2c", community: "plant-traps"}, LINK_DOWN);
    await sendTrap(port, {version: "2c", community: "rotated"}, LINK_DOWN);
    await eventually(
      "one more each",
      () => [traps.length, refused.length],
      ([taken, turned]) => taken === 2 && turned === 1
    );
    expect(traps.map((trap) => trap.credential.name)).toEqual(["plant-traps", "rotated"]);
  });

  it("counts random bytes and truncated BER as refusals and keeps serving", async () => {
    const {port, traps, refused} = await listen();
    const junk = [
      ...Array.from({length: 20}, (_, size) => randomBytes(size * 7 + 1)),
      Buffer.from("302902010104067075626c6963a71c", "hex")
    ];
    await sendBytes(port, junk);
    await eventually(
      "every datagram refused",
      () => refused.length,
      (count) => count === junk.length
    );
    expect(new Set(refused.map((refusal) => refusal.reason))).toEqual(new Set(["malformed packet (not readable BER)"]));
    await sendTrap(port, {version: "2c", community: "plant-traps"}, LINK_DOWN);
    await eventually(
      "the trap after them",
      () => traps.length,
      (count) => count === 1
    );
  });

  it("rejects start when the port is taken", async () => {
    const holder = createSocket("udp4");
    await new Promise<void>((done) => holder.bind(0, "127.0.0.1", done));
    const listener = new TrapListener({
      port: holder.address().port,
      address: "127.0.0.1",
      onTrap: () => {},
      onRefused: () => {},
      credentials: () => plantCredentials
    });
    await expect(listener.start()).rejects.toThrow(/EADDRINUSE/);
    await new Promise<void>((done) => holder.close(() => done()));
  });
});
