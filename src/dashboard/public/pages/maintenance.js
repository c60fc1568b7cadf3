import {api, apiIfAllowed} from "../lib/api.js";
import {announce, badge, emptyState, fill, h, pageHeading} from "../lib/dom.js";
import {confirmedAction} from "../lib/actions.js";
import {timeElement} from "../lib/format.js";
import {checkboxes, field, select, submitting, textOrNull} from "../lib/forms.js";
import {loadTargets, pagedTargetOptions} from "../lib/targets.js";

const HOUR_MS = 3_600_000;
const LENGTHS = [
  ["0.5", "30 minutes"],
  ["1", "1 hour"],
  ["2", "2 hours"],
  ["4", "4 hours"],
  ["8", "8 hours"],
  ["12", "12 hours"],
  ["24", "24 hours"]
];
/** How many ended windows the page recalls: enough to see what was silenced today. */
const ENDED_SHOWN = 5;

/** Everything a window can hold, named: targets (recipients, groups, schedules), integrations, heartbeats. */
async function loadHoldable() {
  const [targets, integrations, heartbeats] = await Promise.all([
    loadTargets(),
    apiIfAllowed("GET", "/api/v1/integrations?limit=200"),
    apiIfAllowed("GET", "/api/v1/heartbeats?limit=200")
  ]);
  const integrationItems = integrations?.items ?? [];
  const integrationNames = new Map(integrationItems.map((integration) => [integration.id, integration.name]));
  return {
    targetOptions: pagedTargetOptions(targets),
    integrationOptions: integrationItems.map((integration) => [integration.id, integration.name]),
    heartbeatOptions: (heartbeats?.items ?? []).map((heartbeat) => [heartbeat.name, heartbeat.name]),
    targetName: targets.nameOf,
    integrationName: (id) => integrationNames.get(id) ?? id
  };
}

/** "Press line (group), Anna; sources plc-7; integration Grafana": what the window holds, in words. */
function holdsText(window, names) {
  return [
    window.targets.length ? window.targets.map(names.targetName).join(", ") : null,
    window.sources.length ? `sources ${window.sources.join(", ")}` : null,
    window.integrations.length ? `integrations ${window.integrations.map(names.integrationName).join(", ")}` : null,
    window.heartbeats.length ? `heartbeats ${window.heartbeats.join(", ")}` : null
  ]
    .filter(Boolean)
    .join("; ");
}

/** One window: what it holds, its span, and End now (active) or Delete (upcoming). */
function windowCard(window, names, reload) {
  const base = `/api/v1/maintenance/${window.uuid}`;
  const action =
    window.status === "active"
      ? confirmedAction({
          text: "End now",
          className: "button danger",
          question: `End "${window.reason}" now? What it held and is still firing pages at once.`,
          method: "POST",
          path: `${base}/end`,
          done: "Maintenance ended",
          after: reload,
          needs: "operate"
        })
      : window.status === "upcoming"
        ? confirmedAction({
            text: "Delete",
            question: `Delete the planned window "${window.reason}"?`,
            method: "DELETE",
            path: base,
            done: "Maintenance window deleted",
            after: reload,
            needs: "operate"
          })
        : null;
  return h(
    "article",
    {class: `card item maintenance maintenance-${window.status}`, "data-uuid": window.uuid},
    h("div", {class: "card-head"}, h("h3", {}, window.reason), badge(window.status)),
    h(
      "p",
      {class: "meta"},
      timeElement(h, window.starts_at),
      " – ",
      timeElement(h, window.ends_at),
      window.status === "ended" ? " (ended)" : null
    ),
    h("p", {}, "Holds: ", h("strong", {}, holdsText(window, names))),
    action ? h("div", {class: "actions"}, action) : null
  );
}

/** The form that starts a window now or plans one; times are the browser's wall clock. */
function startForm(names, onStarted) {
  const form = h(
    "form",
    {novalidate: true, class: "maintenance-form"},
    field({label: "Reason", name: "reason", hint: "Why, for whoever reads the audit later", autocomplete: "off"}),
    h(
      "div",
      {class: "field-row"},
      field({label: "From", name: "starts_at", type: "datetime-local", hint: "Empty: now"}),
      select({label: "For", name: "duration", options: LENGTHS, value: "2", pointer: "/ends_at"}),
      field({label: "Or until", name: "ends_at", type: "datetime-local", hint: "Instead of a length"})
    ),
    checkboxes({
      legend: "Hold alerts to",
      name: "targets",
      options: names.targetOptions,
      hint: "A schedule holds whoever is on call in it"
    }),
    field({
      label: "Hold alerts from sources",
      name: "sources",
      hint: "Comma-separated, compared exactly, e.g. plc-7, press-7"
    }),
    names.integrationOptions.length
      ? checkboxes({legend: "Hold every alert through", name: "integrations", options: names.integrationOptions})
      : null,
    names.heartbeatOptions.length
      ? checkboxes({
          legend: "Hold these heartbeats",
          name: "heartbeats",
          options: names.heartbeatOptions,
          hint: "One that goes down pages only if still down when the window ends"
        })
      : null,
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Start maintenance"))
  );
  const checked = (name) => [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((input) => input.value);
  const instant = (name) => {
    const value = form.elements.namedItem(name).value;
    return value ? new Date(value).toISOString() : null;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const startsAt = instant("starts_at");
    const endsAt =
      instant("ends_at") ??
      new Date(
        (startsAt ? Date.parse(startsAt) : Date.now()) + Number(form.elements.duration.value) * HOUR_MS
      ).toISOString();
    const sources = (textOrNull(form, "sources") ?? "")
      .split(",")
      .map((source) => source.trim())
      .filter(Boolean);
    const body = {
      reason: textOrNull(form, "reason") ?? "",
      ...(startsAt ? {starts_at: startsAt} : {}),
      ends_at: endsAt,
      targets: checked("targets"),
      sources,
      integrations: checked("integrations"),
      heartbeats: checked("heartbeats")
    };
    const result = await submitting(form, () => api("POST", "/api/v1/maintenance", body));
    if (!result.ok) return;
    form.reset();
    await onStarted(result.value);
  });
  return form;
}

/** Maintenance windows: the active and upcoming ones with End now, the last few ended, and a form to start one. */
export async function maintenancePage(main) {
  const names = await loadHoldable();
  const lists = h("div", {class: "stack"});

  async function load() {
    const [active, upcoming, ended] = await Promise.all(
      ["active", "upcoming", "ended"].map((status) => api("GET", `/api/v1/maintenance?status=${status}&limit=50`))
    );
    const section = (title, windows, empty) =>
      h(
        "section",
        {class: "stack", "aria-label": title},
        h("h2", {}, title),
        windows.length ? windows.map((window) => windowCard(window, names, load)) : emptyState(empty)
      );
    fill(
      lists,
      section("Active", active.items, "No maintenance under way: every alert pages as usual."),
      section("Upcoming", upcoming.items, "Nothing planned."),
      section("Recently ended", ended.items.slice(0, ENDED_SHOWN), "None yet.")
    );
  }

  // Like the other forms, a started window says so where the form was: the form closes, this line stays.
  const message = h("div", {class: "page-message", role: "status"});
  const starter = h(
    "details",
    {class: "card new-maintenance", "data-needs": "operate"},
    h("summary", {}, "Start maintenance"),
    startForm(names, async (window) => {
      const started = window.status === "active" ? "started" : "planned";
      starter.open = false;
      fill(message, `Maintenance “${window.reason}” ${started}, until ${new Date(window.ends_at).toLocaleString()}.`);
      announce(`Maintenance ${started}`);
      await load();
    })
  );
  fill(
    main,
    pageHeading("Maintenance"),
    h(
      "p",
      {class: "hint"},
      "While a window is active, the alerts it holds are recorded as suppressed and page nobody. When it ends, integration alerts still firing and heartbeats still down page as usual."
    ),
    message,
    starter,
    lists
  );
  await load();
}
