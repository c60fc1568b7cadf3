import {callResultCode, type CallResultCode} from "./at-parser.js";
import {ucs2Hex} from "./sms-codec.js";

// The three dialects differ in TTS, DTMF and call-state reporting (PROTOCOLS 1.2-1.4); everything
// else (framing, CMGS, health queries) is 3GPP and lives in the session and the modem.

export type ProfileName = "sim800" | "sim7600" | "quectel";

/** Features an optional init command switches on; a modem answering ERROR leaves them off. */
export type Capability =
  "tts" | "dtmf" | "call_urcs" | "caller_id" | "sms_notifications" | "sms_status_reports" | "sms_pdu";

/** One command of the init sequence, re-applied after every (re)open and reset. */
export interface InitStep {
  command: string;
  /** Optional steps may answer ERROR (older firmware) without failing the open. */
  optional: boolean;
  /** The capability this step enables; absent when the step only tunes behaviour. */
  capability?: Capability;
}

export type CallState = "dialing" | "alerting" | "active" | "held" | "ended";

/** What a line says about our outgoing call: a state change, or a result code such as BUSY. */
export type CallSignal = {kind: "state"; state: CallState} | {kind: "result"; code: CallResultCode};

/** A modem dialect: the commands and URC shapes that differ between module families. */
export interface ModemProfile {
  name: ProfileName;
  /** Sent after ATE0 / CMEE / CMGF, which every family shares. */
  init: InitStep[];
  /** Lines that are always unsolicited for this family, even while a bare command is in flight. */
  urcPrefixes: string[];
  hangUpCommand: string;
  /** The command that speaks `text` to the far end of the active call; throws RangeError if too long. */
  speakCommand(text: string): string;
  /** The most bytes one speak command takes once encoded (see ttsArgument); longer text is split. */
  maxSpeechBytes: number;
  /** Prefix of the URC that reports the end of speech, if the family sends one. */
  speechDonePrefix: string | null;
  /** The key a DTMF URC reports, or null if the line is not one. */
  parseKey(line: string): string | null;
  /** Call state from a URC (or a polled +CLCC line), or null if unrelated or not our outgoing call. */
  parseCallSignal(line: string): CallSignal | null;
  /**
   * Asked after the SIM says READY, for families whose SIM keeps initialising after that: the SIM
   * counts as ready only once `ready(line)` holds. A modem answering ERROR does not have it.
   */
  simReadyQuery?: {command: string; prefix: string; ready(line: string): boolean};
  /** Routes URCs to the port we read (Quectel sends them to one chosen port only). */
  urcPortCommand?(port: string): string;
}

// Every family: SMS arrival as +CMTI with the storage index, on the SIM (so a reply survives a
// modem swap), and a plain charset between SMS operations. Optional: the defaults often match.
// Status reports: CSMS service 0 lets the modem acknowledge +CDS to the network itself (service 1
// would want an AT+CNMA for each, and stop reporting until it came); then CNMI again with <ds>=1,
// which a modem without status reports refuses while keeping the <ds>=0 setting before it.
// PDU mode where the modem takes it (concatenated SMS, the whole GSM alphabet, PDUs listed as
// they are); a modem refusing CMGF=0 stays in the text mode set before.
const COMMON_INIT: InitStep[] = [
  {command: "AT+CMGF=0", optional: true, capability: "sms_pdu"},
  {command: 'AT+CSCS="IRA"', optional: true},
  {command: 'AT+CPMS="SM","SM","SM"', optional: true},
  {command: "AT+CNMI=2,1,0,0,0", optional: true, capability: "sms_notifications"},
  {command: "AT+CSMS=0", optional: true},
  {command: "AT+CNMI=2,1,0,1,0", optional: true, capability: "sms_status_reports"},
  // Caller id (+CLIP after each RING): a recipient calling the modem is answered, a stranger is not.
  {command: "AT+CLIP=1", optional: true, capability: "caller_id"}
];

const COMMON_URCS = [
  "RING",
  "+CRING:",
  "+CLIP:",
  "+CMTI:",
  "+CDS:",
  "MISSED_CALL:",
  "Call Ready",
  "SMS Ready",
  "+CPIN:",
  "+CFUN:"
];

export const PROFILES: Record<ProfileName, ModemProfile> = {
  sim800: {
    name: "sim800",
    init: [
      ...COMMON_INIT,
      {command: "AT+COLP=0", optional: true},
      {command: "AT+CLCC=1", optional: true, capability: "call_urcs"},
      {command: "AT+DDET=1,0,0", optional: true, capability: "dtmf"},
      // TTS exists only in some (mostly Chinese) firmware: probe it rather than assume.
      {command: "AT+CTTS=?", optional: true, capability: "tts"}
    ],
    urcPrefixes: [...COMMON_URCS, "+DTMF:", "+CTTS:"],
    hangUpCommand: "ATH",
    speakCommand: (text) => `AT+CTTS=${ttsArgument(text, 500)}`,
    maxSpeechBytes: 500,
    speechDonePrefix: "+CTTS:",
    parseKey: (line) => keyAfter(line, "+DTMF:"),
    parseCallSignal: (line) => callResultSignal(line) ?? parseClcc(line)
  },
  sim7600: {
    name: "sim7600",
    init: [
      ...COMMON_INIT,
      {command: "AT+COLP=0", optional: true},
      {command: "AT+CLCC=1", optional: true, capability: "call_urcs"},
      // CDTAM=1 sends CTTS to the far end; without it the speech plays on the module's own speaker.
      {command: "AT+CDTAM=1", optional: true, capability: "tts"},
      // +RXDTMF is on by default on the firmware in public logs; DDET is harmless where it exists.
      {command: "AT+DDET=1", optional: true}
    ],
    urcPrefixes: [...COMMON_URCS, "+RXDTMF:", "VOICE CALL:", "+CTTS:"],
    hangUpCommand: "AT+CHUP",
    speakCommand: (text) => `AT+CTTS=${ttsArgument(text, 500)}`,
    maxSpeechBytes: 500,
    speechDonePrefix: "+CTTS:",
    parseKey: (line) => keyAfter(line, "+RXDTMF:"),
    parseCallSignal: (line) => {
      if (line.startsWith("VOICE CALL: BEGIN")) return {kind: "state", state: "active"};
      if (line.startsWith("VOICE CALL: END")) return {kind: "state", state: "ended"};
      return callResultSignal(line) ?? parseClcc(line);
    }
  },
  quectel: {
    name: "quectel",
    init: [
      ...COMMON_INIT,
      {command: "AT+COLP=0", optional: true},
      // Quectel has no +CLCC URCs; ^DSCI reports call state instead (polling +CLCC otherwise).
      {command: "AT^DSCI=1", optional: true, capability: "call_urcs"},
      {command: "AT+QWTTS=?", optional: true, capability: "tts"},
      // Reverts to 0 after every reset, hence part of the init sequence.
      {command: "AT+QTONEDET=1", optional: true, capability: "dtmf"}
    ],
    urcPrefixes: [...COMMON_URCS, "+QTONEDET:", "+QWTTS:", "+QTTS:", "+QIND:", "^DSCI:"],
    hangUpCommand: "AT+CHUP",
    // ulmute=1 (our uplink audible), dlmute=0: the manual's example for playing to the far end.
    speakCommand: (text) => `AT+QWTTS=1,0,${ttsArgument(text, 543)}`,
    maxSpeechBytes: 543,
    speechDonePrefix: "+QWTTS:",
    parseKey: (line) => {
      const match = /^\+QTONEDET:\s*(\d+)/.exec(line);
      if (!match) return null;
      const key = String.fromCharCode(Number(match[1]));
      return /^[0-9A-D*#]$/.test(key) ? key : null;
    },
    parseCallSignal: (line) => parseDsci(line) ?? callResultSignal(line) ?? parseClcc(line),
    // Bits: 1 SIM ready, 2 SMS initialised, 4 phonebook. ofono waits for 7 on EC21 but 3 on
    // EC200, which never sets the phonebook bit; calls and SMS need only the first two.
    simReadyQuery: {
      command: "AT+QINISTAT",
      prefix: "+QINISTAT:",
      ready: (line) => (Number(/\d+/.exec(line)?.[0] ?? 0) & 3) === 3
    },
    urcPortCommand: (port) => `AT+QURCCFG="urcport","${port}"`
  }
};

export function profileByName(name: string): ModemProfile {
  const profile = PROFILES[name as ProfileName];
  if (!profile) throw new Error(`unknown modem profile "${name}" (known: ${Object.keys(PROFILES).join(", ")})`);
  return profile;
}

const CLCC_STATES: Record<string, CallState> = {
  "0": "active",
  "1": "held",
  "2": "dialing",
  "3": "alerting",
  "6": "ended"
};

/** `+CLCC: <id>,<dir>,<stat>,<mode>,...`: only outgoing (dir 0) voice (mode 0) calls are ours. */
export function parseClcc(line: string): CallSignal | null {
  const match = /^\+CLCC:\s*\d+,(\d),(\d),(\d)/.exec(line);
  if (!match || match[1] !== "0" || match[3] !== "0") return null;
  const state = CLCC_STATES[match[2]];
  return state ? {kind: "state", state} : null;
}

// Quectel's ^DSCI numbers its states differently from +CLCC (chan_quectel and a Quectel provider
// agree: 2 dialing, 7 alerting, 3 connected, 6 ended). Unverified on hardware, hence +CLCC polling
// stays the fallback when AT^DSCI=1 is refused.
const DSCI_STATES: Record<string, CallState> = {
  "1": "held",
  "2": "dialing",
  "3": "active",
  "6": "ended",
  "7": "alerting"
};

/** `^DSCI: <id>,<dir>,<stat>,<type>,<number>,<ntype>`: only outgoing (dir 0) voice (type 0) calls are ours. */
export function parseDsci(line: string): CallSignal | null {
  const match = /^\^DSCI:\s*\d+,(\d),(\d),(\d)/.exec(line);
  if (!match || match[1] !== "0" || match[3] !== "0") return null;
  const state = DSCI_STATES[match[2]];
  return state ? {kind: "state", state} : null;
}

function callResultSignal(line: string): CallSignal | null {
  const code = callResultCode(line);
  return code ? {kind: "result", code} : null;
}

function keyAfter(line: string, prefix: string): string | null {
  if (!line.startsWith(prefix)) return null;
  const key = line.slice(prefix.length).trim().split(",")[0].trim();
  return /^[0-9A-D*#]$/.test(key) ? key : null;
}

/**
 * `<mode>,"<text>"` for CTTS/QWTTS: mode 2 (ASCII) when the text is plain printable ASCII without
 * quotes, else mode 1 with UCS2 hex, so no character can break out of the quoted argument.
 */
export function ttsArgument(text: string, maxBytes: number): string {
  const ascii = isPlainSpeech(text);
  const encoded = ascii ? text : ucs2Hex(text);
  if (encoded.length === 0) throw new RangeError("speech text is empty");
  if (encoded.length > maxBytes)
    throw new RangeError(`speech text is ${encoded.length} bytes encoded; the modem takes at most ${maxBytes}`);
  return `${ascii ? 2 : 1},"${encoded}"`;
}

function isPlainSpeech(text: string): boolean {
  return /^[\x20-\x21\x23-\x7e]*$/.test(text);
}

function speechBytes(text: string): number {
  return isPlainSpeech(text) ? text.length : text.length * 4;
}

/**
 * Splits speech into pieces that each fit one speak command once encoded, at sentence ends where
 * possible, else between words, a word longer than a piece cut as a last resort (never inside a
 * UTF-16 surrogate pair).
 */
export function splitSpeech(text: string, maxBytes: number): string[] {
  const pieces: string[] = [];
  let current = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = current ? `${current} ${word}` : word;
    const sentenceEnded = /[.!?:]$/.test(current) && speechBytes(current) > maxBytes / 2;
    if (speechBytes(candidate) <= maxBytes && !sentenceEnded) {
      current = candidate;
      continue;
    }
    if (current) pieces.push(current);
    current = word;
    while (speechBytes(current) > maxBytes) {
      const units = Array.from(current);
      let cut = units.length;
      while (cut > 1 && speechBytes(units.slice(0, cut).join("")) > maxBytes) cut -= 1;
      pieces.push(units.slice(0, cut).join(""));
      current = units.slice(cut).join("");
    }
  }
  if (current) pieces.push(current);
  return pieces;
}
