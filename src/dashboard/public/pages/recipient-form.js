import {api} from "../lib/api.js";
import {h} from "../lib/dom.js";
import {checkboxes, checkedValues, field, numberOf, orderedChecklist, submitting, textOrNull} from "../lib/forms.js";
import {CHANNEL_NAMES, CHANNELS, PRIORITIES} from "../lib/format.js";

const CHANNEL_OPTIONS = CHANNELS.map((channel) => [channel, CHANNEL_NAMES[channel]]);
const PRIORITY_OPTIONS = PRIORITIES.map((priority) => [priority, priority]);
const DEFAULT_ORDER = ["telegram_voice", "voice_call", "email"];
// The contact field each channel needs, as the API's default order keeps only channels with a contact.
const CONTACT_OF = {telegram_voice: "telegram_id", voice_call: "phone", sms: "phone", email: "email"};

/**
 * A new recipient's channel boxes follow the contacts typed, as the API's default does (a person
 * with only an email gets email alone), until a channel box is changed by hand.
 */
function followContacts(form) {
  let chosenByHand = false;
  const boxes = () => [...form.querySelectorAll('input[name="channel_order"]')];
  const sync = () => {
    if (chosenByHand) return;
    for (const box of boxes())
      box.checked = DEFAULT_ORDER.includes(box.value) && Boolean(form.elements[CONTACT_OF[box.value]].value.trim());
  };
  for (const box of boxes()) box.addEventListener("change", () => (chosenByHand = true));
  for (const name of ["phone", "email", "telegram_id"]) form.elements[name].addEventListener("input", sync);
  sync();
}
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

function zoneList() {
  return h(
    "datalist",
    {id: "time-zones"},
    Intl.supportedValuesOf("timeZone").map((zone) => h("option", {value: zone}))
  );
}

function ruleRow(rule, index) {
  const row = h(
    "div",
    {class: "rule", "data-rule": ""},
    checkboxes({
      legend: `Rule ${index + 1}: priorities`,
      name: `rule-${index}-priorities`,
      pointer: `/routing_rules/${index}/priorities`,
      options: PRIORITY_OPTIONS,
      checked: rule.priorities
    }),
    checkboxes({
      legend: "may use only",
      name: `rule-${index}-channels`,
      pointer: `/routing_rules/${index}/channels`,
      options: CHANNEL_OPTIONS,
      checked: rule.channels
    }),
    h("button", {type: "button", class: "button small", onclick: () => row.remove()}, `Remove rule ${index + 1}`)
  );
  return row;
}

/** The recipient editor: contacts, channel order, escalation, quiet hours and routing rules. */
export function recipientForm(recipient, onDone) {
  const quiet = recipient?.quiet_hours;
  const rules = h("div", {class: "rules"}, (recipient?.routing_rules ?? []).map(ruleRow));
  let ruleCount = rules.children.length;
  const form = h(
    "form",
    {novalidate: true, class: "card editor"},
    field({
      label: "Name",
      name: "name",
      value: recipient?.name,
      hint: "Defaults to the email, phone or Telegram id",
      autocomplete: "off"
    }),
    h(
      "fieldset",
      {},
      h("legend", {}, "Contacts (at least one)"),
      field({
        label: "Phone",
        name: "phone",
        type: "tel",
        value: recipient?.phone,
        hint: "International format, e.g. +4915112345678 (voice calls, SMS)",
        autocomplete: "off"
      }),
      field({label: "Email address", name: "email", type: "email", value: recipient?.email, autocomplete: "off"}),
      field({
        label: "Telegram chat id",
        name: "telegram_id",
        value: recipient?.telegram_id,
        hint: "Digits, e.g. 123456789; group chats start with -",
        inputmode: "numeric",
        autocomplete: "off"
      })
    ),
    orderedChecklist({
      legend: "Channels, in the order they are tried",
      name: "channel_order",
      options: CHANNEL_OPTIONS,
      checked: recipient?.channel_order ?? DEFAULT_ORDER
    }),
    h(
      "fieldset",
      {},
      h("legend", {}, "Escalation"),
      field({
        label: "Seconds to wait for an acknowledgement",
        name: "ack_timeout_seconds",
        pointer: "/escalation/ack_timeout_seconds",
        type: "number",
        inputmode: "numeric",
        value: recipient?.escalation.ack_timeout_seconds ?? 120,
        hint: "15 to 3600, before the next channel is tried"
      }),
      field({
        label: "Extra passes through the chain",
        name: "repeat",
        pointer: "/escalation/repeat",
        type: "number",
        inputmode: "numeric",
        value: recipient?.escalation.repeat ?? 1,
        hint: "0 to 10"
      })
    ),
    h(
      "fieldset",
      {"data-pointer": "/quiet_hours"},
      h("legend", {}, "Quiet hours"),
      h(
        "label",
        {class: "check"},
        h("input", {type: "checkbox", name: "quiet_enabled", checked: Boolean(quiet)}),
        " Hold alerts during quiet hours"
      ),
      h(
        "div",
        {class: "row"},
        field({
          label: "From",
          name: "quiet_start",
          pointer: "/quiet_hours/start",
          type: "time",
          value: quiet?.start ?? "22:00"
        }),
        field({
          label: "Until",
          name: "quiet_end",
          pointer: "/quiet_hours/end",
          type: "time",
          value: quiet?.end ?? "06:00"
        }),
        field({
          label: "Time zone",
          name: "quiet_timezone",
          pointer: "/quiet_hours/timezone",
          value: quiet?.timezone ?? browserZone,
          list: "time-zones",
          hint: "IANA name, e.g. Europe/Berlin",
          autocomplete: "off"
        })
      ),
      checkboxes({
        legend: "Priorities that still page",
        name: "quiet_allow",
        pointer: "/quiet_hours/allow_priorities",
        options: PRIORITY_OPTIONS,
        checked: quiet?.allow_priorities ?? ["critical"]
      }),
      zoneList()
    ),
    h(
      "fieldset",
      {"data-pointer": "/routing_rules"},
      h("legend", {}, "Routing rules"),
      h("p", {class: "hint"}, "Which channels a priority may use. A priority no rule names may use every channel."),
      rules,
      h(
        "button",
        {
          type: "button",
          class: "button small",
          onclick: () => rules.append(ruleRow({priorities: [], channels: []}, ruleCount++))
        },
        "Add a rule"
      )
    ),
    h(
      "div",
      {class: "actions"},
      h("button", {type: "submit", class: "button primary"}, recipient ? "Save changes" : "Create recipient"),
      h("button", {type: "button", class: "button", onclick: () => onDone(null)}, "Cancel")
    )
  );

  function body() {
    const elements = form.elements;
    const name = textOrNull(form, "name");
    return {
      ...(name ? {name} : {}),
      phone: textOrNull(form, "phone"),
      email: textOrNull(form, "email"),
      telegram_id: textOrNull(form, "telegram_id"),
      channel_order: checkedValues(form, "channel_order"),
      escalation: {ack_timeout_seconds: numberOf(form, "ack_timeout_seconds"), repeat: numberOf(form, "repeat")},
      quiet_hours: elements.quiet_enabled.checked
        ? {
            start: elements.quiet_start.value,
            end: elements.quiet_end.value,
            timezone: elements.quiet_timezone.value.trim(),
            allow_priorities: checkedValues(form, "quiet_allow")
          }
        : null,
      // Rules are numbered as they appear, so error pointers match what the person sees.
      routing_rules: [...rules.querySelectorAll("[data-rule]")].map((row) => ({
        priorities: [...row.querySelectorAll('input[name$="-priorities"]:checked')].map((input) => input.value),
        channels: [...row.querySelectorAll('input[name$="-channels"]:checked')].map((input) => input.value)
      }))
    };
  }

  if (!recipient) followContacts(form);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await submitting(form, () =>
      recipient
        ? api("PATCH", `/api/v1/recipients/${recipient.uuid}`, body())
        : api("POST", "/api/v1/recipients", body())
    );
    if (result.ok) onDone(result.value);
  });
  return form;
}
