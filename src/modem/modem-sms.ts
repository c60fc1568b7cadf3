import {AtCommandError} from "./at-session.js";
import type {LineLock} from "./line-lock.js";
import {assertDialable, ModemError} from "./modem-error.js";
import type {AtLink} from "./modem-link.js";
import type {ModemSettings} from "./modem-options.js";
import type {Capabilities} from "./modem-sim.js";
import {
  parseCmgl,
  parseCmgr,
  SINGLE_SMS_LIMIT,
  smsEncodingFor,
  smsLength,
  ucs2Hex,
  type StoredSms
} from "./sms-codec.js";
import {SmsStatusReports, type SmsDeliveryReport} from "./sms-status-reports.js";

/** What the SMS part works with. */
export interface ModemSmsContext {
  link: AtLink;
  /** Shared with calls: each SMS operation holds it, so its charset cannot leak into a call. */
  line: LineLock;
  capabilities: Capabilities;
  settings: ModemSettings;
}

/** Text-mode SMS: send (with status reports where the modem passes them on), list, read, delete. */
export class ModemSms {
  private readonly statusReports: SmsStatusReports;

  constructor(private readonly context: ModemSmsContext) {
    this.statusReports = new SmsStatusReports(context.settings.smsReportTimeoutMs);
  }

  /**
   * Sends one text-mode SMS with the two-phase AT+CMGS, in GSM-7 (through the IRA charset) when
   * the text allows, else UCS-2; resolves with the message reference and, when the modem takes
   * status reports, the network's later report on it (null: none requested). Waits for a call to end.
   */
  async sendSms(
    number: string,
    text: string,
    signal?: AbortSignal
  ): Promise<{messageRef: number | null; report: Promise<SmsDeliveryReport | null> | null}> {
    const {link, settings} = this.context;
    assertDialable(number);
    // Ctrl-Z would send early and ESC would abort: neither may appear inside the text.
    const clean = text.replace(/[\x1a\x1b]/g, "");
    const encoding = smsEncodingFor(clean);
    if (smsLength(clean, encoding) > SINGLE_SMS_LIMIT[encoding])
      throw new ModemError("sms_too_long", `${encoding} text longer than one SMS (${SINGLE_SMS_LIMIT[encoding]})`);
    return this.withSmsCharset(encoding === "gsm7" ? "IRA" : "UCS2", signal, async () => {
      // first octet 17 (SMS-SUBMIT, relative validity), plus 32 (TP-SRR) to ask for a status report
      // where the modem passes them on; validity 167 (one day), pid 0, dcs 0 GSM-7 or 8 UCS-2
      const reported = this.context.capabilities.has("sms_status_reports");
      await link.run(`AT+CSMP=${reported ? 49 : 17},167,0,${encoding === "gsm7" ? 0 : 8}`);
      const address = encoding === "gsm7" ? number : ucs2Hex(number);
      const payload = encoding === "gsm7" ? clean : ucs2Hex(clean);
      const response = await link.run(`AT+CMGS="${address}"`, {
        prefixes: ["+CMGS:"],
        payload,
        payloadTimeoutMs: settings.smsSendTimeoutMs
      });
      const match = /^\+CMGS:\s*(\d+)/.exec(response.lines[0] ?? "");
      const messageRef = match ? Number(match[1]) : null;
      return {messageRef, report: reported && messageRef !== null ? this.statusReports.expect(messageRef) : null};
    });
  }

  /** Every message in storage (replies that came while the gateway was down included). */
  listMessages(signal?: AbortSignal): Promise<StoredSms[]> {
    const link = this.context.link;
    return this.withSmsCharset("UCS2", signal, async () => {
      const options = {prefixes: ["+CMGL:"], bodyLines: 1};
      // 27.007 says string parameters follow AT+CSCS; some firmware takes "ALL" anyway, some only its UCS-2 hex.
      const response = await link.run('AT+CMGL="ALL"', options).catch((error: unknown) => {
        if (!(error instanceof AtCommandError) || (error.kind !== "error" && error.kind !== "cms")) throw error;
        return link.run(`AT+CMGL="${ucs2Hex("ALL")}"`, options);
      });
      return parseCmgl(response.lines);
    });
  }

  /** The message at `index`, or null when that slot is empty. */
  readMessage(index: number, signal?: AbortSignal): Promise<StoredSms | null> {
    return this.withSmsCharset("UCS2", signal, async () =>
      parseCmgr(index, (await this.context.link.run(`AT+CMGR=${index}`, {prefixes: ["+CMGR:"], bodyLines: 1})).lines)
    );
  }

  async deleteMessage(index: number, signal?: AbortSignal): Promise<void> {
    const link = this.context.link;
    await this.context.line.with(async () => {
      link.readySession();
      await link.run(`AT+CMGD=${index}`);
    }, signal);
  }

  /** True when `line` was a status report (+CDS), now settled against the message it names. */
  receiveStatusReport(line: string): boolean {
    return this.statusReports.receive(line);
  }

  /** Ends every wait for a status report (the modem is stopping). */
  stop(): void {
    this.statusReports.stop();
  }

  // Holds the line, sets the charset the operation is written in, and puts IRA back for ATD and TTS.
  private withSmsCharset<T>(
    charset: "IRA" | "UCS2",
    signal: AbortSignal | undefined,
    work: () => Promise<T>
  ): Promise<T> {
    const link = this.context.link;
    return this.context.line.with(async () => {
      link.readySession();
      await link.run(`AT+CSCS="${charset}"`);
      try {
        return await work();
      } finally {
        if (charset !== "IRA") await link.run('AT+CSCS="IRA"').catch((error: unknown) => link.recordError(error));
      }
    }, signal);
  }
}
