import {describe, expect, it} from "vitest";
import {asciiFallback, parseCmgl, parseCmgr, parseCmti} from "../../src/modem/sms-codec.js";

const HELLO_DELIVER = "07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37";

describe("reading a storage listing in the form the modem wrote it", () => {
  it.each([
    ['+CMTI: "SM",3', 3],
    ['+CDSI: "SM",12', 12],
    ['+CDS: 6,37,,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0', null],
    ["+CMTI: 3", null]
  ])("takes the storage index from %j", (line, index) => {
    expect(parseCmti(line)).toBe(index);
  });

  it("reads a PDU listing (AT+CMGL=4) with its length, whatever mode is set", () => {
    expect(parseCmgl(["+CMGL: 4,1,,24", HELLO_DELIVER], "IRA")).toEqual([
      {
        index: 4,
        form: "pdu",
        raw: HELLO_DELIVER,
        problem: null,
        content: {
          kind: "deliver",
          sender: "27838890001",
          text: "hellohello",
          sentAt: "1999-03-29T13:16:59.000Z",
          concat: null
        }
      }
    ]);
  });

  it("reads UCS-2 text, the time stamp included, and plain text as it is even when it looks like hex", () => {
    const ucs2 = parseCmgr(
      2,
      ['+CMGR: "REC READ","002B003400390031","","26/11/22,10:00:00-08"', "00410043004B"],
      "UCS2"
    );
    expect(ucs2?.content).toEqual({
      kind: "deliver",
      sender: "+491",
      text: "ACK",
      sentAt: "2026-11-22T12:00:00.000Z",
      concat: null
    });
    const plain = parseCmgl(['+CMGL: 1,"REC UNREAD","+4915112345678",,"26/11/22,10:00:00+04"', "ACAB"], "IRA");
    expect(plain[0].content).toMatchObject({sender: "+4915112345678", text: "ACAB"});
  });

  it("reads a status report stored in text form, and keeps an unreadable PDU with the reason", () => {
    const [report, broken] = parseCmgl(
      [
        '+CMGL: 5,"REC UNREAD",6,37,"+4915112345678",145,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0',
        "+CMGL: 6,0,,3",
        "0004FF"
      ],
      "IRA"
    );
    expect(report.content).toEqual({kind: "status_report", messageRef: 37, status: 0, recipient: "+4915112345678"});
    expect(broken).toEqual({index: 6, form: "pdu", raw: "0004FF", content: null, problem: "PDU cut short"});
  });

  it("gives an empty slot's CMGR (no header line) as null", () => {
    expect(parseCmgr(7, [], "UCS2")).toBeNull();
  });

  it("turns text for a modem without a DCS into plain ASCII", () => {
    expect(asciiFallback("Öl über 80 °C, Győr 🔥")).toBe("Ol uber 80 ?C, Gyor ?");
  });
});
