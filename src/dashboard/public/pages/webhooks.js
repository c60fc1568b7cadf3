import {api} from "../lib/api.js";
import {announce, badge, confirmAction, dataTable, emptyState, fill, h, pageHeading, secretOnce} from "../lib/dom.js";
import {checkboxes, checkedValues, field, submitting} from "../lib/forms.js";
import {EVENT_TYPES, timeElement} from "../lib/format.js";

const ALL = "*";

/** Outbound webhooks: subscriptions, the signing secret shown once, each one's delivery log with redeliver. */
export async function webhooksPage(main) {
  const secret = h("div");
  const list = h("div", {class: "stack"});

  function showSecret(title, value) {
    fill(
      secret,
      secretOnce(
        title,
        value,
        "Copy it now into the receiver: it verifies the webhook-signature header with it. It is shown only this once."
      )
    );
    secret.firstChild.focus();
  }

  async function load() {
    const {items} = await api("GET", "/api/v1/webhooks?limit=200");
    fill(list, items.length ? items.map(card) : emptyState("No subscriptions yet."));
  }

  async function deliveries(subscription, container) {
    const {items} = await api("GET", `/api/v1/webhooks/${subscription.id}/deliveries?limit=50`);
    if (!items.length) return fill(container, emptyState("No deliveries yet."));
    const redeliver = (delivery) =>
      h(
        "button",
        {
          type: "button",
          class: "button small",
          onclick: async (event) => {
            try {
              await api("POST", `/api/v1/webhooks/${subscription.id}/deliveries/${delivery.id}/redeliver`);
              announce(`Event ${delivery.event_type} queued again`);
              event.target.textContent = "Queued";
              event.target.disabled = true;
            } catch (error) {
              container.prepend(h("p", {class: "card-problem", role: "alert"}, error.message));
            }
          }
        },
        "Redeliver"
      );
    const answer = (delivery) =>
      delivery.finished_at === null
        ? badge("pending", "in flight")
        : delivery.status_code && delivery.status_code < 300
          ? badge("delivered", String(delivery.status_code))
          : badge("failed", delivery.status_code ? String(delivery.status_code) : (delivery.error ?? "failed"));
    fill(
      container,
      dataTable({
        caption: `Deliveries to ${subscription.url}`,
        columns: ["Started", "Event", "Attempt", "Answer", "Took", "Redeliver"],
        rows: items.map((delivery) => [
          timeElement(h, delivery.started_at),
          [delivery.event_type, h("br"), h("code", {class: "small"}, delivery.event_id)],
          String(delivery.attempt),
          answer(delivery),
          delivery.duration_ms === null ? "—" : `${delivery.duration_ms} ms`,
          redeliver(delivery)
        ])
      })
    );
  }

  function card(subscription) {
    const log = h("div");
    const details = h("details", {}, h("summary", {}, "Delivery log"), log);
    details.addEventListener("toggle", () => details.open && void deliveries(subscription, log));
    const act = async (work, note) => {
      await work();
      announce(note);
      await load();
    };
    return h(
      "article",
      {class: "card item"},
      h(
        "div",
        {class: "card-head"},
        h("h3", {class: "url"}, subscription.url),
        subscription.enabled ? badge("enabled") : badge("disabled")
      ),
      h(
        "p",
        {class: "meta"},
        "Events: ",
        subscription.events.includes(ALL) ? "all" : subscription.events.join(", "),
        " · created ",
        timeElement(h, subscription.created_at)
      ),
      subscription.previous_secret_expires_at
        ? h(
            "p",
            {class: "meta"},
            "The previous secret still signs until ",
            timeElement(h, subscription.previous_secret_expires_at)
          )
        : null,
      h(
        "div",
        {class: "actions"},
        h(
          "button",
          {
            type: "button",
            class: "button",
            onclick: () =>
              act(
                () => api("PATCH", `/api/v1/webhooks/${subscription.id}`, {enabled: !subscription.enabled}),
                subscription.enabled ? "Disabled" : "Enabled"
              )
          },
          subscription.enabled ? "Disable" : "Enable"
        ),
        h(
          "button",
          {
            type: "button",
            class: "button",
            onclick: async () => {
              if (!confirmAction("Issue a new signing secret? The old one keeps signing for 24 hours.")) return;
              const rotated = await api("POST", `/api/v1/webhooks/${subscription.id}/rotate-secret`);
              showSecret(`New secret for ${subscription.url}`, rotated.secret);
              await load();
            }
          },
          "Rotate secret"
        ),
        h(
          "button",
          {
            type: "button",
            class: "button danger",
            onclick: () =>
              confirmAction(`Delete the subscription for ${subscription.url}? Queued deliveries are given up.`) &&
              act(() => api("DELETE", `/api/v1/webhooks/${subscription.id}`), "Deleted")
          },
          "Delete"
        )
      ),
      details
    );
  }

  const form = h(
    "form",
    {novalidate: true, class: "card"},
    h("h2", {}, "Subscribe a URL"),
    field({
      label: "URL",
      name: "url",
      type: "url",
      hint: "http(s) address that receives signed POSTs",
      autocomplete: "off"
    }),
    checkboxes({
      legend: "Events",
      name: "events",
      options: [[ALL, "All events"], ...EVENT_TYPES.map((type) => [type, type])],
      checked: [ALL]
    }),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Subscribe"))
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await submitting(form, () =>
      api("POST", "/api/v1/webhooks", {url: form.elements.url.value.trim(), events: checkedValues(form, "events")})
    );
    if (!result.ok) return;
    form.reset();
    showSecret(`Secret for ${result.value.url}`, result.value.secret);
    await load();
  });

  fill(
    main,
    pageHeading("Outbound webhooks"),
    h(
      "p",
      {class: "hint"},
      "Klaxon POSTs each notification event to these URLs, signed per Standard Webhooks; failed deliveries are retried for 72 hours. Devices that send alerts in (webhooks, email, MQTT, SNMP) and heartbeats are under ",
      h("a", {href: "#/integrations"}, "Integrations and heartbeats"),
      "."
    ),
    secret,
    form,
    h("h2", {}, "Subscriptions"),
    list
  );
  await load();
}
