import {api, listAll} from "../lib/api.js";
import {announce, badge, copyable, dataTable, emptyState, fill, h, pageHeading} from "../lib/dom.js";
import {confirmedAction} from "../lib/actions.js";
import {loadTargets} from "../lib/targets.js";
import {zonedTimeElement} from "../lib/zoned.js";
import {overrideForm, scheduleForm} from "./schedule-forms.js";
import {shiftSummary, timeline, timelineRange, TIMELINE_DAYS, zonedSpan} from "./schedule-timeline.js";

/** Who is on call now, and the shift that makes them so; in a gap, the fallback paged instead. */
function onCallNow(onCall, zone) {
  const names = onCall.recipients.map((recipient) => recipient.name).join(", ") || "nobody";
  if (!onCall.shift)
    return h(
      "div",
      {class: "on-call on-call-gap"},
      h("p", {class: "on-call-who"}, badge("warning", "gap"), " On call now: ", h("strong", {}, names)),
      h("p", {class: "meta"}, `Nobody is on a shift: the fallback ${onCall.fallback?.name ?? names} is paged.`)
    );
  return h(
    "div",
    {class: "on-call"},
    h(
      "p",
      {class: "on-call-who"},
      onCall.shift.source === "override" ? badge("pending", "override") : null,
      " On call now: ",
      h("strong", {}, names)
    ),
    h(
      "p",
      {class: "meta"},
      shiftSummary(onCall.shift),
      ", ",
      zonedSpan(onCall.shift.starts_at, onCall.shift.ends_at, zone)
    )
  );
}

/** The overrides not yet over, each with its delete button. */
function overridesTable(schedule, nameOf, onDeleted) {
  const now = Date.now();
  const current = schedule.overrides.filter((override) => Date.parse(override.ends_at) > now);
  if (!current.length) return emptyState("No current or upcoming overrides.");
  const remove = (override) =>
    confirmedAction({
      text: "Delete",
      label: `Delete the override of ${nameOf(override.recipient_uuid)} from ${override.starts_at}`,
      question: `Delete the override of ${nameOf(override.recipient_uuid)}?`,
      method: "DELETE",
      path: `/api/v1/schedules/${schedule.uuid}/overrides/${override.id}`,
      done: "Override deleted",
      after: onDeleted,
      needs: "operate"
    });
  return dataTable({
    caption: `Overrides of ${schedule.name}`,
    columns: ["Who", "From", "Until", "Delete"],
    rows: current.map((override) => [
      nameOf(override.recipient_uuid),
      zonedTimeElement(h, override.starts_at, schedule.timezone),
      zonedTimeElement(h, override.ends_at, schedule.timezone),
      remove(override)
    ])
  });
}

/** On-call schedules: who is on call now and for the next 14 days, overrides, the calendar feed, new and edited schedules. */
export async function schedulesPage(main) {
  const targets = await loadTargets();
  const list = h("div", {class: "stack"});
  const creator = h("div");

  async function card(schedule) {
    const zone = schedule.timezone;
    const range = timelineRange(zone);
    const base = `/api/v1/schedules/${schedule.uuid}`;
    const [onCall, final] = await Promise.all([
      api("GET", `${base}/on-call`),
      api("GET", `${base}/shifts?from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`)
    ]);
    const fallbackName = targets.nameOf(schedule.fallback);
    const overrides = h("div", {class: "stack"});
    const showOverrides = () => fill(overrides, overridesTable(schedule, targets.nameOf, load));
    showOverrides();
    return h(
      "article",
      {class: "card item schedule", "data-uuid": schedule.uuid},
      h("div", {class: "card-head"}, h("h2", {}, schedule.name), badge("zone", zone)),
      h("p", {class: "meta"}, `Times in ${zone} · fallback: ${fallbackName}`),
      // A schedule is a target like a recipient or group: its uuid is what the API and the CLIs' --to take.
      h("p", {class: "meta"}, "UUID ", copyable(schedule.uuid, "Copy UUID")),
      onCallNow(onCall, zone),
      h("h3", {}, `The next ${TIMELINE_DAYS} days`),
      timeline(final, {days: range.days, zone, fallbackName}),
      final.gaps.length
        ? h(
            "p",
            {class: "card-problem"},
            `${final.gaps.length === 1 ? "1 gap" : `${final.gaps.length} gaps`} in the next ${TIMELINE_DAYS} days: ${fallbackName} is paged then. The first starts `,
            zonedTimeElement(h, final.gaps[0].starts_at, zone),
            "."
          )
        : null,
      h("p", {class: "meta"}, "Calendar feed (iCal), no key needed: ", copyable(schedule.ical_url, "Copy iCal URL")),
      h(
        "details",
        {class: "overrides"},
        h("summary", {}, `Overrides (${schedule.overrides.length})`),
        overrides,
        overrideForm(schedule, targets, async () => {
          announce("Override added");
          await load();
        })
      ),
      h(
        "details",
        {class: "edit-schedule", "data-needs": "admin"},
        h("summary", {}, "Edit schedule"),
        scheduleForm(
          targets,
          async (saved) => {
            announce(`Schedule ${saved.name} saved`);
            await load();
          },
          schedule
        ),
        h(
          "div",
          {class: "actions"},
          confirmedAction({
            text: "Delete schedule",
            question: `Delete the schedule ${schedule.name}? Its calendar feed stops too.`,
            method: "DELETE",
            path: base,
            done: `Schedule ${schedule.name} deleted`,
            after: load
          })
        )
      )
    );
  }

  /** Re-renders every schedule, keeping open the overrides of those that were open. */
  async function load() {
    const open = new Set(
      [...list.querySelectorAll("article.schedule:has(details.overrides[open])")].map((article) => article.dataset.uuid)
    );
    const schedules = await listAll("/api/v1/schedules");
    const cards = await Promise.all(schedules.map(card));
    for (const article of cards)
      if (open.has(article.dataset.uuid)) article.querySelector("details.overrides").open = true;
    fill(list, cards.length ? cards : emptyState("No schedules yet."));
    fill(
      creator,
      h(
        "details",
        {class: "card new-schedule", "data-needs": "admin"},
        h("summary", {}, "New schedule"),
        scheduleForm(targets, async (created) => {
          announce(`Schedule ${created.name} created`);
          await load();
        })
      )
    );
  }

  fill(
    main,
    pageHeading("Schedules"),
    h(
      "p",
      {class: "hint"},
      "Who is on call, shift by shift, in each schedule's own time zone. A schedule's uuid is a target like a recipient's: alerts to it page whoever is on call."
    ),
    list,
    creator
  );
  await load();
}
