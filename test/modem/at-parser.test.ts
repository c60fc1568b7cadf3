import {describe, expect, it} from "vitest";
import {AtLineParser, classifyFinal, parseExtendedError} from "../../src/modem/at-parser.js";

function tokens(...chunks: string[]) {
  const parser = new AtLineParser();
  return chunks.flatMap((chunk) => parser.feed(chunk));
}

describe("AtLineParser", () => {
  it.each([
    ["plain framing", ["\r\nOK\r\n"], [{kind: "line", text: "OK"}]],
    ["SIMCom LTE double CR", ["\r\r\n+RXDTMF: 8\r\r\n"], [{kind: "line", text: "+RXDTMF: 8"}]],
    ["missing CR (Sierra)", ["\nNO CARRIER\n"], [{kind: "line", text: "NO CARRIER"}]],
    [
      "line split across chunks",
      ["\r\n+CS", "Q: 20,", "99\r\n\r\nOK\r\n"],
      [
        {kind: "line", text: "+CSQ: 20,99"},
        {kind: "line", text: "OK"}
      ]
    ],
    [
      "echo then answer",
      ["AT+CSQ\r\r\n+CSQ: 5,99\r\n\r\nOK\r\n"],
      [
        {kind: "line", text: "AT+CSQ"},
        {kind: "line", text: "+CSQ: 5,99"},
        {kind: "line", text: "OK"}
      ]
    ],
    ["SMS prompt without newline", ["\r\n> "], [{kind: "prompt"}]],
    ["prompt split from its CR LF", ["\r\n", ">", " "], [{kind: "prompt"}]],
    [
      "a prompt with a URC right behind it",
      ['\r\n> \r\n+CDS: 6,37,,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0\r\n'],
      [{kind: "prompt"}, {kind: "line", text: '+CDS: 6,37,,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0'}]
    ],
    [
      "URC inside a response",
      ['\r\n+CLCC: 1,0,3,0,0,"+49",145\r\n\r\n+CSQ: 9,99\r\n\r\nOK\r\n'],
      [
        {kind: "line", text: '+CLCC: 1,0,3,0,0,"+49",145'},
        {kind: "line", text: "+CSQ: 9,99"},
        {kind: "line", text: "OK"}
      ]
    ],
    [
      "a PDU-mode status report, joined to its PDU line, inside a response",
      ["\r\n+CDS: 25\r\n", "\r\n0006250C91945115325476\r\n\r\nOK\r\n"],
      [
        {kind: "line", text: "+CDS: 25,0006250C91945115325476"},
        {kind: "line", text: "OK"}
      ]
    ],
    [
      "a PDU-mode status report head whose PDU was lost, and the OK after it",
      ["\r\n+CDS: 25\r\n\r\nOK\r\n"],
      [
        {kind: "line", text: "+CDS: 25"},
        {kind: "line", text: "OK"}
      ]
    ],
    [
      "a text-mode status report as it is",
      ['\r\n+CDS: 6,37,,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0\r\n'],
      [{kind: "line", text: '+CDS: 6,37,,,"26/11/22,10:00:00+04","26/11/22,10:00:05+04",0'}]
    ]
  ])("splits %s", (_name, chunks, expected) => {
    expect(tokens(...chunks)).toEqual(expected);
  });

  it("keeps an unfinished line until its newline arrives", () => {
    const parser = new AtLineParser();
    expect(parser.feed("\r\n+CREG: 0,")).toEqual([]);
    expect(parser.feed("1\r\n")).toEqual([{kind: "line", text: "+CREG: 0,1"}]);
  });
});

describe("classifyFinal", () => {
  it.each([
    ["OK", false, {kind: "ok"}],
    ["ERROR", false, {kind: "error"}],
    ["CONNECT 115200", false, {kind: "connect", text: "CONNECT 115200"}],
    ["+CME ERROR: 10", false, {kind: "cme", code: 10, message: "SIM not inserted"}],
    ["+CME ERROR: incorrect password", false, {kind: "cme", code: 16, message: "incorrect password"}],
    ["+CME ERROR: SIM PIN required", false, {kind: "cme", code: 11, message: "SIM PIN required"}],
    ["+CMS ERROR: 331", false, {kind: "cms", code: 331, message: "no network service"}],
    ["+CMS ERROR: 321", false, {kind: "cms", code: 321, message: "invalid memory index"}],
    ["+CMS ERROR: 322", false, {kind: "cms", code: 322, message: "memory full"}],
    ["+CMS ERROR: 330", false, {kind: "cms", code: 330, message: "SMSC address unknown"}],
    ["+CMS ERROR: 500", false, {kind: "cms", code: 500, message: "unknown error"}],
    ["+CMS ERROR: (U)SIM not inserted", false, {kind: "cms", code: 310, message: "(U)SIM not inserted"}],
    ["+CMS ERROR: 42", false, {kind: "cms", code: 42, message: "congestion"}],
    ["+CMS ERROR: 515", false, {kind: "cms", code: 515, message: "manufacturer-specific error"}],
    ["+CME ERROR: 903", false, {kind: "cme", code: 903, message: "error code not in 3GPP TS 27.007"}],
    ["+CMS ERROR: Vendor specific thing", false, {kind: "cms", code: null, message: "Vendor specific thing"}],
    ["BUSY", true, {kind: "call_result", code: "BUSY"}],
    ["NO DIALTONE", true, {kind: "call_result", code: "NO DIALTONE"}],
    ["NO CARRIER", false, null],
    ["+CSQ: 20,99", false, null]
  ])("classifies %s (call results final: %s)", (line, callResultsAreFinal, expected) => {
    expect(classifyFinal(line, callResultsAreFinal)).toEqual(expected);
  });

  it("leaves lines that are not extended errors alone", () => {
    expect(parseExtendedError("+CMEE: 1")).toBeNull();
  });
});
