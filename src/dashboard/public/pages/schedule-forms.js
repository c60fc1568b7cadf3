import {api} from "../lib/api.js";
import {h} from "../lib/dom.js";
import {checkedValues, field, numberOf, orderedChecklist, select, submitting, textOrNull} from "../lib/forms.js";
import {targetOptions} from "../lib/targets.js";
import {instantOf, knownZone} from "../lib/zoned.js";

/**
 * A datetime-local value read on `zone`'s wall clock, as an ISO instant. Left as typed when it
 * cannot be read (empty, or the zone unknown), so the gateway names the mistake at its pointer.
 */
function instantField(form, name, zone) {
  const value = form.elements.namedItem(name).value;
  return value && knownZone(zone) ? new Date(instantOf(value, zone)).toISOString() : value;
}

function zonedInput(label, name, zone, pointer) {
  return field({label, name, pointer, type: "datetime-local", hint: `Wall time in ${zone}`});
}

/** Puts one recipient on call for a span, over every layer; an overlap is refused by the gateway (409). */
export function overrideForm(schedule, targets, onAdded) {
  const zone = schedule.timezone;
  const form = h(
    "form",
    {novalidate: true, class: "override-form"},
    h("h4", {}, "Add an override"),
    select({
      label: "Who is on call instead",
      name: "recipient_uuid",
      options: targets.recipients.map((recipient) => [recipient.uuid, recipient.name])
    }),
    h("div", {class: "field-row"}, zonedInput("From", "starts_at", zone), zonedInput("Until", "ends_at", zone)),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button"}, "Add override"))
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await submitting(form, () =>
      api("POST", `/api/v1/schedules/${schedule.uuid}/overrides`, {
        recipient_uuid: form.elements.recipient_uuid.value,
        starts_at: instantField(form, "starts_at", zone),
        ends_at: instantField(form, "ends_at", zone)
      })
    );
    if (result.ok) await onAdded(result.value);
  });
  return form;
}

const SHIFT_UNITS = [
  ["hours", "hours"],
  ["days", "days"],
  ["weeks", "weeks"]
];

/**
 * A schedule of one rotation layer: members taking turns of a fixed length from a start. Shift
 * patterns and restrictions are made through the API for now (docs/dashboard.md).
 */
export function rotationScheduleForm(targets, onCreated) {
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const form = h(
    "form",
    {novalidate: true},
    field({label: "Name", name: "name", hint: "What people call it, e.g. Line 3 maintenance", autocomplete: "off"}),
    field({label: "Time zone", name: "timezone", value: browserZone, hint: "IANA zone, e.g. Europe/Berlin"}),
    orderedChecklist({
      legend: "Members, in turn order",
      name: "members",
      pointer: "/layers/0/members",
      options: targets.recipients.map((recipient) => [recipient.uuid, recipient.name])
    }),
    h(
      "div",
      {class: "field-row"},
      field({label: "Shift length", name: "shift_length", pointer: "/layers/0", type: "number", min: "1", value: "12"}),
      select({label: "Unit", name: "shift_unit", options: SHIFT_UNITS, value: "hours"})
    ),
    field({
      label: "First hand-off",
      name: "starts_at",
      pointer: "/layers/0/starts_at",
      type: "datetime-local",
      hint: "Wall time in the zone above; later hand-offs keep its time of day"
    }),
    select({
      label: "Fallback",
      name: "fallback",
      options: targetOptions(targets),
      hint: "Paged when nobody is on call"
    }),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Create schedule"))
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const zone = form.elements.timezone.value.trim();
    const result = await submitting(form, () =>
      api("POST", "/api/v1/schedules", {
        name: textOrNull(form, "name") ?? "",
        timezone: zone,
        layers: [
          {
            type: "rotation",
            members: checkedValues(form, "members"),
            [`shift_length_${form.elements.shift_unit.value}`]: numberOf(form, "shift_length"),
            starts_at: instantField(form, "starts_at", zone)
          }
        ],
        fallback: form.elements.fallback.value || null
      })
    );
    if (result.ok) await onCreated(result.value);
  });
  return form;
}
