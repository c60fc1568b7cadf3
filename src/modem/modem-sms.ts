import {randomInt} from "node:crypto";
import {AtCommandError, isRefusal, type AtCommandOptions} from "./at-session.js";
import type {LineLock} from "./line-lock.js";
import {assertDialable, ModemError} from "./modem-error.js";
import type {AtLink} from "./modem-link.js";
import type {ModemSettings} from "./modem-options.js";
import type {Capabilities} from "./modem-sim.js";
import {
  asciiFallback,
  headerFields,
  parseCmgl,
  parseCmgr,
  SINGLE_SMS_LIMIT,
  smsEncodingFor,
  smsLength,
  ucs2Hex,
  type ListingCharset,
  type StoredSms
} from "./sms-codec.js";
import {submitPdus} from "./sms-pdu.js";
import {SmsStatusReports, type SmsDeliveryReport} from "./sms-status-reports.js";

/** What the SMS part works with. */
export interface ModemSmsContext {
  link: AtLink;
  /** Shared with calls: each SMS operation holds it, so its charset cannot leak into a call. */
  line: LineLock;
  capabilities: Capabilities;
  settings: ModemSettings;
}

/** One SMS the modem accepted: its reference, and the network's later report on it (null: none asked for). */
export interface SentSmsPart {
  messageRef: number | null;
  report: Promise<SmsDeliveryReport | null> | null;
}

/** How full the storage messages are read from is (AT+CPMS?). */
export interface SmsStorage {
  used: number;
  total: number;
}

/**
 * SMS in PDU mode where the modem took AT+CMGF=0 (concatenated messages, GSM-7 with the
 * extension table, status reports asked for in the PDU), text mode otherwise: send, list,
 * read, delete, and the storage's fill level.
 */
export class ModemSms {
  private readonly statusReports: SmsStatusReports;
  // The concatenation reference of the next long message; a random start, so that parts of a
  // message sent before a restart are not joined with a new one's on the phone.
  private nextReference = randomInt(256);

  constructor(private readonly context: ModemSmsContext) {
    this.statusReports = new SmsStatusReports(context.settings.smsReportTimeoutMs);
  }

  /** True in PDU mode: a long text goes as one concatenated message instead of numbered parts. */
  get concatenates(): boolean {
    return this.context.capabilities.has("sms_pdu");
  }

  /**
   * Sends `text`: in PDU mode as one message (concatenated parts when it needs several, one
   * reference each); in text mode as one SMS, throwing sms_too_long when it does not fit. Waits
   * for a call to end.
   */
  async sendSms(number: string, text: string, signal?: AbortSignal): Promise<SentSmsPart[]> {
    assertDialable(number);
    // Ctrl-Z would send early and ESC would abort: neither may appear inside a text-mode text.
    const clean = text.replace(/[\x1a\x1b]/g, "");
    return this.holdLine(signal, () =>
      this.concatenates ? this.sendPdus(number, clean) : this.sendText(number, clean)
    );
  }

  private async sendPdus(number: string, text: string): Promise<SentSmsPart[]> {
    const statusReport = this.context.capabilities.has("sms_status_reports");
    const reference = this.nextReference;
    this.nextReference = (reference + 1) % 256;
    const parts: SentSmsPart[] = [];
    for (const {pdu, tpduLength} of submitPdus(number, text, {statusReport, reference}))
      parts.push(await this.submit(`AT+CMGS=${tpduLength}`, pdu, statusReport));
    return parts;
  }

  // Text mode: AT+CSMP sets the first octet (17, or 49 with TP-SRR for a status report), validity
  // 167 (one day) and DCS (0 GSM-7, 8 UCS-2). A modem refusing it sends with its own defaults:
  // no report asked for, and the text in plain ASCII, since a UCS-2 text under a GSM-7 DCS would
  // arrive as hex digits.
  private async sendText(number: string, text: string): Promise<SentSmsPart[]> {
    const reported = this.context.capabilities.has("sms_status_reports");
    const wanted = smsEncodingFor(text);
    const parametersTaken =
      (await this.optional(`AT+CSMP=${reported ? 49 : 17},167,0,${wanted === "gsm7" ? 0 : 8}`)) !== null;
    if (smsLength(text, wanted) > SINGLE_SMS_LIMIT[wanted])
      throw new ModemError("sms_too_long", `${wanted} text longer than one SMS (${SINGLE_SMS_LIMIT[wanted]})`);
    const encoding = parametersTaken ? wanted : "gsm7";
    return this.inCharset(encoding === "gsm7" ? "IRA" : "UCS2", async () => {
      const address = encoding === "gsm7" ? number : ucs2Hex(number);
      const payload = encoding === "ucs2" ? ucs2Hex(text) : parametersTaken ? text : asciiFallback(text);
      return [await this.submit(`AT+CMGS="${address}"`, payload, reported && parametersTaken)];
    });
  }

  private async submit(command: string, payload: string, reported: boolean): Promise<SentSmsPart> {
    const response = await this.context.link.run(command, {
      prefixes: ["+CMGS:"],
      payload,
      payloadTimeoutMs: this.context.settings.smsSendTimeoutMs
    });
    const match = /^\+CMGS:\s*(\d+)/.exec(response.lines[0] ?? "");
    const messageRef = match ? Number(match[1]) : null;
    return {messageRef, report: reported && messageRef !== null ? this.statusReports.expect(messageRef) : null};
  }

  /** The storage messages are read from: used and total slots; null when the modem will not say. */
  storage(signal?: AbortSignal): Promise<SmsStorage | null> {
    return this.holdLine(signal, async () => {
      const response = await this.optional("AT+CPMS?", {prefixes: ["+CPMS:"]});
      const [, used, total] = headerFields(response?.lines[0] ?? "").map(Number);
      return Number.isInteger(used) && Number.isInteger(total) && total > 0 ? {used, total} : null;
    });
  }

  /**
   * Every message in storage, in whatever form the modem lists it: PDUs (AT+CMGL=4 in PDU mode,
   * and some firmware in text mode too), or text in UCS-2 hex, falling back to the status as
   * UCS-2 hex and then to the plain charset for firmware that refuses either. Status reports
   * found there are settled against the messages they name.
   */
  listMessages(signal?: AbortSignal): Promise<StoredSms[]> {
    const options = {prefixes: ["+CMGL:"], bodyLines: 1};
    return this.holdLine(signal, async () => {
      if (this.concatenates)
        return this.settled(parseCmgl((await this.context.link.run("AT+CMGL=4", options)).lines, "IRA"));
      let refusal: unknown = null;
      for (const [charset, status] of [
        ["UCS2", "ALL"],
        ["UCS2", ucs2Hex("ALL")],
        ["IRA", "ALL"]
      ] as const) {
        try {
          const response = await this.inCharset(charset, () => this.context.link.run(`AT+CMGL="${status}"`, options));
          return this.settled(parseCmgl(response.lines, charset));
        } catch (error) {
          if (!isRefusal(error)) throw error;
          refusal = error;
        }
      }
      throw refusal;
    });
  }

  /**
   * The message at `index`, or null when that slot is empty (`+CMS ERROR: 321`, invalid index,
   * included). Text mode reads in UCS-2, or in the plain charset on firmware that refuses it.
   */
  readMessage(index: number, signal?: AbortSignal): Promise<StoredSms | null> {
    const options = {prefixes: ["+CMGR:"], bodyLines: 1};
    const read = () =>
      this.context.link.run(`AT+CMGR=${index}`, options).catch((error: unknown) => {
        if (error instanceof AtCommandError && error.kind === "cms" && error.code === 321) return null;
        throw error;
      });
    return this.holdLine(signal, async () => {
      const charsets: ListingCharset[] = this.concatenates ? ["IRA"] : ["UCS2", "IRA"];
      for (const [attempt, charset] of charsets.entries()) {
        try {
          const response = await this.inCharset(charset, read);
          const stored = response ? parseCmgr(index, response.lines, charset) : null;
          return stored ? this.settled([stored])[0] : null;
        } catch (error) {
          if (!isRefusal(error) || attempt === charsets.length - 1) throw error;
        }
      }
      return null;
    });
  }

  async deleteMessage(index: number, signal?: AbortSignal): Promise<void> {
    await this.holdLine(signal, () => this.context.link.run(`AT+CMGD=${index}`));
  }

  /** True when `line` was a status report (+CDS), now settled against the message it names. */
  receiveStatusReport(line: string): boolean {
    return this.statusReports.receive(line);
  }

  /** Ends every wait for a status report (the modem is stopping). */
  stop(): void {
    this.statusReports.stop();
  }

  private settled(stored: StoredSms[]): StoredSms[] {
    for (const {content} of stored) if (content?.kind === "status_report") this.statusReports.take(content);
    return stored;
  }

  private holdLine<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    return this.context.line.with(async () => {
      this.context.link.readySession();
      return work();
    }, signal);
  }

  // Sets the charset the operation is written in (on the line already held), and puts IRA back
  // for ATD and TTS. PDU mode never needs another charset than IRA.
  private async inCharset<T>(charset: ListingCharset, work: () => Promise<T>): Promise<T> {
    const link = this.context.link;
    if (charset === "IRA") return work();
    await link.run(`AT+CSCS="${charset}"`);
    try {
      return await work();
    } finally {
      await link.run('AT+CSCS="IRA"').catch((error: unknown) => link.recordError(error));
    }
  }

  // A command the modem may refuse: null then; a timeout or a closed port is thrown.
  private async optional(command: string, options?: AtCommandOptions) {
    try {
      return await this.context.link.run(command, options);
    } catch (error) {
      if (isRefusal(error)) return null;
      throw error;
    }
  }
}
