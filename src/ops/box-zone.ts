import {readlinkSync} from "node:fs";

/** Where /etc/localtime points on a box whose clock runs on UTC (Debian, Raspberry Pi OS, systemd's timedatectl). */
const UTC_LINK = /\/zoneinfo\/(?:Etc\/)?UTC$/;

/** How the box's zone is found: its environment and the /etc/localtime link (replaced in tests). */
export interface BoxZoneSources {
  env: NodeJS.ProcessEnv;
  localtimeLink: () => string;
}

const SYSTEM: BoxZoneSources = {env: process.env, localtimeLink: () => readlinkSync("/etc/localtime")};

/**
 * The box's own time zone (TZ, else /etc/localtime), as the system cron would read
 * backup.schedule, named as Intl names it. A box on UTC is told from TZ or the link without Intl:
 * building any Intl.DateTimeFormat, even to ask its zone, reads about 5 MB of ICU's data from the
 * node binary into the resident set (docs/benchmarks.md, "Idle footprint"), and on UTC nothing else
 * at start needs it (zoned-time.ts does UTC without Intl). Any other zone is asked of Intl, whose
 * rules the schedule then needs anyway.
 */
export function boxTimeZone(sources: BoxZoneSources = SYSTEM): string {
  const tz = sources.env.TZ;
  if (tz === "UTC" || tz === "Etc/UTC") return "UTC";
  if (tz === undefined) {
    try {
      if (UTC_LINK.test(sources.localtimeLink())) return "UTC";
    } catch {
      // No link (a copied file, a container without one): Intl knows how ICU found the zone.
    }
  }
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}
