import {describe, expect, it} from "vitest";
import {parseIncomingSignal} from "../../src/modem/caller-id.js";

describe("incoming-call URCs", () => {
  it.each([
    ["RING", {kind: "ring"}],
    ["+CRING: VOICE", {kind: "ring"}],
    ['+CLIP: "+4915112345678",145,"",0,"",0', {kind: "caller", number: "+4915112345678"}],
    // Type 145 is international whether or not the modem prints the +.
    ['+CLIP: "4915112345678",145,"",0,"",0', {kind: "caller", number: "+4915112345678"}],
    ['+CLIP: "015112345678",129', {kind: "caller", number: "015112345678"}],
    ['+CLIP: "",128,"",0,"",1', {kind: "caller", number: null}],
    ['+CLIP: ""', {kind: "caller", number: null}],
    ["MISSED_CALL: 10:30AM +4915112345678", {kind: "gone"}],
    ["+CRING: DATA", null],
    ["RINGING", null],
    ["NO CARRIER", null],
    ['+CLCC: 1,1,4,0,0,"+4915112345678",145', null]
  ])("reads %j as %j", (line, signal) => {
    expect(parseIncomingSignal(line)).toEqual(signal);
  });
});
