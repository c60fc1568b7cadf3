import {describe, expect, it} from "vitest";
import {alertText, MAX_TEXT_CHARS} from "../../src/channels/telegram/telegram-message.js";
import {composeSms, planConcatenatedSms, planSms} from "../../src/channels/sms/sms-text.js";
import {segmentText} from "../../src/modem/sms-pdu.js";
import type {AlertSummary} from "../../src/channels/channel.js";

// 700 alerts to one person, the most urgent of them late in the storm.
const storm: AlertSummary[] = Array.from({length: 700}, (_, index) => ({
  notification_id: `notif_${index}`,
  priority: index === 650 ? "critical" : "high",
  message: `Fault ${index}`,
  source: "plc-7",
  link: null
}));

describe("texts of an alert storm", () => {
  it("Telegram: lists the storm most urgent first within 4096 characters, and counts the rest", () => {
    const text = alertText(storm, "2026-11-23T09:00:00.000Z");
    expect(text.length).toBeLessThanOrEqual(MAX_TEXT_CHARS);
    expect(text).toContain("🚨 700 alerts\n\n1. CRITICAL · plc-7\nFault 650\n\n2. HIGH · plc-7\nFault 0");
    expect(text).toMatch(
      /\n\n50\. HIGH · plc-7\nFault 48\n\n… and 650 more alerts: see them all in Klaxon's dashboard$/
    );
  });

  it("SMS: names the most urgent alerts and the count within the parts allowed, and the code acknowledges all", () => {
    const message = composeSms(storm, "4821");
    expect(message.body).toMatch(
      /^Klaxon: 700 alerts \(the 5 most urgent here\)\. 1\) CRITICAL from plc-7: Fault 650\. 2\) HIGH/
    );
    const parts = planSms(message, 3);
    expect(parts.length).toBeLessThanOrEqual(3);
    expect(parts.at(-1)).toMatch(/Reply 1 4821 or ACK 4821 to acknowledge all 700\.$/);
    const concatenated = planConcatenatedSms(message, 3);
    expect(segmentText(concatenated).length).toBeLessThanOrEqual(3);
    expect(concatenated).toContain("700 alerts");
  });
});
