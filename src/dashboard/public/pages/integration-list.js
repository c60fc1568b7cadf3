import {api} from "../lib/api.js";
import {badge, confirmAction, copyable, dataTable, emptyState, h, secretOnce} from "../lib/dom.js";
import {field, select, submitting} from "../lib/forms.js";
import {PRIORITIES, timeElement} from "../lib/format.js";
import {pagedTargetOptions} from "../lib/targets.js";
import {plcEditor} from "./plc-form.js";
import {plcSection} from "./plc-points.js";

const PRIORITY_OPTIONS = PRIORITIES.map((priority) => [priority, priority]);
const SECRET_HINT =
  "Senders that can sign use this secret; others use the events URL, which carries its own token. The secret is shown only this once.";
/** The secret's note with the id a signed sender needs next to it (`klaxon fire --integration`). */
const secretNote = (id) =>
  `${SECRET_HINT} Integration id: ${id} (the device CLI: KLAXON_INTEGRATION_ID=${id} KLAXON_INTEGRATION_SECRET=<this secret> klaxon fire <alert-id> ...).`;
/** Kinds whose messages arrive by a transport of their own, and are counted. */
const DEVICE_KINDS = ["email", "mqtt", "snmp_trap", "modbus", "opcua"];
const LOG_PAGE = 20;

function problem(article, message) {
  article.append(h("p", {class: "card-problem", role: "alert"}, message));
}

/** What a device integration received: its counters and its last error. */
function statsFacts(stats) {
  return [
    h("dt", {}, "Messages"),
    h(
      "dd",
      {class: "integration-stats"},
      `${stats.received} received: ${stats.accepted} accepted, ${stats.unmapped} unmapped, ${stats.refused} refused`
    ),
    h("dt", {}, "Last message"),
    h("dd", {}, stats.last_event_at ? timeElement(h, stats.last_event_at, "ago") : "none yet"),
    stats.last_error
      ? [
          h("dt", {}, "Last error"),
          h("dd", {class: "integration-error"}, stats.last_error, " (", timeElement(h, stats.last_error_at, "ago"), ")")
        ]
      : null
  ];
}

/** An MQTT integration's broker and whether Klaxon is connected and subscribed to it now. */
function brokerFacts(integration) {
  const connection = integration.connection;
  const state = !connection
    ? "connecting..."
    : connection.connected
      ? ["connected since ", timeElement(h, connection.since, "ago")]
      : [
          "down since ",
          timeElement(h, connection.since, "ago"),
          connection.last_error ? `: ${connection.last_error}` : ""
        ];
  return [
    h("dt", {}, "Broker"),
    h(
      "dd",
      {class: connection && !connection.connected ? "integration-error" : null},
      `${integration.broker_url} (${integration.topics.join(", ")}), `,
      state
    )
  ];
}

/** The messages an integration kept (unmapped or refused), loaded when opened. */
function keptLog(integration) {
  const body = h("div", {});
  const details = h("details", {class: "integration-log"}, h("summary", {}, "Kept messages"), body);
  details.addEventListener("toggle", async () => {
    if (!details.open || body.childElementCount) return;
    try {
      const page = await api("GET", `/api/v1/integrations/${integration.id}/log?limit=${LOG_PAGE}`);
      body.append(
        page.items.length
          ? dataTable({
              caption: `Messages ${integration.name} kept`,
              columns: ["Received", "Outcome", "From", "Summary", "Why", "Text"],
              rows: page.items.map((item) => [
                timeElement(h, item.received_at),
                badge(item.outcome),
                item.origin,
                item.summary,
                item.reason ?? "matched no rule",
                h("pre", {class: "kept-body"}, item.body)
              ])
            })
          : emptyState("Nothing kept: every message mapped to an alert.")
      );
    } catch (error) {
      body.append(h("p", {class: "card-problem", role: "alert"}, error.message));
    }
  });
  return details;
}

function cardButton(label, onclick, danger = false) {
  return h("button", {type: "button", class: `button small${danger ? " danger" : ""}`, onclick}, label);
}

/** What a message no rule maps becomes; "keep" with such messages kept is a warning: nobody was paged for them. */
function unmappedFacts(integration) {
  if (integration.unmapped !== "keep") return [h("dt", {}, "Unmapped"), h("dd", {}, "paged at the default priority")];
  const kept = integration.stats.unmapped;
  return [
    h("dt", {}, "Unmapped"),
    kept > 0
      ? h(
          "dd",
          {class: "integration-error"},
          `Warning: ${kept} unmapped kept in the log, nobody paged (unmapped: keep)`
        )
      : h("dd", {}, "kept in the log, nobody paged")
  ];
}

function integrationCard(integration, targets, reload) {
  const path = `/api/v1/integrations/${integration.id}`;
  const device = DEVICE_KINDS.includes(integration.kind);
  const article = h(
    "article",
    // Its id, so a new integration's page can land on it (the points and "Read now" of a PLC).
    {class: "card item integration", id: `integration-${integration.id}`, tabindex: "-1"},
    h("div", {class: "card-head"}, h("h3", {}, integration.name), badge(integration.kind)),
    h(
      "dl",
      {class: "facts"},
      h("dt", {}, "Id"),
      h("dd", {}, copyable(integration.id, "Copy id")),
      h("dt", {}, "Pages"),
      h("dd", {}, `${targets.nameOf(integration.target)}, default ${integration.default_priority}`),
      integration.address ? [h("dt", {}, "Mail to"), h("dd", {}, copyable(integration.address, "Copy address"))] : null,
      integration.broker_url ? brokerFacts(integration) : null,
      integration.rules ? [h("dt", {}, "Rules"), h("dd", {}, String(integration.rules.length))] : null,
      device ? statsFacts(integration.stats) : null,
      device && !integration.points ? unmappedFacts(integration) : null,
      // A modbus or opcua integration takes no events: it has no URL (nor secret) to show.
      integration.url ? [h("dt", {}, "Events URL"), h("dd", {}, copyable(integration.url, "Copy URL"))] : null
    ),
    integration.points ? plcSection(integration) : null,
    device ? keptLog(integration) : null
  );
  const run = async (question, work) => {
    if (question && !confirmAction(question)) return;
    try {
      await work();
    } catch (error) {
      problem(article, error.message);
    }
  };
  article.append(
    h(
      "div",
      {class: "actions"},
      integration.url
        ? cardButton("Rotate credentials", () =>
            run(
              `Issue a new secret and URL${integration.address ? " and mail address" : ""} for ${integration.name}? The old ones stop working at once: reconfigure its senders.`,
              async () => {
                const rotated = await api("POST", `${path}/rotate-credentials`);
                await reload(
                  `Integration ${integration.name} has a new secret and URL${integration.address ? " and address" : ""}.`,
                  secretOnce(`New secret for ${integration.name}`, rotated.secret, secretNote(integration.id))
                );
              }
            )
          )
        : null,
      cardButton(
        "Delete",
        () =>
          run(`Delete the integration ${integration.name}? Its URL and secret stop working.`, async () => {
            await api("DELETE", path);
            await reload(`Integration ${integration.name} deleted.`);
          }),
        true
      )
    )
  );
  return article;
}

/** One rule of an email integration: its controls carry the pointers the gateway's errors name. */
function ruleRow(index) {
  const at = (name) => `/rules/${index}/${name}`;
  const row = h(
    "fieldset",
    {class: "rule", "data-rule": ""},
    h("legend", {}, `Rule ${index + 1}`),
    h(
      "div",
      {class: "row"},
      select({
        label: "Look at",
        name: `rule-field-${index}`,
        pointer: at("field"),
        options: [
          ["subject", "Subject"],
          ["body", "Body"],
          ["sender", "Sender"]
        ]
      }),
      select({
        label: "Match",
        name: `rule-match-${index}`,
        pointer: at("match"),
        options: [
          ["contains", "contains"],
          ["regex", "regular expression"]
        ]
      }),
      field({label: "Text or pattern", name: `rule-pattern-${index}`, pointer: at("pattern"), autocomplete: "off"})
    ),
    h(
      "div",
      {class: "row"},
      select({
        label: "Then",
        name: `rule-action-${index}`,
        pointer: at("action"),
        options: [
          ["fire", "fire an alert"],
          ["resolve", "resolve it"],
          ["heartbeat", "ping a heartbeat"]
        ]
      }),
      field({
        label: "Alert key",
        name: `rule-key-${index}`,
        pointer: at("alert_key"),
        autocomplete: "off",
        hint: "Fire and resolve rules with the same key pair up; {1} is the pattern's first group"
      }),
      select({
        label: "Priority",
        name: `rule-priority-${index}`,
        pointer: at("priority"),
        options: [["", "the default"], ...PRIORITY_OPTIONS]
      })
    )
  );
  return row;
}

function rulesOf(form) {
  const value = (name) => form.elements.namedItem(name).value;
  return [...form.querySelectorAll("fieldset[data-rule]")].map((_, index) => ({
    field: value(`rule-field-${index}`),
    match: value(`rule-match-${index}`),
    pattern: value(`rule-pattern-${index}`),
    action: value(`rule-action-${index}`),
    ...(value(`rule-key-${index}`).trim() ? {alert_key: value(`rule-key-${index}`).trim()} : {}),
    ...(value(`rule-priority-${index}`) ? {priority: value(`rule-priority-${index}`)} : {})
  }));
}

function integrationForm(targets, reload) {
  const rules = h("div", {class: "rules"});
  const addRule = h(
    "button",
    {type: "button", class: "button small", onclick: () => rules.append(ruleRow(rules.childElementCount))},
    "Add rule"
  );
  const ruleEditor = h(
    "fieldset",
    {class: "rule-editor", "data-pointer": "/rules", hidden: true},
    h("legend", {}, "Mapping rules"),
    h(
      "p",
      {class: "hint"},
      "The first rule that matches decides. A mail whose body is a generic event (JSON) needs none; one that matches no rule is kept in the integration's log."
    ),
    rules,
    addRule
  );
  const kind = select({
    label: "Kind",
    name: "kind",
    options: [
      ["generic", "Generic (Klaxon's JSON, the Go library)"],
      ["alertmanager", "Prometheus Alertmanager"],
      ["email", "Email (devices mail an address of this box)"],
      ["modbus", "Modbus (Klaxon reads a PLC or meter over TCP or RS-485)"],
      ["opcua", "OPC UA (Klaxon watches a PLC's or SCADA's server)"]
    ]
  });
  const plc = plcEditor();
  const form = h(
    "form",
    {novalidate: true, class: "card"},
    h("h3", {}, "Add an integration"),
    field({label: "Name", name: "name", hint: "e.g. prometheus, line-3-scada or nas-01", autocomplete: "off"}),
    kind,
    select({label: "Page", name: "target", options: pagedTargetOptions(targets)}),
    select({label: "Default priority", name: "default_priority", value: "high", options: PRIORITY_OPTIONS}),
    ruleEditor,
    plc.element,
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Add integration"))
  );
  form.elements.kind.addEventListener("change", () => {
    plc.show(form.elements.kind.value);
    ruleEditor.hidden = form.elements.kind.value !== "email";
    if (!ruleEditor.hidden && !rules.childElementCount) rules.append(ruleRow(0));
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const elements = form.elements;
    const body = {
      name: elements.name.value.trim(),
      kind: elements.kind.value,
      target: elements.target.value,
      default_priority: elements.default_priority.value,
      ...(elements.kind.value === "email" ? {rules: rulesOf(form)} : {}),
      ...plc.fieldsOf(form)
    };
    const result = await submitting(form, () => api("POST", "/api/v1/integrations", body));
    if (!result.ok) return;
    const added = result.value;
    // A modbus or opcua integration has no secret (nothing sends to it): the page lands on its
    // points and their live state instead, where "Read now" checks the values.
    if (!added.secret) {
      await reload(
        `Integration ${added.name} added: its points and their live state are below; "Read now" reads them at once.`
      );
      const card = document.getElementById(`integration-${added.id}`);
      card?.scrollIntoView({block: "start"});
      card?.focus();
      return;
    }
    await reload(
      `Integration ${added.name} added.${added.address ? ` Devices mail ${added.address}.` : ""}`,
      secretOnce(`Secret for ${added.name}`, added.secret, secretNote(added.id))
    );
  });
  return form;
}

/** Inbound integrations: a card each (device kinds with their counters and kept messages), and the form to add one. */
export function integrationsSection(integrations, targets, reload) {
  const list = integrations.length
    ? h(
        "div",
        {class: "grid"},
        integrations.map((integration) => integrationCard(integration, targets, reload))
      )
    : emptyState("No integrations yet.");
  return [list, integrationForm(targets, reload)];
}
