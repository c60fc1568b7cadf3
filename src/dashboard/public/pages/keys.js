import {api} from "../lib/api.js";
import {announce, badge, confirmAction, dataTable, emptyState, fill, h, pageHeading, secretOnce} from "../lib/dom.js";
import {checkboxes, checkedValues, field, submitting} from "../lib/forms.js";
import {SCOPES, timeElement} from "../lib/format.js";

const SCOPE_HINTS = {
  "notifications:send": "send alerts",
  "notifications:read": "read alerts",
  "notifications:ack": "acknowledge and resolve",
  "recipients:read": "list recipients and groups",
  "recipients:write": "change recipients and groups",
  admin: "everything, including keys and webhooks"
};

/** API keys: one per integration, with only the scopes it needs; the key is shown once. */
export async function keysPage(main) {
  const created = h("div");
  const table = h("div");

  async function load() {
    const {items} = await api("GET", "/api/v1/keys");
    fill(
      table,
      items.length
        ? dataTable({
            caption: "API keys",
            columns: ["Name", "Owner", "Id", "Scopes", "Created", "Last used", "State", "Revoke"],
            rows: items.map(cells)
          })
        : emptyState("No keys.")
    );
  }

  function cells(key) {
    const revoke = key.revoked_at
      ? "—"
      : h(
          "button",
          {
            type: "button",
            class: "button small danger",
            onclick: async () => {
              if (!confirmAction(`Revoke the key “${key.name}”? Whatever uses it stops working at once.`)) return;
              await api("DELETE", `/api/v1/keys/${key.id}`);
              announce(`Revoked ${key.name}`);
              await load();
            }
          },
          "Revoke",
          h("span", {class: "visually-hidden"}, ` ${key.name}`)
        );
    return [
      key.name,
      key.owner ?? "—",
      h("code", {}, `klx_${key.id}_…`),
      key.scopes.join(", "),
      timeElement(h, key.created_at),
      timeElement(h, key.last_used_at, "ago"),
      key.revoked_at ? badge("revoked") : badge("active"),
      revoke
    ];
  }

  const form = h(
    "form",
    {novalidate: true, class: "card"},
    h("h2", {}, "Create a key"),
    field({label: "Name", name: "name", hint: "What uses it, e.g. plc-gateway or grafana", autocomplete: "off"}),
    field({
      label: "Owner",
      name: "owner",
      hint: "Optional: who looks after it, e.g. Maria or the PLC team",
      autocomplete: "off"
    }),
    checkboxes({
      legend: "Scopes",
      name: "scopes",
      options: SCOPES.map((scope) => [scope, `${scope} (${SCOPE_HINTS[scope]})`]),
      checked: ["notifications:send"]
    }),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Create key"))
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await submitting(form, () =>
      api("POST", "/api/v1/keys", {
        name: form.elements.name.value.trim(),
        scopes: checkedValues(form, "scopes"),
        owner: form.elements.owner.value.trim() || null
      })
    );
    if (!result.ok) return;
    form.reset();
    fill(
      created,
      secretOnce(
        `Key “${result.value.name}”`,
        result.value.key,
        "Copy it now into the integration's settings: it is shown only this once. Send it in the X-API-Key header."
      )
    );
    created.firstChild.focus();
    announce("Key created. Copy it now: it is shown only once.");
    await load();
  });

  fill(
    main,
    pageHeading("API keys"),
    h(
      "p",
      {class: "hint"},
      "Give each integration its own key with only the scopes it needs: revoking it then affects only that integration."
    ),
    created,
    form,
    h("h2", {}, "Keys"),
    table
  );
  await load();
}
