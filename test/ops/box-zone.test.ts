import {afterEach, describe, expect, it} from "vitest";
import {boxTimeZone} from "../../src/ops/box-zone.js";
import {nextCronTime, parseCron} from "../../src/domain/cron.js";

// Idle footprint (issue 36, docs/benchmarks.md): building any Intl.DateTimeFormat reads about 5 MB of
// ICU data into memory, so a box on UTC finds its zone and schedules its nightly backup without one.

const RealDateTimeFormat = Intl.DateTimeFormat;
let formattersBuilt = 0;

/** Counts the Intl.DateTimeFormat objects built until the test ends. */
function countFormatters(): void {
  formattersBuilt = 0;
  Intl.DateTimeFormat = new Proxy(RealDateTimeFormat, {
    construct(target, args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
      formattersBuilt++;
      return new target(...args);
    },
    apply(target, _this, args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
      formattersBuilt++;
      return target(...args);
    }
  });
}

afterEach(() => {
  Intl.DateTimeFormat = RealDateTimeFormat;
});

const link = (target: string) => () => target;
const noLink = () => {
  throw Object.assign(new Error("EINVAL: invalid argument, readlink '/etc/localtime'"), {code: "EINVAL"});
};

describe("the box's time zone", () => {
  it.each([
    ["TZ=UTC", {TZ: "UTC"}, link("/usr/share/zoneinfo/Europe/Berlin")],
    ["TZ=Etc/UTC", {TZ: "Etc/UTC"}, noLink],
    ["/etc/localtime -> Etc/UTC", {}, link("/usr/share/zoneinfo/Etc/UTC")],
    ["/etc/localtime -> UTC", {}, link("../usr/share/zoneinfo/UTC")]
  ])("is UTC from %s, and the nightly backup is aimed without Intl", (_case, env, localtimeLink) => {
    countFormatters();
    const zone = boxTimeZone({env, localtimeLink});
    const next = nextCronTime(parseCron("30 2 * * *"), zone, Date.UTC(2026, 10, 28, 13, 0));
    expect(zone).toBe("UTC");
    expect(next).toBe(Date.UTC(2026, 10, 29, 2, 30));
    expect(formattersBuilt).toBe(0);
  });

  it("asks Intl, as every box did before, when TZ or the link names another zone or cannot be read", () => {
    const fromIntl = RealDateTimeFormat().resolvedOptions().timeZone;
    expect(boxTimeZone({env: {TZ: "Europe/Berlin"}, localtimeLink: link("/usr/share/zoneinfo/Etc/UTC")})).toBe(
      fromIntl
    );
    expect(boxTimeZone({env: {}, localtimeLink: link("/usr/share/zoneinfo/Europe/Berlin")})).toBe(fromIntl);
    expect(boxTimeZone({env: {}, localtimeLink: noLink})).toBe(fromIntl);
  });

  it("reads a named zone's clock through Intl, exactly as before", () => {
    // 02:30 in Berlin on 29 November 2026 (CET, UTC+1) is 01:30 UTC.
    expect(nextCronTime(parseCron("30 2 * * *"), "Europe/Berlin", Date.UTC(2026, 10, 28, 13, 0))).toBe(
      Date.UTC(2026, 10, 29, 1, 30)
    );
  });
});
