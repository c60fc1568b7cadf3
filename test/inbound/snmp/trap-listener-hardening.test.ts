import {createSocket, type Socket} from "node:dgram";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {TrapListener, type ReceivedTrap, type TrapRefusal} from "../../../src/inbound/snmp/trap-listener.js";
import {ManualClock} from "../../../src/lib/clock.js";
import {eventually} from "../../support/eventually.js";
import {bitStringBinding, notificationPdu, PDU, v2cMessage, v3NoAuthMessage} from "../../support/snmp-ber.js";
import {captureTrap, freeUdpPort, sendTrap, upsRoomUser} from "../../support/snmptrap.js";

const UPS_ON_BATTERY = "1.3.6.1.2.1.33.2.1";
const POWER_RESTORED = "1.3.6.1.4.1.318.0.9";
const user = upsRoomUser;

// One listener for the file (its parser worker takes a second or two to start), on a manual
// clock, so the replay guard's 150 s window is crossed without waiting.
const clock = new ManualClock(Date.UTC(2026, 10, 28, 8, 0, 0));
const traps: ReceivedTrap[] = [];
const refused: TrapRefusal[] = [];
let port = 0;
let listener: TrapListener;
let sender: Socket;
const replies: Buffer[] = [];

beforeAll(async () => {
  port = await freeUdpPort();
  listener = new TrapListener({
    port,
    address: "127.0.0.1",
    clock,
    onTrap: (trap) => traps.push(trap),
    onRefused: (refusal) => refused.push(refusal),
    credentials: () => ({
      communities: ["plant-traps"],
      users: [
        {name: user.name, authProtocol: "sha256", authKey: user.authKey, privProtocol: "aes", privKey: user.privKey}
      ]
    })
  });
  await listener.start();
  sender = createSocket("udp4");
  sender.on("message", (reply) => replies.push(reply));
  await new Promise<void>((done) => sender.bind(0, "127.0.0.1", done));
});
afterAll(async () => {
  await listener.stop();
  await new Promise<void>((done) => sender.close(() => done()));
});

async function send(datagram: Buffer, to = port): Promise<void> {
  await new Promise<void>((done, fail) =>
    sender.send(datagram, to, "127.0.0.1", (error) => (error ? fail(error) : done()))
  );
}

/** The next `count` refusals and traps after `send`, once both lists have grown by them. */
async function outcome(act: () => Promise<void>, want: {traps: number; refused: number}) {
  const [trapsBefore, refusedBefore] = [traps.length, refused.length];
  await act();
  await eventually(
    "the outcome",
    () => [traps.length - trapsBefore, refused.length - refusedBefore],
    ([taken, turned]) => taken === want.traps && turned === want.refused
  );
  return {traps: traps.slice(trapsBefore), refused: refused.slice(refusedBefore)};
}

describe("one unauthenticated UDP packet (issue 29, seen 1)", () => {
  it("an SNMPv3 inform with no user and no authentication, carrying a BIT STRING, is refused without any reply", async () => {
    const inform = v3NoAuthMessage({
      user: "",
      engineId: Buffer.from("80001f8880c0ffee0000000001", "hex"),
      pdu: notificationPdu(PDU.inform, UPS_ON_BATTERY, [bitStringBinding("1.3.6.1.2.1.2.2.1.7.1")])
    });
    const repliesBefore = replies.length;
    const seen = await outcome(() => send(inform), {traps: 0, refused: 1});
    expect(seen.refused[0].reason).toBe("SNMPv3 without a user and authentication (noAuthNoPriv)");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(replies.length).toBe(repliesBefore);
  });

  it("a v2c inform of the right community carrying a BIT STRING is taken and answered, the BIT STRING as NULL", async () => {
    const inform = v2cMessage(
      "plant-traps",
      notificationPdu(PDU.inform, UPS_ON_BATTERY, [bitStringBinding("1.3.6.1.2.1.2.2.1.7.1")], 0x4242)
    );
    const repliesBefore = replies.length;
    const seen = await outcome(() => send(inform), {traps: 1, refused: 0});
    expect(seen.traps[0]).toMatchObject({inform: true, varbinds: [{oid: "1.3.6.1.2.1.2.2.1.7.1", value: "10100101"}]});
    const [reply] = await eventually(
      "the answer",
      () => replies.slice(repliesBefore),
      (list) => list.length === 1
    );
    // A GetResponse (0xa2) with request id 0x4242, and the last binding's value a NULL (05 00).
    expect(reply.includes(Buffer.from([0xa2]))).toBe(true);
    expect(reply.includes(Buffer.from([0x02, 0x02, 0x42, 0x42]))).toBe(true);
    expect(reply.subarray(-2)).toEqual(Buffer.from([0x05, 0x00]));
    expect(listener.stats()?.parser).toMatchObject({running: true, crashes: {throw: 0, hang: 0, memory: 0, exit: 0}});
  });
});

describe("SNMPv3 replays (issue 29, seen 3)", () => {
  it("refuses a captured authPriv trap sent again, at once or 17 minutes later, while a fresh one passes", async () => {
    const restored = await captureTrap(user, POWER_RESTORED);
    const first = await outcome(() => send(restored), {traps: 1, refused: 0});
    expect(first.traps[0].trapOid).toBe(POWER_RESTORED);
    const again = await outcome(() => send(restored), {traps: 0, refused: 1});
    expect(again.refused[0].reason).toBe("SNMPv3 replay: the same message was already taken");
    const fresh = await outcome(() => sendTrap(port, {version: "3", user}, UPS_ON_BATTERY), {traps: 1, refused: 0});
    expect(fresh.traps[0].trapOid).toBe(UPS_ON_BATTERY);
    clock.advance(17 * 60_000);
    const later = await outcome(() => send(restored), {traps: 0, refused: 1});
    expect(later.refused[0].reason).toMatch(/outside the 150 s time window/);
    expect(listener.stats()?.replaysRefused).toBe(2);
  });

  it("answers SNMPv3 informs (discovery, then the inform) from snmptrap across the guard", async () => {
    const seen = await outcome(() => sendTrap(port, {version: "3", user, inform: true}, UPS_ON_BATTERY), {
      traps: 1,
      refused: 0
    });
    expect(seen.traps[0]).toMatchObject({version: "v3", inform: true});
  });
});
