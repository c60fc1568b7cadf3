import {describe, expect, it} from "vitest";
import {redact, redactString} from "../../src/lib/redact.js";

describe("redaction of log fields", () => {
  it.each([
    ["an API key", "key klx_0a1b2c3d_s3cr3tS3cr3tS3cr3t used", "key [redacted] used"],
    ["a webhook secret", "secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "secret [redacted]"],
    [
      "a bot token in a Bot API URL",
      "GET https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe",
      "GET https://api.telegram.org/[redacted]/getMe"
    ],
    ["a heartbeat ping path", "/ping/Zx8dK2mN4pQ7rT9vW1yB3cE5/fail", "/ping/[redacted]/fail"],
    ["a calendar feed path", "/ical/Zx8dK2mN4pQ7rT9vW1yB3cE5aB-_x9.ics", "/ical/[redacted]"],
    ["an acknowledge link path", "/ack/v1.eyJuIjpbIm5vdGlmXzAxIl19.c2lnbmF0dXJlLXNpZ25hdHVyZQ", "/ack/[redacted]"],
    [
      "an integration URL token",
      "/api/v1/integrations/int_01/events?token=Q2hhbmdlTWUxMjM0NTY3OA&x=1",
      "/api/v1/integrations/int_01/events?token=[redacted]&x=1"
    ]
  ])("hides %s in a message", (_what, text, expected) => {
    expect(redactString(text)).toBe(expected);
  });

  it("keeps ordinary paths and short path segments", () => {
    expect(redactString("/api/v1/heartbeats/press-7/ping")).toBe("/api/v1/heartbeats/press-7/ping");
    expect(redactString("/ack/short")).toBe("/ack/short");
  });

  it("hides fields named like secrets, whatever their value", () => {
    expect(redact({password: "hunter2", user: "klaxon", nested: {api_key: "x", pin: "1234"}})).toEqual({
      password: "[redacted]",
      user: "klaxon",
      nested: {api_key: "[redacted]", pin: "[redacted]"}
    });
  });
});
