export type Dialect = "sim800" | "sim7600" | "quectel";

/** What the far end of the call does once we dial. */
export interface ScriptedCall {
  /** `late_answer` rings until we hang up, and picks up at that very moment (before the hang-up's OK). */
  outcome: "answer" | "busy" | "no_answer" | "late_answer";
  /** Time from ATD to the outcome. */
  afterMs: number;
  /** Keys the callee presses after each speech command, one entry per speech ("" for none, "21" for 2 then 1). */
  keys: string[];
}

/** An SMS the code under test sent, decoded from whatever charset it used. */
export interface SentSms {
  number: string;
  text: string;
  encoding: "gsm7" | "ucs2";
}

/** What the network later reports on an SMS sent with a status report requested. */
export interface ScriptedStatusReport {
  /** `temporary_then_delivered`: "phone busy, still trying" first, then delivered one delay later. */
  outcome: "delivered" | "temporary_then_delivered" | "failed" | "never";
  /** Time from the +CMGS answer to each report. */
  afterMs: number;
  /**
   * Once due, the report waits for the next command and comes inside its answer, before the
   * final OK, as real modems interleave URCs; it never comes on its own then.
   */
  interleave: boolean;
}

/** The simulator's behaviour; tests change fields on `script` at any time. */
export interface SimulatorScript {
  /** Commands (by prefix) answered with ERROR, e.g. optional init commands old firmware lacks. */
  failCommands: string[];
  sim: "ready" | "pin" | "absent";
  pin: string;
  /** +CREG/+CEREG <stat>: 1 home, 2 searching, 3 denied, 5 roaming. */
  registration: number;
  operator: string;
  csq: number;
  call: ScriptedCall;
  /** Records commands but never answers, like a wedged module. */
  silent: boolean;
  /** The next message reference +CMGS answers with; each SMS takes one, after 255 comes 0. */
  smsRef: number;
  statusReport: ScriptedStatusReport;
  /** Quectel AT+QINISTAT bitmap: 7 fully initialised, 1 SIM ready but SMS not yet. */
  simInitStatus: number;
  /** What a bare `AT` gets: some firmware answers ERROR to it while everything else works. */
  atAnswer: "OK" | "ERROR";
  /**
   * Answers by command prefix that replace the normal one, e.g. `{"AT+CMGR=": "+CMS ERROR: 321"}`
   * (shown as +CME/+CMS in the form AT+CMEE asked for).
   */
  answers: Record<string, string>;
  /** Commands (by prefix) answered only after this many ms, like a module busy with the network. */
  slowAnswersMs: Record<string, number>;
  /** Under AT+CSCS="UCS2", string parameters (the CMGL status) must be UCS-2 hex too, as some firmware wants. */
  hexStringParameters: boolean;
}

export const DEFAULT_SCRIPT: SimulatorScript = {
  failCommands: [],
  sim: "ready",
  pin: "1234",
  registration: 1,
  operator: "Klaxon Net",
  csq: 20,
  call: {outcome: "answer", afterMs: 60, keys: ["1"]},
  silent: false,
  smsRef: 37,
  statusReport: {outcome: "delivered", afterMs: 20, interleave: false},
  simInitStatus: 7,
  atAnswer: "OK",
  answers: {},
  slowAnswersMs: {},
  hexStringParameters: false
};

/** Commands each dialect knows beyond the common 3GPP set; anything else answers ERROR. */
export const DIALECT_COMMANDS: Record<Dialect, string[]> = {
  sim800: ["AT+CLCC=1", "AT+DDET=", "AT+CTTS=", "ATH"],
  sim7600: ["AT+CLCC=1", "AT+CDTAM=", "AT+DDET=", "AT+CTTS=", "AT+CHUP", "ATH"],
  quectel: ["AT+QTONEDET=", "AT+QWTTS=", "AT+CHUP", "ATH", "AT^DSCI=", "AT+QURCCFG=", "AT+QINISTAT"]
};

/** Home (1) or roaming (5): the states in which the network takes calls and knows an operator. */
export function isRegistered(script: SimulatorScript): boolean {
  return script.registration === 1 || script.registration === 5;
}

/** The type of address (3GPP 24.008) that goes with a number: 145 international, 129 otherwise. */
export function addressType(number: string): number {
  return number.startsWith("+") ? 145 : 129;
}
