import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {bytesToHex} from "../../src/modem/sms-pdu-fields.js";
import {fromGsm7Septets, isGsm7, packSeptets, toGsm7Septets, unpackSeptets} from "../../src/modem/sms-gsm7.js";
import {decodePdu, encodeSubmit, PduError, pduEncodingFor, segmentText, submitPdus} from "../../src/modem/sms-pdu.js";

const GSM_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
const GSM_EXTENSION = "^{}\\[~]|€";
const gsmText = fc.string({unit: fc.constantFrom(...Array.from(GSM_BASIC + GSM_EXTENSION)), maxLength: 400});
const anyText = fc.string({unit: "grapheme", maxLength: 300});
const number = fc
  .tuple(fc.boolean(), fc.stringMatching(/^[0-9]{3,15}$/))
  .map(([plus, digits]) => (plus ? "+" : "") + digits);

// An SMS-DELIVER as a phone's network would hand it over, built from a SUBMIT's user data: only
// the fields before the user data differ, so every text and header case of SUBMIT is covered.
function deliverFrom(submitHex: string, sender = "0B914151927491F6", timestamp = "62112220000004"): string {
  const tpdu = submitHex.slice(2);
  const firstOctet = parseInt(tpdu.slice(0, 2), 16);
  const addressDigits = parseInt(tpdu.slice(4, 6), 16);
  const afterAddress = 4 + 4 + Math.ceil(addressDigits / 2) * 2;
  const dcs = tpdu.slice(afterAddress + 2, afterAddress + 4);
  const userData = tpdu.slice(afterAddress + 6);
  const deliverFirst = (firstOctet & 0x40) | 0x04;
  return `00${deliverFirst.toString(16).padStart(2, "0")}${sender}00${dcs}${timestamp}${userData}`;
}

describe("GSM 7-bit alphabet", () => {
  it("packs the classic 'hellohello' into E8329BFD4697D9EC37 and back", () => {
    const septets = toGsm7Septets("hellohello");
    expect(bytesToHex(packSeptets(septets))).toBe("E8329BFD4697D9EC37");
    expect(fromGsm7Septets(unpackSeptets(Buffer.from("E8329BFD4697D9EC37", "hex"), 10))).toBe("hellohello");
  });

  it("has 127 characters in its default table (the 128th is the escape) and € [ ] { } ~ ^ \\ | in its extension", () => {
    expect(new Set(GSM_BASIC).size).toBe(127);
    expect(toGsm7Septets("€")).toEqual([0x1b, 0x65]);
    expect(toGsm7Septets("[]{}~^\\|")).toHaveLength(16);
    expect(toGsm7Septets("éü£")).toEqual([0x05, 0x7e, 0x01]);
  });

  it("needs UCS-2 only for characters outside the alphabet: not for é, ü or £, but for ő, Chinese or an emoji", () => {
    expect(pduEncodingFor("Öltemperatur über 80 €, 5 £, café")).toBe("gsm7");
    for (const text of ["Győr", "温度", "🔥", "`"]) expect(pduEncodingFor(text)).toBe("ucs2");
  });

  it("round-trips any text of the alphabet, with any fill before it", () => {
    fc.assert(
      fc.property(gsmText, fc.integer({min: 0, max: 6}), (text, fill) => {
        const septets = toGsm7Septets(text);
        expect(fromGsm7Septets(unpackSeptets(packSeptets(septets, fill), septets.length, fill))).toBe(text);
      })
    );
  });

  it("refuses a character outside the alphabet", () => {
    expect(isGsm7("ő")).toBe(false);
    expect(() => toGsm7Septets("ő")).toThrow(RangeError);
  });
});

describe("SMS-SUBMIT", () => {
  it("encodes the well-known example: 'hellohello' to +46708251358, validity 4 days", () => {
    expect(
      encodeSubmit({number: "+46708251358", text: "hellohello", encoding: "gsm7", statusReport: false, validity: 0xaa})
    ).toEqual({
      pdu: "0011000B916407281553F80000AA0AE8329BFD4697D9EC37",
      tpduLength: 23
    });
  });

  it("asks for a status report with TP-SRR and writes UCS-2 big-endian with DCS 8", () => {
    expect(encodeSubmit({number: "0151234", text: "温度", encoding: "ucs2", statusReport: true}).pdu).toBe(
      "0031000781101532F40008A7046E295EA6"
    );
  });

  it("splits a long GSM-7 text into 153-septet parts with an 8-bit reference header, never inside an escape pair", () => {
    const text = `${"x".repeat(152)}€${"y".repeat(10)}`;
    expect(segmentText(text)).toEqual(["x".repeat(152), `€${"y".repeat(10)}`]);
    const [first] = submitPdus("+4915112345678", text, {statusReport: true, reference: 0x42});
    // UDHI + SRR + SUBMIT; UDL 159 = 7 header septets + 152 (the € would need 154); header 05 00 03 42 02 01.
    expect(first.pdu.slice(0, 4)).toBe("0071");
    expect(first.pdu.slice(first.pdu.indexOf("A7") + 2, first.pdu.indexOf("A7") + 16)).toBe("9F050003420201");
  });

  it("fits 160 septets or 70 UCS-2 units in one SMS, and 153 / 67 per part beyond", () => {
    expect(segmentText("a".repeat(160))).toHaveLength(1);
    expect(segmentText("a".repeat(161)).map((part) => part.length)).toEqual([153, 8]);
    expect(segmentText("ő".repeat(70))).toHaveLength(1);
    expect(segmentText("ő".repeat(71)).map((part) => part.length)).toEqual([67, 4]);
    // 66 units then an emoji (2 units) would make 68: the emoji opens the next part whole.
    expect(segmentText(`${"ő".repeat(66)}🔥${"ő".repeat(10)}`).map((part) => part.length)).toEqual([66, 12]);
  });

  it("carries any text unchanged through submit parts read back as deliver parts", () => {
    fc.assert(
      fc.property(fc.oneof(gsmText, anyText), number, fc.integer({min: 0, max: 255}), (text, to, reference) => {
        const parts = submitPdus(to, text, {statusReport: true, reference});
        const read = parts.map((part) => decodePdu(deliverFrom(part.pdu)));
        expect(read.map((part) => (part.kind === "deliver" ? part.text : "")).join("")).toBe(text);
        for (const [index, part] of read.entries()) {
          expect(part).toMatchObject({
            kind: "deliver",
            sender: "+14152947196",
            concat: parts.length > 1 ? {reference, total: parts.length, sequence: index + 1} : null
          });
        }
        for (const part of parts) expect(part.pdu.length / 2 - 1).toBe(part.tpduLength);
      })
    );
  });
});

describe("SMS-DELIVER and SMS-STATUS-REPORT", () => {
  it("reads the well-known deliver: 'hellohello' from 27838890001, 29 March 1999 15:16:59 at UTC+2", () => {
    expect(decodePdu("07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37")).toEqual({
      kind: "deliver",
      sender: "27838890001",
      text: "hellohello",
      sentAt: "1999-03-29T13:16:59.000Z",
      concat: null
    });
  });

  it("reads an alphanumeric sender, a negative time zone and a 16-bit concatenation reference", () => {
    // "Klaxon": 6 septets = 42 bits in 11 semi-octets, type D0 (alphanumeric).
    const sender = `0BD0${bytesToHex(packSeptets(toGsm7Septets("Klaxon")))}`;
    // 22 Nov 2026 02:00 local; zone octet 0x29: sign bit set, 12 quarter hours, so UTC-3.
    const pdu = `0044${sender}000862112220000029${"0B060804ABCD020200F600FC"}`;
    expect(decodePdu(pdu)).toEqual({
      kind: "deliver",
      sender: "Klaxon",
      text: "öü",
      sentAt: "2026-11-22T05:00:00.000Z",
      concat: {reference: 0xabcd, total: 2, sequence: 2}
    });
  });

  it("reads a status report: reference, recipient and TP-Status", () => {
    const tpdu = "06250C91945115325476621122100000046211221000050446";
    const report = {kind: "status_report", messageRef: 0x25, recipient: "+491551234567", status: 0x46};
    expect(decodePdu(`00${tpdu}`, 25)).toEqual(report);
    // +CDS in PDU mode from a modem that leaves the service centre out: the length says so.
    expect(decodePdu(tpdu, 25)).toEqual(report);
  });

  it.each([
    ["not hex", "ZZ"],
    ["cut short", "07917283010010F5040BC8723888"],
    ["a submit", "0011000B916407281553F80000AA0AE8329BFD4697D9EC37"],
    ["user data shorter than its length", "07917283010010F5040BC87238880900F10000993092516195800FE8329BFD4697D9EC37"],
    ["an impossible date", "0004038121F30000621322200000040161"]
  ])("refuses %s", (_case, pdu) => {
    expect(() => decodePdu(pdu)).toThrow(PduError);
  });

  it("never throws anything but PduError on arbitrary octets", () => {
    fc.assert(
      fc.property(fc.uint8Array({maxLength: 180}), (octets) => {
        try {
          decodePdu(bytesToHex(octets));
        } catch (error) {
          expect(error).toBeInstanceOf(PduError);
        }
      })
    );
  });
});
