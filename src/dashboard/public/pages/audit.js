import {api, apiIfAllowed} from "../lib/api.js";
import {loadTargets} from "../lib/targets.js";
import {dataTable, emptyState, fill, h, pageHeading} from "../lib/dom.js";
import {field, submitting} from "../lib/forms.js";
import {timeElement} from "../lib/format.js";

const PAGE_SIZE = 50;
const FILTERS = ["action", "subject_id", "actor_id"];

// A detail longer than this is shown on one line, cut, with a disclosure holding all of it.
const SHORT_DETAIL = 40;

/**
 * Ids, sources and details can be long (an integration's id, a Kubernetes alert id, a Grafana
 * link): one line cut with an ellipsis, so a row keeps its height; the whole text stays in the
 * tooltip, in the copied text and for screen readers.
 */
function clipped(text, tag = "span") {
  return h(tag, {class: "clip", title: text}, text);
}

/** "api key “plc-gateway” g9mo2gva", "integration “tank sensors” int_01…": kind and name, the id (clipped) under them. */
function labelledId(kind, id, name) {
  return h(
    "span",
    {class: "labelled-id"},
    kind,
    name ? [" ", h("strong", {class: "audit-name", title: name}, name)] : null,
    id ? [" ", clipped(id, "code")] : null
  );
}

/** Names for the ids the log records: keys, integrations, recipients, groups and schedules (deleted ones keep their id). */
async function loadNames() {
  const [keys, integrations, targets] = await Promise.all([
    apiIfAllowed("GET", "/api/v1/keys"),
    apiIfAllowed("GET", "/api/v1/integrations?limit=200"),
    loadTargets()
  ]);
  const names = new Map([...(keys?.items ?? []), ...(integrations?.items ?? [])].map((item) => [item.id, item.name]));
  for (const target of [...targets.recipients, ...targets.groups, ...targets.schedules])
    names.set(target.uuid, target.name);
  return (id) => (id ? names.get(id) : undefined);
}

function detailCell(detail) {
  if (!Object.keys(detail).length) return "—";
  const compact = JSON.stringify(detail);
  if (compact.length <= SHORT_DETAIL) return h("code", {class: "detail"}, compact);
  return h(
    "details",
    {class: "audit-detail"},
    h("summary", {}, h("code", {class: "detail"}, compact)),
    h("pre", {class: "detail"}, JSON.stringify(detail, null, 2))
  );
}

/** The audit log, newest first, filtered by action, subject or actor. */
export async function auditPage(main, {params}) {
  const nameOf = await loadNames();
  let items = [];
  let nextCursor = null;
  const table = h("div", {class: "audit-log"});
  const more = h("button", {type: "button", class: "button", hidden: true}, "Show older");
  const form = h(
    "form",
    {novalidate: true, class: "filters", "aria-label": "Filter the audit log"},
    field({
      label: "Action",
      name: "action",
      value: params.get("action"),
      hint: "e.g. notification.acknowledged",
      list: "audit-actions",
      autocomplete: "off"
    }),
    field({
      label: "Subject id",
      name: "subject_id",
      value: params.get("subject_id"),
      hint: "A notification, recipient, key… id",
      autocomplete: "off"
    }),
    field({
      label: "Actor id",
      name: "actor_id",
      value: params.get("actor_id"),
      hint: "A key id, or admin for the dashboard",
      autocomplete: "off"
    }),
    h(
      "datalist",
      {id: "audit-actions"},
      [
        "notification.accepted",
        "notification.deduplicated",
        "notification.acknowledged",
        "notification.resolved",
        "notification.retitled",
        "notification.exhausted",
        "recipient.created",
        "recipient.updated",
        "recipient.deleted",
        "group.created",
        "group.updated",
        "group.deleted",
        "api_key.created",
        "api_key.revoked",
        "webhook.created",
        "webhook.updated",
        "webhook.deleted",
        "user.created",
        "user.updated",
        "user.password_set",
        "user.deleted",
        "dashboard.signed_in",
        "dashboard.signed_out"
      ].map((action) => h("option", {value: action}))
    ),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Filter"))
  );

  function query(cursor) {
    const search = new URLSearchParams({limit: String(PAGE_SIZE)});
    for (const name of FILTERS) {
      const value = form.elements[name].value.trim();
      if (value) search.set(name, value);
    }
    if (cursor) search.set("cursor", cursor);
    return search;
  }

  function render() {
    const rows = items.map((entry) => [
      timeElement(h, entry.at),
      labelledId(entry.actor.type.replace("_", " "), entry.actor.id, entry.actor.name ?? nameOf(entry.actor.id)),
      // notification.<wbr>deduplicated: a narrow column breaks after the dot, not inside a word.
      h(
        "span",
        {class: "audit-action"},
        entry.action
          .split(".")
          .map((part, index, parts) => (index < parts.length - 1 ? [`${part}.`, h("wbr", {})] : part))
      ),
      labelledId(entry.subject.type, entry.subject.id, nameOf(entry.subject.id)),
      entry.source ? clipped(entry.source) : "—",
      detailCell(entry.detail)
    ]);
    fill(
      table,
      items.length
        ? dataTable({
            caption: "Audit log entries",
            columns: ["When", "Who", "Action", "Subject", "Source", "Detail"],
            rows
          })
        : emptyState("No entries match these filters.")
    );
    more.hidden = !nextCursor;
  }

  async function load(cursor) {
    const page = await api("GET", `/api/v1/audit?${query(cursor)}`);
    items = cursor ? [...items, ...page.items] : page.items;
    nextCursor = page.next_cursor;
    render();
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const search = query();
    search.delete("limit");
    history.replaceState(null, "", `#/audit${search.size ? `?${search}` : ""}`);
    await submitting(form, () => load(null));
  });
  more.addEventListener("click", () => void load(nextCursor));

  fill(main, pageHeading("Audit log"), form, table, more);
  await load(null);
}
