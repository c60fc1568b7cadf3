import {h} from "../lib/dom.js";
import {dayName, zonedDays, zonedTime, zonedWhen} from "../lib/zoned.js";

export const TIMELINE_DAYS = 14;

/** Who a final shift pages and why, in words: "Anna · early (crew A)", "Dora, Anna · override". */
export function shiftSummary(shift) {
  const who =
    shift.target.kind === "group"
      ? `${shift.target.name} (${shift.recipients.map((recipient) => recipient.name).join(", ")})`
      : shift.target.name;
  const why =
    shift.source === "override"
      ? "override"
      : [shift.shift_name, shift.crew ? `crew ${shift.crew}` : null, shift.layer_name].filter(Boolean).join(", ");
  return why ? `${who} · ${why}` : who;
}

/** The shifts and gaps as pieces of the timeline, each with its instants and how it is marked. */
function pieces({shifts, gaps}, fallbackName) {
  return [
    ...shifts.map((shift) => ({
      kind: shift.source === "override" ? "override" : "shift",
      starts: Date.parse(shift.starts_at),
      ends: Date.parse(shift.ends_at),
      label: shift.target.name,
      summary: shiftSummary(shift)
    })),
    ...gaps.map((gap) => ({
      kind: "gap",
      starts: Date.parse(gap.starts_at),
      ends: Date.parse(gap.ends_at),
      label: `Gap: ${fallbackName}`,
      summary: `nobody on a shift, the fallback ${fallbackName} is paged`
    }))
  ].sort((a, b) => a.starts - b.starts);
}

/**
 * A piece of the day, placed along the day's track. Its place is set through the CSSOM, which the
 * Content-Security-Policy allows (it refuses style attributes, not style properties set by script).
 */
function segment(piece, day, zone) {
  const starts = Math.max(piece.starts, day.starts);
  const ends = Math.min(piece.ends, day.ends);
  const length = day.ends - day.starts;
  const span = `${zonedTime(starts, zone)}–${ends === day.ends ? "24:00" : zonedTime(ends, zone)}`;
  const element = h(
    "li",
    {class: `segment segment-${piece.kind}`, title: `${span} ${piece.summary}`, "data-kind": piece.kind},
    h("span", {class: "visually-hidden"}, `${span}: ${piece.summary}`),
    h("span", {class: "segment-label", "aria-hidden": "true"}, piece.label)
  );
  element.style.left = `${((starts - day.starts) / length) * 100}%`;
  element.style.width = `${((ends - starts) / length) * 100}%`;
  return element;
}

/** The days from today in the schedule's zone: the instants GET …/shifts is asked for. */
export function timelineRange(zone, nowMs = Date.now()) {
  const days = zonedDays(nowMs, zone, TIMELINE_DAYS);
  return {days, from: new Date(days[0].starts).toISOString(), to: new Date(days.at(-1).ends).toISOString()};
}

/** One row per local day, a bar per shift on a 24-hour track; overrides and gaps marked. */
export function timeline(final, {days, zone, fallbackName}) {
  const all = pieces(final, fallbackName);
  const scale = h(
    "div",
    {class: "timeline-scale", "aria-hidden": "true"},
    ["00:00", "06:00", "12:00", "18:00"].map((time) => h("span", {}, time))
  );
  return h(
    "div",
    {class: "shift-timeline"},
    h(
      "p",
      {class: "timeline-legend"},
      h("span", {class: "key key-shift"}, "shift"),
      h("span", {class: "key key-override"}, "override"),
      h("span", {class: "key key-gap"}, "gap: the fallback is paged")
    ),
    h("div", {class: "timeline-row timeline-head"}, h("span", {class: "day-label"}), scale),
    h(
      "ol",
      {class: "timeline-days"},
      days.map((day) =>
        h(
          "li",
          {class: "timeline-row", "data-date": day.date},
          h("span", {class: "day-label"}, dayName(day.date)),
          h(
            "ol",
            {class: "day-track", "aria-label": `${dayName(day.date)}, ${zone}`},
            all
              .filter((piece) => piece.starts < day.ends && piece.ends > day.starts)
              .map((piece) => segment(piece, day, zone))
          )
        )
      )
    )
  );
}

/** "Thu 26 Nov, 06:00 – Thu 26 Nov, 14:00" on the zone's wall clock. */
export function zonedSpan(startsAt, endsAt, zone) {
  return `${zonedWhen(startsAt, zone)} – ${zonedWhen(endsAt, zone)}`;
}
