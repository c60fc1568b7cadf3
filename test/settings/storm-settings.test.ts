import {describe, expect, it} from "vitest";
import {loadSettings} from "../../src/settings/load-settings.js";

describe("storm.max_join_delay_seconds", () => {
  it("lets a storm's newcomer wait at most 30 s by default, and takes 0 to page every newcomer at once", () => {
    expect(loadSettings({}).settings.storm).toEqual({max_join_delay_seconds: 30});
    expect(loadSettings({KLAXON_STORM_MAX_JOIN_DELAY_SECONDS: "0"}).settings.storm.max_join_delay_seconds).toBe(0);
  });

  it.each(["-1", "601", "2.5"])("refuses %s, naming the setting", (value) => {
    expect(() => loadSettings({KLAXON_STORM_MAX_JOIN_DELAY_SECONDS: value})).toThrow(
      /storm.max_join_delay_seconds: must be a whole number 0..600/
    );
  });
});
