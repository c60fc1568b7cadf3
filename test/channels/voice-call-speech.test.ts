import {describe, expect, it} from "vitest";
import {alertSpeech, promptSpeech} from "../../src/channels/voice-call/speech.js";
import type {AlertSummary} from "../../src/channels/channel.js";

const alert = (fields: Partial<AlertSummary> = {}): AlertSummary => ({
  notification_id: "notif_1",
  priority: "critical",
  message: "Oil temperature high",
  source: "press-7",
  link: null,
  ...fields
});

describe("what a call says", () => {
  it("names priority, source and message of one alert", () => {
    expect(alertSpeech([alert()])).toBe("Klaxon alert. Critical. From press-7. Oil temperature high.");
  });

  it("leaves out a missing source and folds line breaks", () => {
    expect(alertSpeech([alert({source: null, priority: "high", message: "Disk full\non db1!"})])).toBe(
      "Klaxon alert. High priority. Disk full on db1!"
    );
  });

  it("counts several alerts and numbers them", () => {
    expect(
      alertSpeech([
        alert(),
        alert({priority: "medium", source: null, message: "Door open"}),
        alert({priority: "info", source: "hall", message: "Shift change."})
      ])
    ).toBe(
      "Klaxon: 3 alerts. Alert 1: Critical. From press-7. Oil temperature high. Alert 2: Medium priority. Door open. Alert 3: Information. From hall. Shift change."
    );
  });

  it("sums up a storm and cuts a long message at a word", () => {
    const storm = Array.from({length: 8}, (_, index) => alert({message: `Sensor ${index} lost`}));
    expect(alertSpeech(storm)).toMatch(
      /^Klaxon: 8 alerts\. .*Alert 5: Critical\. From press-7\. Sensor 4 lost\. And 3 more\.$/
    );
    const spoken = alertSpeech([alert({message: "word ".repeat(200)})]);
    expect(spoken.length).toBeLessThan(360);
    expect(spoken).toMatch(/word \.\.\.$/);
  });

  it("speaks the configured keys, star and hash as words", () => {
    expect(promptSpeech({acknowledge: "1", repeat: "2", passOn: "9"})).toBe(
      "Press 1 to acknowledge, 2 to hear it again, 9 to pass it on."
    );
    expect(promptSpeech({acknowledge: "#", repeat: "*", passOn: "0"})).toBe(
      "Press hash to acknowledge, star to hear it again, 0 to pass it on."
    );
  });
});
