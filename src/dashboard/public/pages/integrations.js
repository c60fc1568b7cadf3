import {api, apiIfAvailable} from "../lib/api.js";
import {announce, badge, confirmAction, copyable, emptyState, fill, h, pageHeading} from "../lib/dom.js";
import {field, numberOf, select, submitting} from "../lib/forms.js";
import {duration, PRIORITIES, timeElement} from "../lib/format.js";
import {loadTargets, pagedTargetOptions} from "../lib/targets.js";
import {integrationsSection} from "./integration-list.js";

const PRIORITY_OPTIONS = PRIORITIES.map((priority) => [priority, priority]);

function unavailable(what) {
  return h(
    "p",
    {class: "notice"},
    `This gateway has no ${what} API yet, so there is nothing to show. Update Klaxon to use ${what}.`
  );
}

/**
 * A card's buttons: each runs one request, then the page reloads with a note. A note may be a
 * function of the answer giving the note and a secret to show once.
 */
function actionButtons(reload, actions) {
  return h(
    "div",
    {class: "actions"},
    actions.map(([label, method, path, note, question, danger]) =>
      h(
        "button",
        {
          type: "button",
          class: `button small${danger ? " danger" : ""}`,
          onclick: async (event) => {
            if (question && !confirmAction(question)) return;
            try {
              const answer = await api(method, path);
              await (typeof note === "function" ? reload(...note(answer)) : reload(note));
            } catch (error) {
              event.target.closest("article").append(h("p", {class: "card-problem", role: "alert"}, error.message));
            }
          }
        },
        label
      )
    )
  );
}

function heartbeatCard(heartbeat, targets, reload) {
  const path = `/api/v1/heartbeats/${encodeURIComponent(heartbeat.name)}`;
  const paused = heartbeat.status === "paused";
  return h(
    "article",
    {class: `card item heartbeat status-${heartbeat.status}`},
    h("div", {class: "card-head"}, h("h3", {}, heartbeat.name), badge(heartbeat.status)),
    h(
      "dl",
      {class: "facts"},
      h("dt", {}, "Expected"),
      h(
        "dd",
        {},
        heartbeat.schedule
          ? `${heartbeat.schedule} (${heartbeat.timezone})`
          : `every ${duration(heartbeat.period_seconds)}`,
        `, ${duration(heartbeat.grace_seconds)} grace`
      ),
      h("dt", {}, "Last ping"),
      h("dd", {}, timeElement(h, heartbeat.last_ping_at, "ago")),
      heartbeat.expected_at ? [h("dt", {}, "Next due"), h("dd", {}, timeElement(h, heartbeat.expected_at))] : null,
      h("dt", {}, "Pages"),
      h("dd", {}, `${targets.nameOf(heartbeat.target)} at ${heartbeat.priority}`),
      h("dt", {}, "Ping URL"),
      h("dd", {}, copyable(heartbeat.ping_url, "Copy ping URL"))
    ),
    actionButtons(reload, [
      paused
        ? ["Resume", "POST", `${path}/resume`, `Heartbeat ${heartbeat.name} resumed.`]
        : ["Pause", "POST", `${path}/pause`, `Heartbeat ${heartbeat.name} paused.`],
      [
        "New ping URL",
        "POST",
        `${path}/rotate-ping-url`,
        `Heartbeat ${heartbeat.name} has a new ping URL.`,
        `Issue a new ping URL for ${heartbeat.name}? The old one stops working at once: reconfigure the job that pings.`
      ],
      [
        "Delete",
        "DELETE",
        path,
        `Heartbeat ${heartbeat.name} deleted.`,
        `Delete the heartbeat ${heartbeat.name}? Its pings will be refused.`,
        true
      ]
    ])
  );
}

function heartbeatsSection(heartbeats, targets, reload) {
  if (heartbeats === null) return unavailable("heartbeats");
  const board = heartbeats.length
    ? h(
        "div",
        {class: "grid"},
        heartbeats.map((heartbeat) => heartbeatCard(heartbeat, targets, reload))
      )
    : emptyState("No heartbeats yet.");
  const form = h(
    "form",
    {novalidate: true, class: "card"},
    h("h3", {}, "Add a heartbeat"),
    field({label: "Name", name: "name", hint: "A slug, e.g. press-7-plc", autocomplete: "off"}),
    h(
      "div",
      {class: "row"},
      field({
        label: "Expected every (seconds)",
        name: "period_seconds",
        type: "number",
        inputmode: "numeric",
        value: 60,
        hint: "At least 10"
      }),
      field({
        label: "Grace (seconds)",
        name: "grace_seconds",
        type: "number",
        inputmode: "numeric",
        value: 30,
        hint: "At least 5"
      })
    ),
    select({label: "Page when it goes silent", name: "target", options: pagedTargetOptions(targets)}),
    pagedTargetOptions(targets).length
      ? null
      : h(
          "p",
          {class: "notice"},
          "Nobody to page yet: add a recipient under ",
          h("a", {href: "#/recipients"}, "Recipients"),
          " first (or a group or schedule of them)."
        ),
    select({label: "Priority", name: "priority", value: "high", options: PRIORITY_OPTIONS}),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Add heartbeat"))
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const elements = form.elements;
    const body = {
      name: elements.name.value.trim(),
      period_seconds: numberOf(form, "period_seconds"),
      grace_seconds: numberOf(form, "grace_seconds"),
      target: elements.target.value,
      priority: elements.priority.value
    };
    const result = await submitting(form, () => api("POST", "/api/v1/heartbeats", body));
    if (result.ok) await reload(`Heartbeat ${result.value.name} added.`);
  });
  return [board, form];
}

/** Heartbeats (status board, ping URLs) and inbound integrations (CONTRACT section 8). */
export async function integrationsPage(main) {
  async function render(note, secret) {
    const [targets, heartbeats, integrations] = await Promise.all([
      loadTargets(),
      apiIfAvailable("GET", "/api/v1/heartbeats?limit=200"),
      apiIfAvailable("GET", "/api/v1/integrations?limit=200")
    ]);
    fill(
      main,
      pageHeading("Integrations and heartbeats"),
      note ? h("p", {class: "page-message", role: "status"}, note) : null,
      secret ?? null,
      h(
        "section",
        {"aria-labelledby": "heartbeats-title"},
        h("h2", {id: "heartbeats-title"}, "Heartbeats"),
        h("p", {class: "hint"}, "A machine pings its URL regularly; when the pings stop, its owner is paged."),
        heartbeatsSection(heartbeats?.items ?? null, targets, render)
      ),
      h(
        "section",
        {"aria-labelledby": "integrations-title"},
        h("h2", {id: "integrations-title"}, "Integrations"),
        h(
          "p",
          {class: "hint"},
          "Inbound addresses for systems that send their own alert format, and for devices that mail, publish or trap."
        ),
        integrations ? integrationsSection(integrations.items, targets, render) : unavailable("integrations")
      )
    );
    if (note) announce(note);
    if (secret) secret.focus();
  }
  await render();
}
