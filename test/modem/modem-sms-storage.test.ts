import {describe, expect, it} from "vitest";
import {NUMBER, useModemOnSimulator} from "../support/modem-on-simulator.js";

const setup = useModemOnSimulator();

/** What a readable message from storage looks like, whatever form it was listed in. */
const received = (index: number, sender: string, text: string, form: "pdu" | "text") => ({
  index,
  form,
  raw: expect.any(String),
  problem: null,
  content: expect.objectContaining({kind: "deliver", sender, text})
});

describe("Modem SMS storage in text mode", () => {
  const textMode = {failCommands: ["AT+CMGF=0"]};

  it("lists every stored message in UCS-2, empty and URC-shaped ones included, with the charset back to IRA", async () => {
    const {simulator, modem} = await setup("sim800", textMode);
    simulator.receiveSms("015112345678", "1 4821", {announce: false});
    simulator.receiveSms("+4917000000000", "", {announce: false});
    simulator.receiveSms("+4917000000001", '+CMTI: "SM",9', {announce: false});
    expect(await modem.listMessages()).toEqual([
      received(1, "015112345678", "1 4821", "text"),
      received(2, "+4917000000000", "", "text"),
      received(3, "+4917000000001", '+CMTI: "SM",9', "text")
    ]);
    expect((await modem.listMessages())[0].content).toMatchObject({sentAt: "2026-11-22T09:00:00.000Z", concat: null});
    expect(simulator.received.at(-1)).toBe('AT+CSCS="IRA"');
  });

  it("falls back to a UCS-2 status for firmware that wants every string in the charset", async () => {
    const {simulator, modem} = await setup("quectel", {...textMode, hexStringParameters: true});
    simulator.receiveSms(NUMBER, "ACK 1", {announce: false});
    expect(await modem.listMessages()).toEqual([received(1, NUMBER, "ACK 1", "text")]);
    expect(simulator.count('AT+CMGL="0041004C004C"')).toBe(1);
  });

  it.each(["sim800", "sim7600", "quectel"] as const)(
    "lists in the plain charset on %s firmware that refuses the UCS-2 charset, without a last error",
    async (dialect) => {
      const {simulator, modem} = await setup(dialect, {failCommands: ["AT+CMGF=0", 'AT+CSCS="UCS2"']});
      simulator.receiveSms(NUMBER, "ACK 4821", {announce: false});
      expect(await modem.listMessages()).toEqual([received(1, NUMBER, "ACK 4821", "text")]);
      expect(simulator.received.filter((command) => command.startsWith("AT+CMGL"))).toEqual(['AT+CMGL="ALL"']);
      expect(await modem.readMessage(1)).toEqual(received(1, NUMBER, "ACK 4821", "text"));
      expect(modem.health().last_error).toBeNull();
    }
  );

  it.each(["sim800", "sim7600", "quectel"] as const)(
    "reads the PDUs %s firmware lists in text mode, instead of taking them for messages without a sender",
    async (dialect) => {
      const {simulator, modem} = await setup(dialect, textMode);
      simulator.sms.listsPdusInTextMode = true;
      simulator.receiveSms(NUMBER, "ACK 4821 über", {announce: false});
      expect(await modem.listMessages()).toEqual([
        {...received(1, NUMBER, "ACK 4821 über", "pdu"), raw: expect.stringMatching(/^[0-9A-F]+$/)}
      ]);
      expect(await modem.readMessage(1)).toEqual(received(1, NUMBER, "ACK 4821 über", "pdu"));
    }
  );
});

describe.each(["sim800", "sim7600", "quectel"] as const)("Modem SMS storage in PDU mode, %s", (dialect) => {
  it("lists with AT+CMGL=4: parts of a concatenated message, an alphanumeric sender, UCS-2, and one it cannot read", async () => {
    const {simulator, modem} = await setup(dialect);
    const [first, second] = simulator.sms.receiveParts(NUMBER, "ACK 4821, on my way to press 7", 2, false);
    simulator.receiveSms("Klaxon", "温度 ok", {announce: false});
    const broken = simulator.sms.receive({sender: NUMBER, text: "", rawPdu: "0004038121F3000099309251619580FF"}, false);
    const listed = await modem.listMessages();
    expect(simulator.received.filter((command) => command.startsWith("AT+CMGL"))).toEqual(["AT+CMGL=4"]);
    expect(listed).toEqual([
      received(first, NUMBER, "ACK 4821, on my", "pdu"),
      received(second, NUMBER, " way to press 7", "pdu"),
      received(3, "Klaxon", "温度 ok", "pdu"),
      {
        index: broken,
        form: "pdu",
        raw: "0004038121F3000099309251619580FF",
        content: null,
        problem: "user data shorter than its length says"
      }
    ]);
    expect(listed[0].content).toMatchObject({concat: {total: 2, sequence: 1}});
    expect(listed[1].content).toMatchObject({concat: {total: 2, sequence: 2}});
    expect(simulator.count('AT+CSCS="UCS2"')).toBe(0);
  });

  it("reports the storage's fill level from AT+CPMS?", async () => {
    const {simulator, modem} = await setup(dialect);
    expect(await modem.smsStorage()).toEqual({used: 0, total: 30});
    simulator.receiveSms(NUMBER, "hi", {announce: false});
    expect(await modem.smsStorage()).toEqual({used: 1, total: 30});
  });

  it("settles a status report it finds in storage (+CDSI) against the message it names", async () => {
    const {simulator, modem} = await setup(dialect, {
      smsRef: 9,
      statusReport: {outcome: "never", afterMs: 0, interleave: false}
    });
    const [{report}] = await modem.sendSms(NUMBER, "reported later");
    const index = simulator.sms.storeStatusReport(9, NUMBER, 0x00);
    expect(await modem.readMessage(index)).toMatchObject({content: {kind: "status_report", messageRef: 9, status: 0}});
    expect(await report).toMatchObject({outcome: "delivered"});
  });
});
