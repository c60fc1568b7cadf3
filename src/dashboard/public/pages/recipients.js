import {api} from "../lib/api.js";
import {announce, badge, confirmAction, copyable, emptyState, fill, focusHeading, h, pageHeading} from "../lib/dom.js";
import {
  checkboxes,
  checkedValues,
  field,
  numberOf,
  orderedChecklist,
  select,
  submitting,
  textOrNull
} from "../lib/forms.js";
import {CHANNEL_NAMES, CHANNELS, channelName, duration, PRIORITIES, when} from "../lib/format.js";
import {loadTargets} from "../lib/targets.js";

const CHANNEL_OPTIONS = CHANNELS.map((channel) => [channel, CHANNEL_NAMES[channel]]);
const PRIORITY_OPTIONS = PRIORITIES.map((priority) => [priority, priority]);
const DEFAULT_ORDER = ["telegram_voice", "voice_call", "email"];
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

function zoneList() {
  return h(
    "datalist",
    {id: "time-zones"},
    Intl.supportedValuesOf("timeZone").map((zone) => h("option", {value: zone}))
  );
}

function summary(recipient) {
  const {ack_timeout_seconds: timeout, repeat} = recipient.escalation;
  const quiet = recipient.quiet_hours;
  return h(
    "dl",
    {class: "facts"},
    h("dt", {}, "Contacts"),
    h(
      "dd",
      {},
      [recipient.phone, recipient.email, recipient.telegram_id && `Telegram ${recipient.telegram_id}`]
        .filter(Boolean)
        .join(" · ") || "none"
    ),
    h("dt", {}, "Channels, in order"),
    h(
      "dd",
      {class: "chips"},
      recipient.channels
        .filter((state) => recipient.channel_order.includes(state.channel))
        .sort((a, b) => recipient.channel_order.indexOf(a.channel) - recipient.channel_order.indexOf(b.channel))
        .map((state) =>
          h(
            "span",
            {class: `chip ${state.available ? "chip-ok" : "chip-off"}`, title: state.reason ?? "available"},
            channelName(state.channel),
            state.available ? "" : ` (${state.reason})`
          )
        )
    ),
    h("dt", {}, "Escalation"),
    h("dd", {}, `${duration(timeout)} per step; the chain runs ${repeat + 1} time${repeat ? "s" : ""}`),
    h("dt", {}, "Quiet hours"),
    h(
      "dd",
      {},
      quiet
        ? `${quiet.start}–${quiet.end} ${quiet.timezone}; still pages: ${quiet.allow_priorities.join(", ") || "nothing"}`
        : "none"
    ),
    recipient.contact_failures.length
      ? [
          h("dt", {}, "Unusable contacts"),
          h(
            "dd",
            {},
            h(
              "ul",
              {class: "nested"},
              recipient.contact_failures.map((failure) =>
                h(
                  "li",
                  {class: "card-problem"},
                  `${channelName(failure.channel)} ${failure.contact}: ${failure.reason} (since ${when(failure.at)})`
                )
              )
            )
          )
        ]
      : null,
    recipient.routing_rules.length
      ? [
          h("dt", {}, "Routing rules"),
          h(
            "dd",
            {},
            h(
              "ul",
              {},
              recipient.routing_rules.map((rule) =>
                h(
                  "li",
                  {},
                  `${rule.priorities.join(", ")} → ${rule.channels.map(channelName).join(", ") || "no channel"}`
                )
              )
            )
          )
        ]
      : null
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

function recipientForm(recipient, onDone) {
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

function groupForm(group, recipients, onDone) {
  const form = h(
    "form",
    {novalidate: true, class: "card editor"},
    field({label: "Name", name: "name", value: group?.name, autocomplete: "off"}),
    select({
      label: "Strategy",
      name: "strategy",
      value: group?.strategy ?? "sequential",
      options: [
        ["sequential", "Sequential: one member at a time"],
        ["parallel", "Parallel: every member each step"]
      ]
    }),
    recipients.length
      ? orderedChecklist({
          legend: "Members, in paging order",
          name: "members",
          options: recipients.map((recipient) => [recipient.uuid, recipient.name]),
          checked: group?.members ?? []
        })
      : h("p", {class: "notice"}, "Create recipients first; a group pages recipients."),
    h(
      "div",
      {class: "actions"},
      h("button", {type: "submit", class: "button primary"}, group ? "Save changes" : "Create group"),
      h("button", {type: "button", class: "button", onclick: () => onDone(null)}, "Cancel")
    )
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      name: form.elements.name.value.trim(),
      strategy: form.elements.strategy.value,
      members: checkedValues(form, "members")
    };
    const result = await submitting(form, () =>
      group ? api("PATCH", `/api/v1/groups/${group.uuid}`, body) : api("POST", "/api/v1/groups", body)
    );
    if (result.ok) onDone(result.value);
  });
  return form;
}

/** Recipients and groups: list with copyable UUIDs, create, edit, delete. */
export async function recipientsPage(main) {
  let {recipients, groups, nameOf} = await loadTargets();
  const message = h("div", {class: "page-message", role: "status"});

  async function reload(note) {
    ({recipients, groups, nameOf} = await loadTargets());
    showList(note);
  }

  function edit(title, form) {
    fill(main, pageHeading(title), form);
    focusHeading();
  }

  const done = (what) => (saved) => {
    if (saved) void reload(`${what} “${saved.name}” saved.`);
    else showList();
  };

  async function remove(kind, item) {
    if (!confirmAction(`Delete ${kind} “${item.name}”? This cannot be undone.`)) return;
    try {
      await api("DELETE", `/api/v1/${kind === "group" ? "groups" : "recipients"}/${item.uuid}`);
      await reload(`Deleted ${kind} “${item.name}”.`);
    } catch (error) {
      fill(message, h("p", {class: "card-problem", role: "alert"}, error.message));
    }
  }

  function recipientCard(recipient) {
    return h(
      "article",
      {class: "card item"},
      h("div", {class: "card-head"}, h("h3", {}, recipient.name)),
      h("p", {class: "meta"}, "UUID ", copyable(recipient.uuid, "Copy UUID")),
      summary(recipient),
      h(
        "div",
        {class: "actions"},
        h(
          "button",
          {
            type: "button",
            class: "button",
            onclick: () => edit(`Edit ${recipient.name}`, recipientForm(recipient, done("Recipient")))
          },
          "Edit",
          h("span", {class: "visually-hidden"}, ` ${recipient.name}`)
        ),
        h(
          "button",
          {type: "button", class: "button danger", onclick: () => remove("recipient", recipient)},
          "Delete",
          h("span", {class: "visually-hidden"}, ` ${recipient.name}`)
        )
      )
    );
  }

  function groupCard(group) {
    return h(
      "article",
      {class: "card item"},
      h("div", {class: "card-head"}, h("h3", {}, group.name), badge(group.strategy)),
      h("p", {class: "meta"}, "UUID ", copyable(group.uuid, "Copy UUID")),
      h(
        "ol",
        {class: "members"},
        group.members.map((member) => h("li", {}, nameOf(member)))
      ),
      h(
        "div",
        {class: "actions"},
        h(
          "button",
          {
            type: "button",
            class: "button",
            onclick: () => edit(`Edit group ${group.name}`, groupForm(group, recipients, done("Group")))
          },
          "Edit",
          h("span", {class: "visually-hidden"}, ` ${group.name}`)
        ),
        h(
          "button",
          {type: "button", class: "button danger", onclick: () => remove("group", group)},
          "Delete",
          h("span", {class: "visually-hidden"}, ` ${group.name}`)
        )
      )
    );
  }

  function showList(note) {
    fill(message, note ?? "");
    fill(
      main,
      pageHeading(
        "Recipients and groups",
        h(
          "div",
          {class: "head-actions"},
          h(
            "button",
            {
              type: "button",
              class: "button primary",
              onclick: () => edit("New recipient", recipientForm(null, done("Recipient")))
            },
            "New recipient"
          ),
          h(
            "button",
            {
              type: "button",
              class: "button",
              onclick: () => edit("New group", groupForm(null, recipients, done("Group")))
            },
            "New group"
          )
        )
      ),
      message,
      h(
        "p",
        {class: "hint"},
        "Alerts are sent to a recipient's or a group's UUID: copy it into the system that sends them."
      ),
      h(
        "section",
        {"aria-labelledby": "recipients-title"},
        h("h2", {id: "recipients-title"}, `Recipients (${recipients.length})`),
        recipients.length ? h("div", {class: "grid"}, recipients.map(recipientCard)) : emptyState("No recipients yet.")
      ),
      h(
        "section",
        {"aria-labelledby": "groups-title"},
        h("h2", {id: "groups-title"}, `Groups (${groups.length})`),
        groups.length ? h("div", {class: "grid"}, groups.map(groupCard)) : emptyState("No groups yet.")
      )
    );
    if (note) {
      announce(note);
      focusHeading();
    }
  }

  showList();
}
