import type {SimulatorLine} from "./modem-simulator-line.js";
import {
  deliverPdu,
  readSubmit,
  statusReportPdu,
  type SimulatedStoredSms,
  type SubmittedPdu
} from "./modem-simulator-pdu.js";
import {addressType, type SentSms, type SimulatorScript} from "./modem-simulator-script.js";

// TP-Status values (3GPP 23.040): received by the phone; phone busy, still trying; incompatible destination.
const TP_STATUS = {delivered: 0, temporary: 0x21, failed: 0x41};

/**
 * The simulated modem's SMS side (27.005) in text mode (AT+CMGF=1) and PDU mode (AT+CMGF=0):
 * two-phase CMGS with increasing references, the charset and DCS the sender chose in text mode,
 * SMS-SUBMIT PDUs read and concatenated parts joined in PDU mode, +CMTI for arriving messages,
 * the SIM's storage (CPMS, CMGL, CMGR with +CMS ERROR: 321 for an empty slot, CMGD) and +CDS
 * status reports (one line in text mode, two in PDU mode) as `script.statusReport` says.
 */
export class SimulatedSms {
  /** Whole messages the code under test sent; a concatenated one once its last part came. */
  readonly sent: SentSms[] = [];
  /** Every SMS-SUBMIT sent in PDU mode, part by part. */
  readonly submitted: SubmittedPdu[] = [];
  /** The SIM's message storage, by index; survives unplugging like a real SIM. */
  readonly storage = new Map<number, SimulatedStoredSms>();
  /** Firmware that lists stored messages as PDUs even in text mode (issue 19, item 3). */
  listsPdusInTextMode = false;
  // The number (text mode) or TPDU length (PDU mode) of the CMGS whose text is still coming.
  private pendingNumber: string | null = null;
  private pendingLength: number | null = null;
  private pduMode = false;
  private charset = "IRA";
  private dcs = 0;
  private smsUrcs = false;
  private statusReportUrcs = false;
  private reportRequested = false;
  private nextReference = 200;

  constructor(
    private readonly line: SimulatorLine,
    private readonly script: SimulatorScript,
    private readonly record: (command: string) => void
  ) {}

  /** Settings a re-plugged or reset module has lost. */
  resetVolatile(): void {
    this.pendingNumber = null;
    this.pendingLength = null;
    this.pduMode = false;
    this.charset = "IRA";
    this.dcs = 0;
    this.smsUrcs = false;
    this.statusReportUrcs = false;
    this.reportRequested = false;
  }

  /** After `> `, the line carries the message text up to Ctrl-Z (send) or Esc (cancel), not commands. */
  get awaitingText(): boolean {
    return this.pendingNumber !== null || this.pendingLength !== null;
  }

  /** Takes the text from `input` once it is complete; returns the input left after it, or null until then. */
  takeText(input: string): string | null {
    const end = input.search(/[\x1a\x1b]/);
    if (end === -1 || !this.awaitingText) return null;
    const payload = input.slice(0, end);
    const [number, length] = [this.pendingNumber, this.pendingLength];
    this.pendingNumber = null;
    this.pendingLength = null;
    if (input[end] !== "\x1a") {
      this.record(payload);
      this.line.reply("OK");
      return input.slice(end + 1);
    }
    // Kept before the text is recorded: a test waiting on the command sees the SMS at once.
    const answer = length !== null ? this.takePdu(payload, length) : this.takeTextMessage(payload, number ?? "");
    this.record(payload);
    answer();
    return input.slice(end + 1);
  }

  // Each returns the modem's answer, to be given once the payload is recorded.
  private takeTextMessage(payload: string, number: string): () => void {
    const ucs2 = this.charset === "UCS2";
    const to = ucs2 ? fromHex(number) : number;
    this.sent.push({number: to, text: ucs2 ? fromHex(payload) : payload, encoding: this.dcs === 8 ? "ucs2" : "gsm7"});
    return () => this.accept(to, this.reportRequested);
  }

  // A part is kept until every part of its message has come; the message is then sent whole.
  private takePdu(payload: string, length: number): () => void {
    let submit: SubmittedPdu;
    try {
      submit = readSubmit(payload, length);
    } catch {
      return () => this.line.reply("+CMS ERROR: 304");
    }
    this.submitted.push(submit);
    const {part} = submit;
    const parts = part
      ? this.submitted.filter(
          (other) =>
            other.number === submit.number &&
            other.part?.reference === part.reference &&
            other.part.total === part.total
        )
      : [submit];
    if (!part || parts.length === part.total) {
      const ordered = [...parts].sort((a, b) => (a.part?.sequence ?? 1) - (b.part?.sequence ?? 1));
      this.sent.push({
        number: submit.number,
        text: ordered.map((each) => each.text).join(""),
        encoding: submit.encoding
      });
    }
    return () => this.accept(submit.number, submit.statusReportRequested);
  }

  private accept(number: string, reportRequested: boolean): void {
    const ref = this.script.smsRef;
    this.script.smsRef = (ref + 1) % 256;
    this.line.reply(`+CMGS: ${ref}`, "OK");
    if (reportRequested) this.scheduleStatusReport(ref, number);
  }

  /** The SMS commands; false for any other command. */
  answer(upper: string, command: string): boolean {
    if (upper.startsWith("AT+CMGS=")) {
      if (this.pduMode) this.pendingLength = Number(command.slice(8));
      else this.pendingNumber = /="([^"]*)"/.exec(command)?.[1] ?? "";
      this.line.write("\r\n> ");
    } else if (upper === "AT+CMGF=0" || upper === "AT+CMGF=1") {
      this.pduMode = upper === "AT+CMGF=0";
      this.line.reply("OK");
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
    } else if (upper.startsWith("AT+CPMS=") || upper === "AT+CPMS?") {
      const used = this.storage.size;
      const memory = upper === "AT+CPMS?" ? '"SM",' : "";
      this.line.reply(`+CPMS: ${[1, 2, 3].map(() => `${memory}${used},${SLOTS}`).join(",")}`, "OK");
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
  receive(sms: SimulatedStoredSms, announce: boolean): number {
    let index = 1;
    while (this.storage.has(index)) index += 1;
    this.storage.set(index, sms);
    if (announce && this.smsUrcs) this.line.urc(`+CMTI: "SM",${index}`);
    return index;
  }

  /** The network's report on message `ref` is stored (CNMI <ds>=2) and announced with +CDSI. */
  storeStatusReport(ref: number, number: string, status: number): number {
    let index = 1;
    while (this.storage.has(index)) index += 1;
    this.storage.set(index, {sender: number, text: "", rawPdu: statusReportPdu(ref, number, status).pdu});
    if (this.smsUrcs) this.line.urc(`+CDSI: "SM",${index}`);
    return index;
  }

  /** A long message arrives as `total` concatenated parts (8-bit reference), each in its own slot. */
  receiveParts(sender: string, text: string, total: number, announce = true): number[] {
    const reference = this.nextReference++ % 256;
    const size = Math.ceil(text.length / total);
    return Array.from({length: total}, (_, i) =>
      this.receive(
        {sender, text: text.slice(i * size, (i + 1) * size), part: {reference, total, sequence: i + 1}},
        announce
      )
    );
  }

  /** A `+CDS` URC on message `ref`, if the line is attached and the modem was told to pass reports on (CNMI <ds>=1). */
  reportStatus(ref: number, status: number, number: string, interleave: boolean): void {
    if (!this.line.attached || !this.statusReportUrcs) return;
    let lines: string[];
    if (this.pduMode) {
      const {pdu, tpduLength} = statusReportPdu(ref, number, status);
      lines = [`+CDS: ${tpduLength}`, pdu];
    } else {
      const address = number ? `"${number}",${addressType(number)}` : ",";
      lines = [`+CDS: 6,${ref},${address},"26/11/22,10:00:00+04","26/11/22,10:00:05+04",${status}`];
    }
    for (const line of lines) {
      if (interleave) this.line.holdUrc(line);
      else this.line.urc(line);
    }
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

  // AT+CMGL=4 in PDU mode; in text mode "ALL" (in the charset's form when the script wants it).
  private list(command: string): void {
    const status = this.pduMode ? command.slice(8) : (/="([^"]*)"/.exec(command)?.[1] ?? "");
    const wanted = this.pduMode
      ? "4"
      : this.charset === "UCS2" && this.script.hexStringParameters
        ? toHex("ALL")
        : "ALL";
    if (status !== wanted) return this.line.reply("+CMS ERROR: 302");
    const lines: string[] = [];
    for (const [index, sms] of [...this.storage.entries()].sort((a, b) => a[0] - b[0])) {
      if (this.listsPdus(sms)) {
        const {pdu, tpduLength} = deliverPdu(sms);
        lines.push(`+CMGL: ${index},0,,${tpduLength}`, pdu);
      } else {
        lines.push(
          `+CMGL: ${index},"REC UNREAD","${this.field(sms.sender)}","","26/11/22,10:00:00+04"`,
          this.field(sms.text)
        );
      }
    }
    this.line.reply(...lines, "OK");
  }

  private read(index: number): void {
    const sms = this.storage.get(index);
    // An empty slot: what SIM800, SIM7600 and Quectel firmware answer.
    if (!sms) return this.line.reply("+CMS ERROR: 321");
    if (this.listsPdus(sms)) {
      const {pdu, tpduLength} = deliverPdu(sms);
      return this.line.reply(`+CMGR: 0,,${tpduLength}`, pdu, "OK");
    }
    this.line.reply(
      `+CMGR: "REC UNREAD","${this.field(sms.sender)}","","26/11/22,10:00:00+04"`,
      this.field(sms.text),
      "OK"
    );
  }

  private listsPdus(sms: SimulatedStoredSms): boolean {
    return this.pduMode || this.listsPdusInTextMode || sms.rawPdu !== undefined;
  }
}

// A SIM's message slots, as SIM800 and most SIMs report them.
const SLOTS = 30;

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
