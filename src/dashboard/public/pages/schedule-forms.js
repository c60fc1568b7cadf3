import {api} from "../lib/api.js";
import {h} from "../lib/dom.js";
import {field, select, submitting, textOrNull} from "../lib/forms.js";
import {targetOptions} from "../lib/targets.js";
import {instantField, layersEditor} from "./schedule-layers.js";

function zonedInput(label, name, zone, pointer) {
  return field({label, name, pointer, type: "datetime-local", hint: `Wall time in ${zone}`});
}

/** Puts one recipient on call for a span, over every layer; an overlap is refused by the gateway (409). */
export function overrideForm(schedule, targets, onAdded) {
  const zone = schedule.timezone;
  const form = h(
    "form",
    {novalidate: true, class: "override-form", "data-needs": "operate"},
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

/**
 * Creates a schedule, or edits `schedule` (a PATCH that replaces name, zone, layers and fallback
 * whole): rotation and shift-pattern layers, and the fallback the gateway requires.
 */
export function scheduleForm(targets, onSaved, schedule = null) {
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const layers = layersEditor(targets, schedule?.layers ?? [{type: "rotation"}], schedule?.timezone ?? browserZone);
  const form = h(
    "form",
    {novalidate: true, class: "schedule-form"},
    field({
      label: "Name",
      name: "name",
      value: schedule?.name,
      hint: "What people call it, e.g. Line 3 maintenance",
      autocomplete: "off"
    }),
    field({
      label: "Time zone",
      name: "timezone",
      value: schedule?.timezone ?? browserZone,
      hint: "IANA zone, e.g. Europe/Berlin"
    }),
    layers.element,
    select({
      label: "Fallback",
      name: "fallback",
      options: targetOptions(targets),
      value: schedule?.fallback,
      hint: "Paged when nobody is on call"
    }),
    h(
      "div",
      {class: "actions"},
      h("button", {type: "submit", class: "button primary"}, schedule ? "Save schedule" : "Create schedule")
    )
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const zone = form.elements.timezone.value.trim();
    const body = {
      name: textOrNull(form, "name") ?? "",
      timezone: zone,
      layers: layers.read(zone),
      fallback: form.elements.fallback.value || null
    };
    const result = await submitting(form, () =>
      schedule ? api("PATCH", `/api/v1/schedules/${schedule.uuid}`, body) : api("POST", "/api/v1/schedules", body)
    );
    if (result.ok) await onSaved(result.value);
  });
  return form;
}
