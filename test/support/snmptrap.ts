import {execFile} from "node:child_process";
import {createSocket} from "node:dgram";
import {mkdtempSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {promisify} from "node:util";

const run = promisify(execFile);

/** Net-SNMP's state (v3 engine boots) in a directory of this test run, not /var/lib/snmp. */
const persistentDir = mkdtempSync(join(tmpdir(), "klaxon-snmptrap-"));

/** A UDP port on 127.0.0.1 that was free a moment ago (bound to 0, read, released). */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((done) => socket.bind(0, "127.0.0.1", done));
  const {port} = socket.address();
  await new Promise<void>((done) => socket.close(() => done()));
  return port;
}

/** One binding as snmptrap takes it: OID, type letter (i integer, s string, o OID...), value. */
export type Binding = [oid: string, type: string, value: string];

export interface V3User {
  name: string;
  authProtocol: "SHA" | "SHA-256" | "SHA-512" | "MD5";
  authKey: string;
  privProtocol: "AES" | "DES";
  privKey: string;
}

/** The v3 user of the listener tests (SHA-256 and AES, both keys long enough for snmptrap). */
export const upsRoomUser: V3User = {
  name: "ups-room",
  authProtocol: "SHA-256",
  authKey: "auth-phrase-1",
  privProtocol: "AES",
  privKey: "priv-phrase-1"
};

/** How the trap goes: a v2c community (optionally as an inform, which waits for the answer) or a v3 user. */
export type TrapSender =
  | {version: "1"; community: string; enterprise: string; generic: number; specific: number}
  | {version: "2c"; community: string; inform?: boolean}
  | {version: "3"; user: V3User; inform?: boolean};

function securityArgs(sender: TrapSender): string[] {
  if (sender.version !== "3") return ["-v", sender.version === "1" ? "1" : "2c", "-c", sender.community];
  const {user} = sender;
  return [
    "-v",
    "3",
    // A trap's authoritative engine is the sender's own; an inform discovers the receiver's.
    ...(sender.inform ? [] : ["-e", "0x80001f8880c0ffee0000000001"]),
    "-l",
    "authPriv",
    "-u",
    user.name,
    "-a",
    user.authProtocol,
    "-A",
    user.authKey,
    "-x",
    user.privProtocol,
    "-X",
    user.privKey
  ];
}

/**
 * Sends a trap (or an inform, resolving once it is answered) with Debian's snmptrap to
 * 127.0.0.1:`port`. `trapOid` is the notification's OID (v2c, v3) and ignored for v1.
 */
export async function sendTrap(
  port: number,
  sender: TrapSender,
  trapOid: string,
  bindings: Binding[] = []
): Promise<void> {
  const inform = sender.version !== "1" && sender.inform === true;
  const head =
    sender.version === "1"
      ? [sender.enterprise, "127.0.0.1", String(sender.generic), String(sender.specific), ""]
      : ["", trapOid];
  await run(
    "snmptrap",
    [
      ...(inform ? ["-Ci", "-r", "1", "-t", "3"] : []),
      ...securityArgs(sender),
      "-m",
      "",
      `udp:127.0.0.1:${port}`,
      ...head,
      ...bindings.flat()
    ],
    {env: {...process.env, SNMP_PERSISTENT_DIR: persistentDir, SNMPCONFPATH: persistentDir}, timeout: 15_000}
  );
}

/** One authPriv trap as snmptrap sends it, caught on a socket of ours instead of a listener's (to replay it later). */
export async function captureTrap(user: V3User, trapOid: string): Promise<Buffer> {
  const catcher = createSocket("udp4");
  await new Promise<void>((done) => catcher.bind(0, "127.0.0.1", done));
  const caught = new Promise<Buffer>((resolve) => catcher.once("message", resolve));
  await sendTrap(catcher.address().port, {version: "3", user}, trapOid, [["1.3.6.1.2.1.33.1.2.1.0", "i", "2"]]);
  const packet = await caught;
  await new Promise<void>((done) => catcher.close(() => done()));
  return packet;
}

/** Datagrams that are not SNMP at all, from a plain UDP socket. */
export async function sendBytes(port: number, datagrams: Buffer[]): Promise<void> {
  const socket = createSocket("udp4");
  for (const datagram of datagrams)
    await new Promise<void>((done, fail) =>
      socket.send(datagram, port, "127.0.0.1", (error) => (error ? fail(error) : done()))
    );
  await new Promise<void>((done) => socket.close(() => done()));
}
