import type {SimulatorLine} from "./modem-simulator-line.js";
import {addressType, type SentSms, type SimulatorScript} from "./modem-simulator-script.js";

// TP-Status values (3GPP 23.040): received by the phone; phone busy, still trying; incompatible destination.
const TP_STATUS = {delivered: 0, temporary: 0x21, failed: 0x41};

/**
 * The simulated modem's SMS side in text mode (27.005): two-phase CMGS with increasing
 * references, the charset and DCS the sender chose, +CMTI for arriving messages, the SIM's
 * storage (CPMS, CMGL, CMGR, CMGD) and +CDS status reports as `script.statusReport` says.
 */
export class SimulatedSms {
  readonly sent: SentSms[] = [];
  /** The SIM's message storage, by index; survives unplugging like a real SIM. */
  readonly storage = new Map<number, {sender: string; text: string}>();
  // The number of the CMGS whose text is still coming, null when no text is awaited.
  private pendingNumber: string | null = null;
  private charset = "IRA";
  private dcs = 0;
  private smsUrcs = false;
  private statusReportUrcs = false;
  private reportRequested = false;

  constructor(
    private readonly line: SimulatorLine,
    private readonly script: SimulatorScript,
    private readonly record: (command: string) => void
  ) {}

  /** Settings a re-plugged or reset module has lost. */
  resetVolatile(): void {
    this.pendingNumber = null;
    this.charset = "IRA";
    this.dcs = 0;
    this.smsUrcs = false;
    this.statusReportUrcs = false;
    this.reportRequested = false;
  }

  /** After `> `, the line carries the message text up to Ctrl-Z (send) or Esc (cancel), not commands. */
  get awaitingText(): boolean {
    return this.pendingNumber !== null;
  }

  /** Takes the text from `input` once it is complete; returns the input left after it, or null until then. */
  takeText(input: string): string | null {
    const end = input.search(/[\x1a\x1b]/);
    if (end === -1 || this.pendingNumber === null) return null;
    const payload = input.slice(0, end);
    const number = this.pendingNumber;
    this.pendingNumber = null;
    if (input[end] !== "\x1a") {
      this.record(payload);
      this.line.reply("OK");
      return input.slice(end + 1);
    }
    const ucs2 = this.charset === "UCS2";
    const to = ucs2 ? fromHex(number) : number;
    // Kept before the text is recorded: a test waiting on the command sees the SMS at once.
    this.sent.push({number: to, text: ucs2 ? fromHex(payload) : payload, encoding: this.dcs === 8 ? "ucs2" : "gsm7"});
    this.record(payload);
    const ref = this.script.smsRef;
    this.script.smsRef = (ref + 1) % 256;
    this.line.reply(`+CMGS: ${ref}`, "OK");
    if (this.reportRequested) this.scheduleStatusReport(ref, to);
    return input.slice(end + 1);
  }

  /** The SMS commands; false for any other command. */
  answer(upper: string, command: string): boolean {
    if (upper.startsWith("AT+CMGS=")) {
      this.pendingNumber = /="([^"]*)"/.exec(command)?.[1] ?? "";
      this.line.write("\r\n> ");
    } else if (upper.startsWith("AT+CSCS=")) {
      this.charset = /="([^"]*)"/.exec(command)?.[1]?.toUpperCase() ?? "IRA";
      this.line.reply("OK");
    } else if (upper.startsWith("AT+CSMP=")) {
      const [firstOctet, , , dcs] = command.slice(8).split(",");
      // TP-SRR, bit 5 of the first octet: the sender asks for a status report.
      this.reportRequested = (Number(firstOctet) & 0x20) !== 0;
      this.dcs = Number(dcs ?? 0);
      this.line.reply("OK");
    } else if (upper.startsWith("AT+CNMI=")) {
      this.smsUrcs = upper.startsWith("AT+CNMI=2,1");
      this.statusReportUrcs = upper.slice(8).split(",")[3] === "1";
      this.line.reply("OK");
    } else if (upper === "AT+CSMS=0") {
      this.line.reply("+CSMS: 1,1,1", "OK");
    } else if (upper.startsWith("AT+CPMS=")) {
      const used = this.storage.size;
      this.line.reply(`+CPMS: ${used},30,${used},30,${used},30`, "OK");
    } else if (upper.startsWith("AT+CMGL=")) {
      this.list(command);
    } else if (upper.startsWith("AT+CMGR=")) {
      this.read(Number(command.slice(8)));
    } else if (upper.startsWith("AT+CMGD=")) {
      this.storage.delete(Number(command.slice(8)));
      this.line.reply("OK");
    } else {
      return false;
    }
    return true;
  }

  /** A message arrives from the network: stored on the SIM, announced with +CMTI if asked to and enabled. */
  receive(sender: string, text: string, announce: boolean): number {
    let index = 1;
    while (this.storage.has(index)) index += 1;
    this.storage.set(index, {sender, text});
    if (announce && this.smsUrcs) this.line.urc(`+CMTI: "SM",${index}`);
    return index;
  }

  /** A `+CDS` URC on message `ref`, if the line is attached and the modem was told to pass reports on (CNMI <ds>=1). */
  reportStatus(ref: number, status: number, number: string, interleave: boolean): void {
    if (!this.line.attached || !this.statusReportUrcs) return;
    const address = number ? `"${number}",${addressType(number)}` : ",";
    const line = `+CDS: 6,${ref},${address},"26/11/22,10:00:00+04","26/11/22,10:00:05+04",${status}`;
    if (interleave) this.line.holdUrc(line);
    else this.line.urc(line);
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
      setTimeout(() => this.reportStatus(ref, status, number, interleave), afterMs * (index + 1))
    );
  }

  // Text mode, as 27.005 has it: a header line, then the text; in UCS2 mode both the number and
  // the text are hex, otherwise the text goes out as it is (newlines included).
  private field(value: string): string {
    return this.charset === "UCS2" ? toHex(value) : value;
  }

  private list(command: string): void {
    const status = /="([^"]*)"/.exec(command)?.[1] ?? "";
    const wanted = this.charset === "UCS2" && this.script.hexStringParameters ? toHex("ALL") : "ALL";
    if (status !== wanted) return this.line.reply("+CMS ERROR: 302");
    const lines: string[] = [];
    for (const [index, sms] of [...this.storage.entries()].sort((a, b) => a[0] - b[0])) {
      lines.push(
        `+CMGL: ${index},"REC UNREAD","${this.field(sms.sender)}","","26/11/22,10:00:00+04"`,
        this.field(sms.text)
      );
    }
    this.line.reply(...lines, "OK");
  }

  private read(index: number): void {
    const sms = this.storage.get(index);
    if (!sms) return this.line.reply("OK");
    this.line.reply(
      `+CMGR: "REC UNREAD","${this.field(sms.sender)}","","26/11/22,10:00:00+04"`,
      this.field(sms.text),
      "OK"
    );
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
