import {EventEmitter} from "node:events";
import {describe, expect, it} from "vitest";
import {AtCommandError, AtSession, type AtPort} from "../../src/modem/at-session.js";

/** A port the test plays the modem on: it sees every write and pushes bytes back. */
class FakePort extends EventEmitter implements AtPort {
  readonly writes: string[] = [];
  private waiters: (() => void)[] = [];

  write(data: string | Buffer): void {
    this.writes.push(data.toString());
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Resolves once `count` writes have happened. */
  async written(count: number): Promise<string[]> {
    while (this.writes.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.writes;
  }

  modem(text: string): void {
    this.emit("data", Buffer.from(text, "latin1"));
  }
}

function setup(timeoutMs = 1000, urcPrefixes: string[] = []) {
  const port = new FakePort();
  const session = new AtSession(port, timeoutMs, urcPrefixes);
  const urcs: string[] = [];
  session.on("urc", (line) => urcs.push(line));
  return {port, session, urcs};
}

describe("AtSession", () => {
  it("collects the expected prefix and hands a URC inside the response to the bus", async () => {
    const {port, session, urcs} = setup();
    const reply = session.send("AT+CSQ", {prefixes: ["+CSQ:"]});
    await port.written(1);
    port.modem('\r\n+CSQ: 17,99\r\n\r\n+CLCC: 1,0,3,0,0,"+49",145\r\n\r\nOK\r\n');
    expect(await reply).toMatchObject({lines: ["+CSQ: 17,99"], final: {kind: "ok"}});
    expect(urcs).toEqual(['+CLCC: 1,0,3,0,0,"+49",145']);
  });

  it("tolerates echo of the command", async () => {
    const {port, session} = setup();
    const reply = session.send("AT+CREG?", {prefixes: ["+CREG:"]});
    await port.written(1);
    port.modem("AT+CREG?\r\r\n+CREG: 0,1\r\n\r\nOK\r\n");
    expect((await reply).lines).toEqual(["+CREG: 0,1"]);
  });

  it("treats lines nobody asked for as URCs while idle, NO CARRIER included", () => {
    const {port, urcs} = setup();
    port.modem("\r\nRING\r\n\r\nNO CARRIER\r\n\r\r\n+RXDTMF: 5\r\r\n");
    expect(urcs).toEqual(["RING", "NO CARRIER", "+RXDTMF: 5"]);
  });

  it("keeps profile URCs without a + out of bare command responses", async () => {
    const {port, session, urcs} = setup(1000, ["SMS Ready"]);
    const reply = session.send("ATI");
    await port.written(1);
    port.modem("\r\nSIM800 R14.18\r\n\r\nSMS Ready\r\n\r\nOK\r\n");
    expect((await reply).lines).toEqual(["SIM800 R14.18"]);
    expect(urcs).toEqual(["SMS Ready"]);
  });

  it("ends a dial on BUSY only when told that call results are final", async () => {
    const {port, session, urcs} = setup();
    const dial = session.send("ATD+4915112345678;", {callResultsAreFinal: true});
    await port.written(1);
    port.modem("\r\nBUSY\r\n");
    await expect(dial).rejects.toMatchObject({kind: "call_result", reason: "BUSY"});
    const csq = session.send("AT+CSQ", {prefixes: ["+CSQ:"]});
    await port.written(2);
    port.modem("\r\nNO CARRIER\r\n\r\n+CSQ: 1,99\r\n\r\nOK\r\n");
    await csq;
    expect(urcs).toEqual(["NO CARRIER"]);
  });

  it.each([
    ["+CME ERROR: 10", "cme", 10],
    ["+CME ERROR: SIM not inserted", "cme", 10],
    ["+CMS ERROR: 330", "cms", 330],
    ["+CMS ERROR: 321", "cms", 321],
    ["ERROR", "error", null]
  ])("rejects %s with kind %s and code %s", async (line, kind, code) => {
    const {port, session} = setup();
    const reply = session.send("AT+CPIN?", {prefixes: ["+CPIN:"]});
    await port.written(1);
    port.modem(`\r\n${line}\r\n`);
    const error = await reply.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AtCommandError);
    expect(error).toMatchObject({kind, code});
  });

  it("keeps one command in flight and answers the queue in order", async () => {
    const {port, session} = setup();
    const first = session.send("AT+CSQ", {prefixes: ["+CSQ:"]});
    const second = session.send("AT+COPS?", {prefixes: ["+COPS:"]});
    expect(await port.written(1)).toEqual(["AT+CSQ\r"]);
    port.modem("\r\n+CSQ: 3,99\r\n\r\nOK\r\n");
    expect(await port.written(2)).toEqual(["AT+CSQ\r", "AT+COPS?\r"]);
    port.modem("\r\n+COPS: 0\r\n\r\nOK\r\n");
    expect((await first).lines).toEqual(["+CSQ: 3,99"]);
    expect((await second).lines).toEqual(["+COPS: 0"]);
  });

  it("times a command out on its own timeout and moves on to the next", async () => {
    const {port, session} = setup(1000);
    const slow = session.send("AT+COPS=?", {timeoutMs: 30});
    const next = session.send("AT");
    await expect(slow).rejects.toMatchObject({kind: "timeout"});
    await port.written(2);
    port.modem("\r\nOK\r\n");
    await expect(next).resolves.toMatchObject({final: {kind: "ok"}});
  });

  it("sends the SMS text raw with Ctrl-Z only after the prompt", async () => {
    const {port, session} = setup();
    const sms = session.send('AT+CMGS="+4915112345678"', {prefixes: ["+CMGS:"], payload: "Disk full on db1"});
    await port.written(1);
    expect(port.writes).toEqual(['AT+CMGS="+4915112345678"\r']);
    port.modem("\r\n> ");
    expect(await port.written(2)).toEqual(['AT+CMGS="+4915112345678"\r', "Disk full on db1\x1a"]);
    port.modem("\r\n+CMGS: 37\r\n\r\nOK\r\n");
    expect((await sms).lines).toEqual(["+CMGS: 37"]);
  });

  it.each([
    ["+CMS ERROR: 321", "+CMS ERROR: 321 (invalid memory index)"],
    ["+CMS ERROR: invalid memory index", "+CMS ERROR: 321 (invalid memory index)"],
    ["+CME ERROR: 30", "+CME ERROR: 30 (no network service)"],
    ["+CMS ERROR: Vendor specific thing", "+CMS ERROR: Vendor specific thing"]
  ])("names %s in words: %s", async (line, reason) => {
    const {port, session} = setup();
    const reply = session.send("AT+CMGR=7");
    await port.written(1);
    port.modem(`\r\n${line}\r\n`);
    await expect(reply).rejects.toMatchObject({reason, message: `AT+CMGR=7: ${reason}`});
  });

  it("names a secret command by its label in errors", async () => {
    const {port, session} = setup();
    const reply = session.send('AT+CPIN="4321"', {label: "AT+CPIN=<pin>"});
    await port.written(1);
    port.modem("\r\n+CME ERROR: 16\r\n");
    const error = (await reply.catch((caught: unknown) => caught)) as Error;
    expect(error.message).toBe("AT+CPIN=<pin>: +CME ERROR: 16 (incorrect password)");
  });

  it("fails the command in flight and the queue when closed", async () => {
    const {session} = setup();
    const first = session.send("AT");
    const second = session.send("AT+CSQ");
    session.close("modem disconnected");
    await expect(first).rejects.toMatchObject({kind: "closed"});
    await expect(second).rejects.toMatchObject({kind: "closed"});
    await expect(session.send("AT")).rejects.toMatchObject({kind: "closed"});
  });
});
