import {EventEmitter} from "node:events";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {SerialPort} from "serialport";
import {PtyPair} from "./pty-pair.js";
import {createRecipient, startTestGateway, type TestGateway} from "./gateway.js";

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
  /** Under AT+CSCS="UCS2", string parameters (the CMGL status) must be UCS-2 hex too, as some firmware wants. */
  hexStringParameters: boolean;
}

/** The events a test can wait on instead of sleeping. */
interface SimulatorEvents {
  command: [command: string];
}

interface SimCall {
  number: string;
  stat: number;
  timers: NodeJS.Timeout[];
}

const DEFAULT_SCRIPT: SimulatorScript = {
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
  hexStringParameters: false
};

// Commands each dialect knows beyond the common 3GPP set; anything else answers ERROR.
const DIALECT_COMMANDS: Record<Dialect, string[]> = {
  sim800: ["AT+CLCC=1", "AT+DDET=", "AT+CTTS=", "ATH"],
  sim7600: ["AT+CLCC=1", "AT+CDTAM=", "AT+DDET=", "AT+CTTS=", "AT+CHUP", "ATH"],
  quectel: ["AT+QTONEDET=", "AT+QWTTS=", "AT+CHUP", "ATH", "AT^DSCI=", "AT+QURCCFG=", "AT+QINISTAT"]
};

// TP-Status values (3GPP 23.040): received by the phone; phone busy, still trying; incompatible destination.
const TP_STATUS = {delivered: 0, temporary: 0x21, failed: 0x41};

// +CLCC <stat> to Quectel's ^DSCI numbering (see parseDsci).
const DSCI_STAT: Record<number, number> = {0: 3, 1: 1, 2: 2, 3: 7, 6: 6};

/**
 * A GSM modem on the far end of a real pty, speaking the SIM800, SIM7600 or Quectel dialect
 * closely enough for the AT layer: echo until ATE0, call-state URCs or +CLCC polling, TTS with
 * its done URC, DTMF URCs in each family's shape (SIM7600's `\r\r\n` framing included), two-phase
 * CMGS with increasing references and +CDS status reports, SIM PIN, registration, unplug and re-plug.
 */
export class ModemSimulator extends EventEmitter<SimulatorEvents> {
  readonly received: string[] = [];
  readonly sent: SentSms[] = [];
  /** The SIM's message storage, by index; survives unplugging like a real SIM. */
  readonly storage = new Map<number, {sender: string; text: string}>();
  readonly script: SimulatorScript;
  private port: SerialPort | null = null;
  private input = "";
  private echo = true;
  private clccUrcs = false;
  private simUnlocked = false;
  private smsPending: string | null = null;
  private charset = "IRA";
  private dcs = 0;
  private smsUrcs = false;
  private statusReportUrcs = false;
  private reportRequested = false;
  // Due reports held for the next command's answer (ScriptedStatusReport.interleave).
  private readonly heldUrcs: string[] = [];
  private dsciUrcs = false;
  private speechCount = 0;
  private call: SimCall | null = null;

  private constructor(
    readonly dialect: Dialect,
    private readonly pty: PtyPair,
    script: Partial<SimulatorScript>
  ) {
    super();
    this.script = {...DEFAULT_SCRIPT, ...script};
  }

  static async start(dialect: Dialect, script: Partial<SimulatorScript> = {}): Promise<ModemSimulator> {
    const simulator = new ModemSimulator(dialect, new PtyPair(mkdtempSync(join(tmpdir(), "klaxon-modem-"))), script);
    await simulator.plug();
    return simulator;
  }

  /** The serial device path for the code under test. */
  get devicePath(): string {
    return this.pty.devicePath;
  }

  /** Resolves with the first command starting with `prefix`, already received or still to come. */
  waitForCommand(prefix: string): Promise<string> {
    const seen = this.received.find((command) => command.startsWith(prefix));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = (command: string) => {
        if (!command.startsWith(prefix)) return;
        this.off("command", listener);
        resolve(command);
      };
      this.on("command", listener);
    });
  }

  count(prefix: string): number {
    return this.received.filter((command) => command.startsWith(prefix)).length;
  }

  /** Resolves with the first SMS sent to `number` at or after position `from` of `sent`. */
  waitForSms(from = 0): Promise<SentSms> {
    const seen = this.sent[from];
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = () => {
        const next = this.sent[from];
        if (!next) return;
        this.off("command", listener);
        resolve(next);
      };
      this.on("command", listener);
    });
  }

  /** A message arrives from the network: stored on the SIM, announced with +CMTI if asked to and enabled. */
  receiveSms(sender: string, text: string, {announce = true} = {}): number {
    let index = 1;
    while (this.storage.has(index)) index += 1;
    this.storage.set(index, {sender, text});
    if (announce && this.smsUrcs) this.urc(`+CMTI: "SM",${index}`);
    return index;
  }

  /**
   * The network reports on message `ref` with TP-Status `status`: a `+CDS` URC, if the modem was
   * told to pass reports on (CNMI <ds>=1). Without `number` the optional address fields are empty.
   */
  reportStatus(ref: number, status: number, {number = "", interleave = false} = {}): void {
    if (!this.port || !this.statusReportUrcs) return;
    const address = number ? `"${number}",${number.startsWith("+") ? 145 : 129}` : ",";
    const line = `+CDS: 6,${ref},${address},"26/11/22,10:00:00+04","26/11/22,10:00:05+04",${status}`;
    if (interleave) this.heldUrcs.push(line);
    else this.urc(line);
  }

  /** Pulls the USB cable: socat dies, both ends see the pty vanish, the device path disappears. */
  async unplug(): Promise<void> {
    const port = this.port;
    // Detached first, so ending the call sends nothing: a pulled cable says goodbye to no one.
    this.port = null;
    this.endCall();
    await this.pty.kill();
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  /** Plugs it back in: a fresh module (echo on, volatile settings lost) on the same path. */
  async plug(): Promise<void> {
    this.resetVolatile();
    await this.pty.start();
    const port = new SerialPort({path: this.pty.peerPath, baudRate: 115200, lock: false, autoOpen: false});
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    port.on("data", (chunk: Buffer) => this.receive(chunk.toString("latin1")));
    port.on("error", () => {});
    this.port = port;
    this.pty.publish();
  }

  async stop(): Promise<void> {
    await this.unplug();
    rmSync(this.pty.dir, {recursive: true, force: true});
  }

  private resetVolatile(): void {
    this.input = "";
    this.echo = true;
    this.clccUrcs = false;
    this.simUnlocked = false;
    this.smsPending = null;
    this.charset = "IRA";
    this.dcs = 0;
    this.smsUrcs = false;
    this.statusReportUrcs = false;
    this.reportRequested = false;
    this.heldUrcs.length = 0;
    this.dsciUrcs = false;
  }

  private receive(text: string): void {
    this.input += text;
    for (;;) {
      if (this.smsPending !== null) {
        const end = this.input.search(/[\x1a\x1b]/);
        if (end === -1) return;
        const payload = this.input.slice(0, end);
        const sent = this.input[end] === "\x1a";
        const number = this.smsPending;
        this.input = this.input.slice(end + 1);
        this.smsPending = null;
        if (!sent) {
          this.record(payload);
          this.reply("OK");
          continue;
        }
        const ucs2 = this.charset === "UCS2";
        const to = ucs2 ? fromHex(number) : number;
        this.sent.push({
          number: to,
          text: ucs2 ? fromHex(payload) : payload,
          encoding: this.dcs === 8 ? "ucs2" : "gsm7"
        });
        this.record(payload);
        const ref = this.script.smsRef;
        this.script.smsRef = (ref + 1) % 256;
        this.reply(`+CMGS: ${ref}`, "OK");
        if (this.reportRequested) this.scheduleStatusReport(ref, to);
        continue;
      }
      const end = this.input.indexOf("\r");
      if (end === -1) return;
      const command = this.input.slice(0, end).replace(/\n/g, "").trim();
      this.input = this.input.slice(end + 1);
      if (command === "") continue;
      this.record(command);
      if (this.echo) this.write(command + "\r");
      if (!this.script.silent) this.answer(command);
    }
  }

  private record(command: string): void {
    this.received.push(command);
    this.emit("command", command);
  }

  private answer(command: string): void {
    const upper = command.toUpperCase();
    if (this.script.failCommands.some((prefix) => upper.startsWith(prefix.toUpperCase()))) return this.reply("ERROR");
    if (upper === "ATE0") {
      this.echo = false;
      return this.reply("OK");
    }
    if (
      upper === "AT" ||
      upper === "ATE1" ||
      upper.startsWith("AT+CMEE=") ||
      upper === "AT+CMGF=1" ||
      upper === "AT+COLP=0"
    )
      return this.reply("OK");
    if (upper === "AT+CPIN?") return this.answerCpin();
    if (upper.startsWith("AT+CPIN=")) return this.enterPin(command);
    if (upper === "AT+CSQ") return this.reply(`+CSQ: ${this.script.csq},99`, "OK");
    if (upper === "AT+CREG?") return this.reply(`+CREG: 0,${this.script.registration}`, "OK");
    if (upper === "AT+CEREG?")
      return this.dialect === "sim800"
        ? this.reply("ERROR")
        : this.reply(`+CEREG: 0,${this.script.registration}`, "OK");
    if (upper === "AT+COPS?")
      return this.registered()
        ? this.reply(`+COPS: 0,0,"${this.script.operator}",7`, "OK")
        : this.reply("+COPS: 0", "OK");
    if (upper === "AT+CFUN=1,1") return this.reset();
    if (upper === "AT+CLCC") return this.reply(...(this.call ? [this.clccLine(this.call)] : []), "OK");
    if (upper.startsWith("AT+CMGS=")) {
      this.smsPending = /="([^"]*)"/.exec(command)?.[1] ?? "";
      return this.write("\r\n> ");
    }
    if (upper.startsWith("AT+CSCS=")) {
      this.charset = /="([^"]*)"/.exec(command)?.[1]?.toUpperCase() ?? "IRA";
      return this.reply("OK");
    }
    if (upper.startsWith("AT+CSMP=")) {
      const [firstOctet, , , dcs] = command.slice(8).split(",");
      // TP-SRR, bit 5 of the first octet: the sender asks for a status report.
      this.reportRequested = (Number(firstOctet) & 0x20) !== 0;
      this.dcs = Number(dcs ?? 0);
      return this.reply("OK");
    }
    if (upper.startsWith("AT+CNMI=")) {
      this.smsUrcs = upper.startsWith("AT+CNMI=2,1");
      this.statusReportUrcs = upper.slice(8).split(",")[3] === "1";
      return this.reply("OK");
    }
    if (upper === "AT+CSMS=0") return this.reply("+CSMS: 1,1,1", "OK");
    if (upper.startsWith("AT+CPMS="))
      return this.reply(`+CPMS: ${this.storage.size},30,${this.storage.size},30,${this.storage.size},30`, "OK");
    if (upper.startsWith("AT+CMGL=")) return this.listSms(command);
    if (upper.startsWith("AT+CMGR=")) return this.readSms(Number(command.slice(8)));
    if (upper.startsWith("AT+CMGD=")) {
      this.storage.delete(Number(command.slice(8)));
      return this.reply("OK");
    }
    if (upper.startsWith("ATD")) return this.dial(command);
    if (!DIALECT_COMMANDS[this.dialect].some((prefix) => upper.startsWith(prefix))) return this.reply("ERROR");
    if (upper === "AT+CLCC=1") {
      this.clccUrcs = true;
      return this.reply("OK");
    }
    if (upper === "AT^DSCI=1") {
      this.dsciUrcs = true;
      return this.reply("OK");
    }
    if (upper === "AT+QINISTAT") return this.reply(`+QINISTAT: ${this.script.simInitStatus}`, "OK");
    if (upper.startsWith("AT+CTTS=2,") || upper.startsWith("AT+CTTS=1,") || upper.startsWith("AT+QWTTS=1,0,"))
      return this.speak(upper.startsWith("AT+QWTTS") ? "+QWTTS: 0" : "+CTTS: 0");
    if (upper === "ATH" || upper === "AT+CHUP") {
      // The callee picks up in the very moment our hang-up is on its way.
      if (this.call && this.script.call.outcome === "late_answer" && this.call.stat !== 0) this.callState(this.call, 0);
      this.reply("OK");
      return this.endCall();
    }
    this.reply("OK");
  }

  private answerCpin(): void {
    if (this.script.sim === "absent") return this.reply("+CME ERROR: 10");
    if (this.script.sim === "pin" && !this.simUnlocked) return this.reply("+CPIN: SIM PIN", "OK");
    this.reply("+CPIN: READY", "OK");
  }

  private enterPin(command: string): void {
    if (this.script.sim === "absent") return this.reply("+CME ERROR: 10");
    const pin = /="?([^"]*)"?/.exec(command)?.[1];
    if (pin !== this.script.pin) return this.reply("+CME ERROR: 16");
    this.simUnlocked = true;
    this.reply("OK");
  }

  private registered(): boolean {
    return this.script.registration === 1 || this.script.registration === 5;
  }

  private reset(): void {
    this.reply("OK");
    this.endCall();
    this.resetVolatile();
  }

  private dial(command: string): void {
    if (!this.registered()) return this.reply("NO CARRIER");
    if (this.call) return this.reply("ERROR");
    const call: SimCall = {number: command.slice(3).replace(/;$/, ""), stat: 2, timers: []};
    this.call = call;
    this.speechCount = 0;
    this.reply("OK");
    this.callState(call, 2);
    const script = this.script.call;
    call.timers.push(setTimeout(() => this.callState(call, 3), Math.min(20, script.afterMs / 2)));
    if (script.outcome === "late_answer") return;
    call.timers.push(
      setTimeout(() => {
        if (script.outcome === "answer") {
          this.callState(call, 0);
          if (this.dialect === "sim7600") this.urc("VOICE CALL: BEGIN");
        } else {
          this.callState(call, 6);
          this.call = null;
          if (script.outcome === "busy") this.reply("BUSY");
          else if (this.dialect === "sim7600") this.reply("VOICE CALL: END: 000000", "NO CARRIER");
          else this.reply(this.dialect === "sim800" ? "NO ANSWER" : "NO CARRIER");
        }
      }, script.afterMs)
    );
  }

  private speak(doneUrc: string): void {
    const call = this.call;
    if (!call || call.stat !== 0) return this.reply(this.dialect === "quectel" ? "+CME ERROR: 903" : "ERROR");
    this.reply("OK");
    const keys = this.script.call.keys[this.speechCount] ?? "";
    this.speechCount += 1;
    call.timers.push(
      setTimeout(() => {
        if (this.call !== call) return;
        this.urc(doneUrc);
        for (const key of keys) this.urc(this.dtmfUrc(key));
      }, 20)
    );
  }

  private dtmfUrc(key: string): string {
    if (this.dialect === "sim800") return `+DTMF: ${key}`;
    if (this.dialect === "sim7600") return `+RXDTMF: ${key}`;
    return `+QTONEDET: ${key.charCodeAt(0)}`;
  }

  private endCall(): void {
    const call = this.call;
    if (!call) return;
    for (const timer of call.timers) clearTimeout(timer);
    this.call = null;
    if (!this.port) return;
    this.callState(call, 6);
    if (this.dialect === "sim7600") this.urc("VOICE CALL: END: 000005");
  }

  private callState(call: SimCall, stat: number): void {
    call.stat = stat;
    if (this.clccUrcs) this.urc(this.clccLine(call));
    if (this.dsciUrcs)
      this.urc(`^DSCI: 1,0,${DSCI_STAT[stat]},0,${call.number},${call.number.startsWith("+") ? 145 : 129}`);
  }

  // Text mode, as 27.005 has it: a header line, then the text; in UCS2 mode both the number and
  // the text are hex, otherwise the text goes out as it is (newlines included).
  private smsField(value: string): string {
    return this.charset === "UCS2" ? toHex(value) : value;
  }

  private listSms(command: string): void {
    const status = /="([^"]*)"/.exec(command)?.[1] ?? "";
    const wanted = this.charset === "UCS2" && this.script.hexStringParameters ? toHex("ALL") : "ALL";
    if (status !== wanted) return this.reply("+CMS ERROR: 302");
    const lines: string[] = [];
    for (const [index, sms] of [...this.storage.entries()].sort((a, b) => a[0] - b[0])) {
      lines.push(
        `+CMGL: ${index},"REC UNREAD","${this.smsField(sms.sender)}","","26/11/22,10:00:00+04"`,
        this.smsField(sms.text)
      );
    }
    this.reply(...lines, "OK");
  }

  private readSms(index: number): void {
    const sms = this.storage.get(index);
    if (!sms) return this.reply("OK");
    this.reply(
      `+CMGR: "REC UNREAD","${this.smsField(sms.sender)}","","26/11/22,10:00:00+04"`,
      this.smsField(sms.text),
      "OK"
    );
  }

  private clccLine(call: SimCall): string {
    return `+CLCC: 1,0,${call.stat},0,0,"${call.number}",${call.number.startsWith("+") ? 145 : 129}`;
  }

  // The network's reports as the script says, one delay apart.
  private scheduleStatusReport(ref: number, number: string): void {
    const {outcome, afterMs, interleave} = this.script.statusReport;
    if (outcome === "never") return;
    const statuses = {
      delivered: [TP_STATUS.delivered],
      temporary_then_delivered: [TP_STATUS.temporary, TP_STATUS.delivered],
      failed: [TP_STATUS.failed]
    }[outcome];
    statuses.forEach((status, index) =>
      setTimeout(() => this.reportStatus(ref, status, {number, interleave}), afterMs * (index + 1))
    );
  }

  private urc(line: string): void {
    this.write(this.framedUrc(line));
  }

  // SIM7600 frames its URCs with two CRs (PROTOCOLS 1.0); the others use the plain framing.
  private framedUrc(line: string): string {
    return this.dialect === "sim7600" ? `\r\r\n${line}\r\r\n` : `\r\n${line}\r\n`;
  }

  // Held URCs go out inside the next answer, between its lines and its final OK.
  private reply(...lines: string[]): void {
    const framed = lines.map((line) => `\r\n${line}\r\n`);
    if (this.heldUrcs.length && lines.at(-1) === "OK")
      framed.splice(-1, 0, ...this.heldUrcs.splice(0).map((line) => this.framedUrc(line)));
    this.write(framed.join(""));
  }

  private write(text: string): void {
    this.port?.write(Buffer.from(text, "latin1"));
  }
}

// The simulator's own UCS-2 hex, written independently of the code under test on purpose.
function toHex(text: string): string {
  return Array.from({length: text.length}, (_, i) =>
    text.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")
  ).join("");
}

function fromHex(hex: string): string {
  let out = "";
  for (let i = 0; i < hex.length; i += 4) out += String.fromCharCode(parseInt(hex.slice(i, i + 4), 16));
  return out;
}

/** A production-wired gateway (real voice_call and sms drivers) on a simulated modem. */
export interface ModemGatewayRig {
  simulator: ModemSimulator;
  gw: TestGateway;
  /** Creates a recipient reachable on `channels` only; one step per channel unless `repeat` says otherwise. */
  recipient(channels: string[], fields?: Record<string, unknown>): Promise<string>;
  send(recipient: string, message?: string, source?: string): Promise<string>;
  /** The notification once every delivery under way has ended and been recorded. */
  notification(id: string): Promise<any>;
  stop(): Promise<void>;
}

/** Short real timeouts (settings), so a test of a ring or a key wait takes a fraction of a second. */
export async function startModemGateway(
  dialect: Dialect,
  script: Partial<SimulatorScript> = {},
  modem: Record<string, unknown> = {}
): Promise<ModemGatewayRig> {
  const simulator = await ModemSimulator.start(dialect, script);
  const gw = await startTestGateway(
    {
      modem: {
        port: simulator.devicePath,
        profile: dialect,
        ring_timeout_seconds: 2,
        key_wait_seconds: 0.5,
        speech_repeats: 2,
        ...modem
      }
    },
    {drivers: "production"}
  );
  return {
    simulator,
    gw,
    async recipient(channels, fields = {}) {
      return createRecipient(gw, {
        channel_order: channels,
        escalation: {ack_timeout_seconds: 3600, repeat: 0},
        ...fields
      });
    },
    async send(recipient, message = "Oil temperature high", source = "press-7") {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: recipient, message, priority: "critical", source}
      });
      if (answer.status !== 202) throw new Error(`send failed: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.notification_uuid;
    },
    async notification(id) {
      await gw.gateway.services.runner.idle();
      return (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    },
    async stop() {
      await gw.stop();
      await simulator.stop();
    }
  };
}
