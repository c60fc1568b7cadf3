import {listAll} from "../lib/api.js";
import {badge, fill, h, pageHeading} from "../lib/dom.js";
import {bytes, channelName, timeElement} from "../lib/format.js";
import {readiness, undeliverableText} from "../lib/undeliverable.js";

const REFRESH_MS = 10_000;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** 0-4 bars from the modem's +CSQ rssi (0-31), the way a phone shows them. */
function signalBars(rssi) {
  const bars =
    rssi === null || rssi === undefined ? 0 : rssi >= 20 ? 4 : rssi >= 15 ? 3 : rssi >= 10 ? 2 : rssi >= 2 ? 1 : 0;
  return h(
    "span",
    {class: "signal", role: "img", "aria-label": `Signal: ${bars} of 4 bars`},
    [1, 2, 3, 4].map((bar) => h("span", {class: bar <= bars ? "bar on" : "bar"}))
  );
}

function value(key, raw) {
  if (raw === null || raw === undefined || raw === "") return "—";
  if (typeof raw === "string" && ISO_TIME.test(raw)) return timeElement(h, raw);
  if (typeof raw === "boolean") return raw ? "yes" : "no";
  if (key === "signal" && typeof raw === "object")
    return [signalBars(raw.rssi), raw.dbm === null ? " unknown" : ` ${raw.dbm} dBm`];
  // A list of records (the SMS the modem cannot read): one nested block each; "none" when empty.
  if (Array.isArray(raw) && raw.some((item) => typeof item === "object"))
    return h(
      "ul",
      {class: "nested"},
      raw.map((item) => h("li", {}, value(key, item)))
    );
  if (Array.isArray(raw)) return raw.length ? raw.join(", ") : "none";
  // A nested record (the last call): one line per field, so the outer column stays wide.
  if (typeof raw === "object")
    return h(
      "ul",
      {class: "nested"},
      Object.entries(raw)
        .filter(([, item]) => item !== null)
        .map(([inner, item]) =>
          h("li", {}, h("span", {class: "meta"}, `${inner.replaceAll("_", " ")}: `), value(inner, item))
        )
    );
  return String(raw);
}

function channelCard(state) {
  return h(
    "article",
    {class: "card item"},
    h(
      "div",
      {class: "card-head"},
      h("h3", {}, channelName(state.channel)),
      state.available ? badge("available") : badge("unavailable")
    ),
    state.reason ? h("p", {class: "meta"}, state.reason) : null,
    state.details
      ? h(
          "dl",
          {class: "facts"},
          Object.entries(state.details).map(([key, item]) => [
            h("dt", {}, key.replaceAll("_", " ")),
            h("dd", {}, value(key, item))
          ])
        )
      : h("p", {class: "meta"}, "No live details from this channel.")
  );
}

function diskCard(disk) {
  const used = disk.total_bytes ? 1 - disk.free_bytes / disk.total_bytes : null;
  return h(
    "article",
    {class: "card item"},
    h(
      "div",
      {class: "card-head"},
      h("h3", {}, "Disk space"),
      used !== null && used > 0.9 ? badge("warning", "low space") : null
    ),
    disk.error
      ? h("p", {class: "card-problem"}, disk.error)
      : [
          h("p", {}, `${bytes(disk.free_bytes)} free of ${bytes(disk.total_bytes)}`),
          h("meter", {
            min: "0",
            max: "1",
            low: "0.75",
            high: "0.9",
            optimum: "0",
            value: String(used),
            "aria-label": "Disk used"
          }),
          h("p", {class: "meta"}, "Data directory ", h("code", {}, disk.path))
        ]
  );
}

function undeliverableCard(undeliverable) {
  const stuck = undeliverable.count > 0;
  return h(
    "article",
    {class: "card item"},
    h(
      "div",
      {class: "card-head"},
      h("h3", {}, "Alerts reaching people"),
      stuck ? badge("unavailable", "undeliverable") : badge("ready", "ok")
    ),
    stuck
      ? [
          h("p", {class: "card-problem"}, undeliverableText(undeliverable)),
          h(
            "ul",
            {class: "nested"},
            undeliverable.reasons.map((entry) =>
              h(
                "li",
                {},
                `${entry.channel === null ? "No channel" : channelName(entry.channel)}: ${entry.reason} (${entry.notifications} waiting)`
              )
            )
          )
        ]
      : h("p", {}, "Every open alert can reach someone.")
  );
}

/** What the configuration will not do on this box: a priority with no channel, contacts for a channel not configured. */
function planWarningsCard(warnings) {
  return h(
    "article",
    {class: "card item"},
    h("div", {class: "card-head"}, h("h3", {}, "Plans"), badge("unavailable", "warning")),
    h(
      "ul",
      {class: "nested"},
      warnings.map((warning) => h("li", {class: "card-problem"}, warning.detail))
    )
  );
}

/** Contacts a channel refused for good (SMTP 550, Telegram 403), from each recipient's view. */
function contactFailuresSection(recipients) {
  const failures = recipients.flatMap((recipient) =>
    recipient.contact_failures.map((failure) => ({...failure, name: recipient.name}))
  );
  if (!failures.length) return null;
  return [
    h("h2", {}, "Unusable contacts"),
    h("p", {class: "hint"}, "Skipped for all but critical alerts until the contact is corrected on the recipient."),
    h(
      "div",
      {class: "grid"},
      failures.map((failure) =>
        h(
          "article",
          {class: "card item"},
          h("div", {class: "card-head"}, h("h3", {}, failure.name), badge("unavailable", channelName(failure.channel))),
          h("p", {}, h("code", {}, failure.contact)),
          h("p", {class: "card-problem"}, failure.reason),
          h("p", {class: "meta"}, "Since ", timeElement(h, failure.at))
        )
      )
    )
  ];
}

/** Gateway status from /readyz: journal, undeliverable alerts, each channel with its live details, outbox backlog, disk space; unusable contacts. Refreshes itself. */
export async function statusPage(main) {
  const body = h("div");
  const refreshed = h("span", {class: "meta"});

  async function load() {
    const [ready, recipients] = await Promise.all([readiness(), listAll("/api/v1/recipients")]);
    fill(refreshed, "Updated ", timeElement(h, new Date().toISOString()));
    fill(
      body,
      h(
        "div",
        {class: "grid"},
        h(
          "article",
          {class: "card item"},
          h(
            "div",
            {class: "card-head"},
            h("h3", {}, "Journal"),
            ready.journal.can_commit ? badge("ready") : badge("unready")
          ),
          h(
            "p",
            {},
            ready.journal.can_commit ? "Alerts are being stored." : `Cannot store alerts: ${ready.journal.error}`
          ),
          h("p", {class: "meta"}, `Schema version ${ready.journal.schema_version}`)
        ),
        h(
          "article",
          {class: "card item"},
          h("div", {class: "card-head"}, h("h3", {}, "Outbox")),
          h("p", {}, `${ready.outbox.pending} webhook deliver${ready.outbox.pending === 1 ? "y" : "ies"} waiting`),
          ready.outbox.oldest ? h("p", {class: "meta"}, "Oldest since ", timeElement(h, ready.outbox.oldest)) : null
        ),
        ready.undeliverable ? undeliverableCard(ready.undeliverable) : null,
        ready.plan_warnings?.length ? planWarningsCard(ready.plan_warnings) : null,
        ready.disk ? diskCard(ready.disk) : null
      ),
      contactFailuresSection(recipients),
      h("h2", {}, "Channels"),
      h("div", {class: "grid"}, ready.channels.map(channelCard))
    );
  }

  fill(main, pageHeading("Gateway status", refreshed), body);
  await load();
  const timer = setInterval(() => {
    if (document.visibilityState === "visible")
      void load().catch(() => fill(refreshed, "The gateway did not answer; retrying…"));
  }, REFRESH_MS);
  return () => clearInterval(timer);
}
