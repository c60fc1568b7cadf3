import {headerFields} from "./sms-codec.js";
import {decodePdu, PduError} from "./sms-pdu.js";

// SMS status reports (3GPP 27.005 +CNMI <ds>=1, 23.040 TP-Status): the network's later word on
// whether a message we sent reached the phone, in text mode or PDU mode.

/** One status report: which message (by its reference) and what became of it. */
export interface StatusReport {
  messageRef: number;
  /** TP-Status, 0..255. */
  status: number;
}

/** What the network finally said about one message. */
export interface SmsDeliveryReport {
  outcome: "delivered" | "failed";
  /** The status in words, with its TP-Status number for anyone looking it up. */
  detail: string;
}

/**
 * A `+CDS` URC: text mode `+CDS: <fo>,<mr>,[<ra>],[<tora>],<scts>,<dt>,<st>`, or PDU mode
 * `+CDS: <length>,<pdu>` (two lines the parser joined); null for any other line, and for a
 * report that cannot be read.
 */
export function parseCds(line: string): StatusReport | null {
  if (!line.startsWith("+CDS:")) return null;
  const fields = headerFields(line);
  if (fields.length === 2) return pduReport(fields[1], Number(fields[0]));
  if (fields.length < 7) return null;
  const messageRef = Number(fields[1]);
  const status = Number(fields[fields.length - 1]);
  if (!isByte(messageRef) || !isByte(status)) return null;
  return {messageRef, status};
}

function pduReport(pdu: string, tpduLength: number): StatusReport | null {
  try {
    const report = decodePdu(pdu, tpduLength);
    return report.kind === "status_report" ? {messageRef: report.messageRef, status: report.status} : null;
  } catch (error) {
    if (error instanceof PduError) return null;
    throw error;
  }
}

function isByte(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 255;
}

// 23.040 9.2.3.15. 0x60..0x7f are temporary errors the service centre no longer retries, so for
// us they end the message as surely as the permanent ones.
const STATUS_WORDS: Record<number, string> = {
  0x00: "received by the phone",
  0x01: "forwarded to the phone, delivery not confirmed",
  0x02: "replaced by the service centre",
  0x40: "remote procedure error",
  0x41: "incompatible destination",
  0x42: "connection rejected by the phone",
  0x43: "number not obtainable",
  0x44: "quality of service not available",
  0x45: "no interworking available",
  0x46: "validity period expired",
  0x47: "deleted by the sender",
  0x48: "deleted by the service centre",
  0x49: "message does not exist",
  0x60: "network congestion",
  0x61: "phone busy",
  0x62: "no response from the phone",
  0x63: "service rejected",
  0x64: "quality of service not available",
  0x65: "error in the phone"
};

/**
 * The final word in a TP-Status, or null while the service centre is still trying (32..63) and
 * for the reserved values above 127, which promise nothing either way.
 */
export function reportFor(status: number): SmsDeliveryReport | null {
  const words = STATUS_WORDS[status];
  if (status <= 0x1f)
    return {outcome: "delivered", detail: `the network reports the SMS ${words ?? "delivered"} (TP-Status ${status})`};
  if (status >= 0x40 && status <= 0x7f) {
    return {
      outcome: "failed",
      detail: `the network gave up delivering the SMS: ${words ?? "service centre specific error"} (TP-Status ${status})`
    };
  }
  return null;
}

interface Waiting {
  resolve(report: SmsDeliveryReport | null): void;
  timer: NodeJS.Timeout;
}

/**
 * Messages waiting for their status report, keyed by message reference. A reference is one
 * byte, so the map never holds more than 256 entries: a new message that reuses a reference
 * still waiting ends the old wait (null) rather than risk giving it the new message's report.
 * Every wait ends, with a report, at the limit (null) or at stop (null); none ever rejects.
 */
export class SmsStatusReports {
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly limitMs: number) {}

  /**
   * Waits for the report on the message the modem numbered `messageRef`. Registered once
   * +CMGS named the reference: the report needs a network round trip after that, so it cannot
   * come sooner.
   */
  expect(messageRef: number): Promise<SmsDeliveryReport | null> {
    this.settle(messageRef, null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(messageRef, null), this.limitMs);
      // A pending report is no reason to keep the process alive.
      timer.unref();
      this.waiting.set(messageRef, {resolve, timer});
    });
  }

  /**
   * Takes a URC; true when it was a status report (ours or not), so the caller looks no further.
   * Reports for references nobody waits for (sent before a restart, or already given up on) are
   * dropped; a "still trying" report keeps the wait going.
   */
  receive(line: string): boolean {
    if (!line.startsWith("+CDS:")) return false;
    const report = parseCds(line);
    if (report) this.take(report);
    return true;
  }

  /** A report read from the URC or from storage; a "still trying" report keeps the wait going. */
  take(report: StatusReport): void {
    const final = reportFor(report.status);
    if (final) this.settle(report.messageRef, final);
  }

  /** Ends every wait with null: the modem is going away and no report will be read. */
  stop(): void {
    for (const messageRef of [...this.waiting.keys()]) this.settle(messageRef, null);
  }

  private settle(messageRef: number, report: SmsDeliveryReport | null): void {
    const waiting = this.waiting.get(messageRef);
    if (!waiting) return;
    this.waiting.delete(messageRef);
    clearTimeout(waiting.timer);
    waiting.resolve(report);
  }
}
