import {describe, expect, it} from "vitest";
import {MAX_SPOKEN_ALERTS, spokenAlerts, speakable} from "../../src/channels/speech/spoken-alert.js";
import {SpeechSynthesizer, SpeechUnavailableError} from "../../src/channels/speech/speech-synthesizer.js";
import type {AlertSummary} from "../../src/channels/channel.js";
import {isOggOpus} from "../support/telegram-bot-api.js";

const alert = (message: string, fields: Partial<AlertSummary> = {}): AlertSummary => ({
  notification_id: `notif_${message.length}`,
  priority: "critical",
  message,
  source: null,
  link: null,
  ...fields
});

describe("spoken alert text", () => {
  it("says one alert's priority, source and message, then how to acknowledge", () => {
    expect(spokenAlerts([alert("Press 7 hydraulic oil over 80 °C", {source: "plc-7"})])).toBe(
      "Klaxon alert, priority critical, from plc 7: Press 7 hydraulic oil over 80 °C. Press the Acknowledge button under the message to acknowledge it."
    );
  });

  it("leaves out a missing source and keeps the message's own full stop", () => {
    expect(spokenAlerts([alert("Boiler 2 pressure high!", {priority: "high"})])).toBe(
      "Klaxon alert, priority high: Boiler 2 pressure high! Press the Acknowledge button under the message to acknowledge it."
    );
  });

  it("numbers several alerts and asks to acknowledge them all", () => {
    const text = spokenAlerts([
      alert("Disk full on db1", {source: "nagios"}),
      alert("Backup failed", {priority: "medium"})
    ]);
    expect(text).toBe(
      "Klaxon, 2 alerts. Alert 1, priority critical, from nagios: Disk full on db1. Alert 2, priority medium: Backup failed. Press the Acknowledge button under the message to acknowledge them all."
    );
  });

  it("names the first alerts of a storm and counts the rest", () => {
    const storm = Array.from({length: MAX_SPOKEN_ALERTS + 3}, (_, index) => alert(`Sensor ${index + 1} offline`));
    const text = spokenAlerts(storm);
    expect(text).toContain(`Klaxon, ${MAX_SPOKEN_ALERTS + 3} alerts.`);
    expect(text).toContain(`Alert ${MAX_SPOKEN_ALERTS}, `);
    expect(text).not.toContain(`Alert ${MAX_SPOKEN_ALERTS + 1},`);
    expect(text).toContain("And 3 more alerts.");
  });

  it("cuts a long message at a word instead of reading it all", () => {
    const long = "word ".repeat(200).trim();
    const text = spokenAlerts([alert(long)]);
    expect(text.length).toBeLessThan(long.length);
    expect(text).toMatch(/word, and more\. Press the Acknowledge/);
  });

  it("reads links as 'link', underscores and dashes as pauses, and never starts with a dash", () => {
    expect(speakable("see https://grafana.lan/d/abc?x=1 now")).toBe("see link now");
    expect(speakable("pump_station-3   tank\nlevel")).toBe("pump station 3 tank level");
    expect(spokenAlerts([alert("--help")])).toMatch(/^Klaxon alert/);
  });
});

describe("speech synthesizer (espeak-ng and opusenc)", () => {
  it("makes a real Ogg Opus voice note from text", async () => {
    const speech = new SpeechSynthesizer({voice: "en-us", timeoutMs: 20_000});
    expect(await speech.check()).toBeNull();
    const ogg = await speech.synthesize(spokenAlerts([alert("Disk full on db1", {source: "nagios"})]));
    expect(isOggOpus(ogg)).toBe(true);
    expect(ogg.length).toBeGreaterThan(1000);
  });

  it("takes text that looks like an option or a shell command as words to say", async () => {
    const speech = new SpeechSynthesizer({voice: "en-us", timeoutMs: 20_000});
    const ogg = await speech.synthesize("--version; rm -rf / $(reboot)");
    expect(isOggOpus(ogg)).toBe(true);
  });

  it("reports a missing program clearly and remembers it", async () => {
    const speech = new SpeechSynthesizer({voice: "en-us", timeoutMs: 20_000, espeakCommand: "espeak-ng-not-installed"});
    await expect(speech.synthesize("hello")).rejects.toBeInstanceOf(SpeechUnavailableError);
    expect(speech.unavailable).toBe(
      "espeak-ng-not-installed is not installed (Debian: apt install espeak-ng opus-tools)"
    );
    expect(await speech.check()).toMatch(/not installed/);

    const noEncoder = new SpeechSynthesizer({
      voice: "en-us",
      timeoutMs: 20_000,
      opusencCommand: "opusenc-not-installed"
    });
    expect(await noEncoder.check()).toBe(
      "opusenc-not-installed is not installed (Debian: apt install espeak-ng opus-tools)"
    );
  });

  it("reports a program that fails, with its exit code", async () => {
    const speech = new SpeechSynthesizer({voice: "en-us", timeoutMs: 20_000, opusencCommand: "false"});
    await expect(speech.synthesize("hello")).rejects.toThrow("false exited with 1: no message");
  });

  it("cuts off a synthesis that takes too long", async () => {
    const speech = new SpeechSynthesizer({voice: "en-us", timeoutMs: 1});
    await expect(speech.synthesize("word ".repeat(2000))).rejects.toThrow("speech synthesis took longer than 1 ms");
  });
});
