import {describe, expect, it} from "vitest";
import {existsSync} from "node:fs";
import {join} from "node:path";
import {tempDir} from "../support/gateway.js";
import {launchExpectingRefusal} from "../support/gateway-process.js";

describe("an unknown KLAXON_ variable", () => {
  it("stops the gateway process before it touches the data dir, naming the closest setting", async () => {
    const dataDir = join(tempDir(), "data");
    const start = await launchExpectingRefusal(dataDir, {KLAXON_SMTP_HOTS: "mail.lan"});
    expect(start.served).toBe(false);
    expect(start.code).toBe(78);
    expect(start.output).toMatch(
      /^klaxon: cannot start: unknown environment variable KLAXON_SMTP_HOTS: did you mean KLAXON_SMTP_HOST\?/m
    );
    expect(start.output).toContain('"msg":"klaxon failed to start"');
    expect(existsSync(dataDir)).toBe(false);
  });
});
