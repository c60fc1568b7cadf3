import {describe, expect, it} from "vitest";
import {
  acknowledgedText,
  acknowledgeKeyboard,
  alertText,
  callbackToken,
  displayName,
  MAX_TEXT_CHARS,
  voiceCaption
} from "../../src/channels/telegram/telegram-message.js";
import type {AlertSummary} from "../../src/channels/channel.js";

const alert = (message: string, fields: Partial<AlertSummary> = {}): AlertSummary => ({
  notification_id: "notif_1",
  priority: "critical",
  message,
  source: "plc-7",
  link: null,
  ...fields
});

describe("Telegram message texts", () => {
  it("writes one alert as headline, message and link", () => {
    expect(alertText([alert("Oil over 80 °C", {link: "https://grafana.lan/d/press7"})])).toBe(
      "🚨 CRITICAL · plc-7\nOil over 80 °C\nhttps://grafana.lan/d/press7"
    );
    expect(voiceCaption([alert("Oil over 80 °C")])).toBe("🚨 CRITICAL · plc-7");
  });

  it("numbers several alerts and says when a message was held back", () => {
    const text = alertText(
      [alert("Oil over 80 °C"), alert("Backup failed", {priority: "low", source: null})],
      "2026-11-23T09:00:00.000Z"
    );
    expect(text).toBe(
      "⏳ Held while Telegram was unreachable (since 2026-11-23T09:00:00.000Z)\n\n🚨 2 alerts\n\n1. CRITICAL · plc-7\nOil over 80 °C\n\n2. LOW\nBackup failed"
    );
    expect(voiceCaption([alert("a"), alert("b")])).toBe("🚨 2 alerts");
  });

  it("stays within Telegram's 4096 characters, also once acknowledged", () => {
    const storm = Array.from({length: 10}, (_, index) => alert(`${index} ${"x".repeat(1000)}`));
    const text = alertText(storm);
    expect(text.length).toBeLessThanOrEqual(MAX_TEXT_CHARS);
    // Whole alerts (each cut short), then the count of the rest: never a storm cut off mid-alert.
    expect(text).toMatch(/\n\n6\. CRITICAL · plc-7\n5 x+…\n\n… and 4 more alerts: see them all in Klaxon's dashboard$/);
    const acknowledged = acknowledgedText(text, "Maria Keller (@maria_k)");
    expect(acknowledged.length).toBeLessThanOrEqual(MAX_TEXT_CHARS);
    expect(acknowledged.endsWith("\n\n✅ Acknowledged by Maria Keller (@maria_k)")).toBe(true);
  });

  it("puts a token of at most 64 bytes on the button and reads only its own presses back", () => {
    const keyboard = acknowledgeKeyboard("Zm9vYmFyYmF6cXV4cXV1eA");
    const data = keyboard.inline_keyboard[0][0].callback_data;
    expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
    expect(callbackToken(data)).toBe("Zm9vYmFyYmF6cXV4cXV1eA");
    expect(callbackToken("resolve:abc")).toBeNull();
    expect(callbackToken("ack:")).toBeNull();
    expect(callbackToken(undefined)).toBeNull();
  });

  it("names the person who pressed as well as Telegram lets it", () => {
    expect(displayName({id: 1, first_name: "Maria", last_name: "Keller", username: "maria_k"})).toBe(
      "Maria Keller (@maria_k)"
    );
    expect(displayName({id: 1, first_name: "Jonas"})).toBe("Jonas");
    expect(displayName({id: 1, username: "ops"})).toBe("@ops");
    expect(displayName({id: 42})).toBe("Telegram user 42");
    expect(displayName({id: 1, first_name: "A".repeat(300)}).length).toBe(128);
  });
});
