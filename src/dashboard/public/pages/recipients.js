import {api} from "../lib/api.js";
import {announce, badge, confirmAction, copyable, emptyState, fill, focusHeading, h, pageHeading} from "../lib/dom.js";
import {channelName, duration, when} from "../lib/format.js";
import {loadTargets} from "../lib/targets.js";
import {recipientForm} from "./recipient-form.js";
import {groupForm} from "./group-form.js";
import {recipientTestPanel} from "./recipient-test.js";
import {recipientPreviewPanel} from "./recipient-preview.js";

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
      recipientTestPanel(recipient),
      recipientPreviewPanel(recipient),
      h(
        "div",
        {class: "actions", "data-needs": "admin"},
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
        {class: "actions", "data-needs": "admin"},
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
          {class: "head-actions", "data-needs": "admin"},
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
