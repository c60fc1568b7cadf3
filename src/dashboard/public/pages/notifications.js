import {api, ApiError, signedOut} from "../lib/api.js";
import {announce, badge, emptyState, fill, h, pageHeading} from "../lib/dom.js";
import {select} from "../lib/forms.js";
import {channelName, PRIORITIES, STATUSES, timeElement} from "../lib/format.js";
import {loadTargets, pagedTargetOptions} from "../lib/targets.js";

const PAGE_SIZE = 50;
const MAX_PAGE = 200;
// Changes often come in bursts (a step and its attempts): one reload per burst.
const RELOAD_DELAY_MS = 300;
const ACKNOWLEDGEABLE = new Set(["queued", "notifying", "exhausted"]);

// The contact field behind each channel (domain/recipient.ts).
const CONTACT_FIELD = {telegram_voice: "telegram_id", voice_call: "phone", sms: "phone", email: "email"};

/** Who an attempt went to, for the admin: the name and the contact in full (the API masks it); masked when the recipient is gone. */
function attemptTarget(attempt, targets) {
  const person = targets.recipients.find((recipient) => recipient.uuid === attempt.recipient_uuid);
  const contact = person?.[CONTACT_FIELD[attempt.channel]];
  return person ? `${person.name}${contact ? ` (${contact})` : ""}` : attempt.target;
}

function timeline(notification, targets) {
  const entries = [
    {
      at: notification.created_at,
      text: `Accepted${notification.source ? ` from ${notification.source}` : ""}`,
      kind: "accepted"
    }
  ];
  // A suppressed alert says what suppressed it: the window, its reason and its end.
  const held = notification.maintenance_window;
  if (held)
    entries.push({
      at: notification.created_at,
      text: [
        `Held by the maintenance window “${held.reason}” until `,
        timeElement(h, held.ends_at),
        ": it pages nobody while the window lasts"
      ],
      kind: "suppressed"
    });
  for (const attempt of notification.attempts) {
    const detail = `Step ${attempt.step}: ${channelName(attempt.channel)} to ${attemptTarget(attempt, targets)}${attempt.detail ? ` — ${attempt.detail}` : ""}`;
    entries.push({at: attempt.started_at, text: detail, outcome: attempt.outcome});
  }
  if (notification.acknowledged_at) {
    entries.push({
      at: notification.acknowledged_at,
      text: `Acknowledged by ${notification.acknowledged_by ?? "someone"} via ${notification.acknowledged_via}${notification.acknowledged_note ? `: ${notification.acknowledged_note}` : ""}`,
      kind: "acknowledged"
    });
  }
  if (notification.resolved_at) entries.push({at: notification.resolved_at, text: "Resolved", kind: "resolved"});
  entries.sort((a, b) => a.at.localeCompare(b.at));
  const next = notification.escalation?.next_step_at;
  // An alert that cannot reach anyone says what it waits for, in the words of the fix.
  const waiting = (notification.escalation?.waiting_for ?? [])
    .map((wait) => (wait.channel === null ? wait.reason : `${channelName(wait.channel)}: ${wait.reason}`))
    .join("; ");
  return h(
    "ol",
    {class: "timeline"},
    entries.map((entry) =>
      h(
        "li",
        {class: `timeline-${entry.kind ?? "attempt"}`},
        timeElement(h, entry.at),
        " ",
        entry.outcome ? badge(entry.outcome) : null,
        " ",
        entry.text
      )
    ),
    waiting
      ? h(
          "li",
          {class: "timeline-waiting"},
          badge("unavailable", "waiting"),
          ` Cannot reach anyone yet: ${waiting}. Tried again as soon as a channel works.`
        )
      : null,
    next ? h("li", {class: "timeline-next"}, waiting ? "Next look " : "Next step ", timeElement(h, next)) : null
  );
}

// An alert sent to an escalation policy says the level it is on, whom each level paged, and when the next starts.
function policyProgress(notification, nameOf) {
  const policy = notification.escalation?.policy;
  if (!policy) return null;
  const on = policy.level === null ? "no level paged yet" : `on level ${policy.level} of ${policy.levels.length}`;
  return h(
    "div",
    {class: "policy-progress"},
    h(
      "p",
      {class: "meta policy-level"},
      `Escalation policy ${policy.name}: ${on}`,
      policy.runs > 1 && policy.run ? ` (run ${policy.run} of ${policy.runs})` : "",
      policy.next_level_at && ACKNOWLEDGEABLE.has(notification.status)
        ? [" · next level ", timeElement(h, policy.next_level_at)]
        : ""
    ),
    h(
      "ol",
      {class: "levels meta"},
      policy.levels.map((level) =>
        h(
          "li",
          {"aria-current": level.number === policy.level ? "step" : null},
          `Level ${level.number}: `,
          level.targets
            .map((target) => (target.on_call ? `${target.name} (on call: ${nameOf(target.on_call)})` : target.name))
            .join(", "),
          level.paged.length
            ? ` · paged ${[...new Set(level.paged.map((page) => page.name))].join(", ")}`
            : " · not paged"
        )
      )
    )
  );
}

// An alert that joined another's paging (a storm to the same person) says whose, and by when it is paged.
function joinedPaging(notification, messageOf) {
  const joined = notification.escalation?.grouped_with;
  if (!joined || !ACKNOWLEDGEABLE.has(notification.status) || notification.status === "exhausted") return null;
  const other = messageOf(joined);
  return h(
    "p",
    {class: "meta storm-wait"},
    "Joined the paging of ",
    other ? h("q", {}, other) : h("code", {}, joined),
    " (a storm to the same person): paged with it by ",
    timeElement(h, notification.escalation.next_step_at)
  );
}

// A box that never had an alert says how to send the first one; a filter that matches nothing says so.
function emptyHint(filtered) {
  if (filtered) return emptyState("No notifications match these filters.");
  return h(
    "div",
    {class: "empty first-alert"},
    h("p", {}, "No notifications yet. To send your first alert:"),
    h(
      "ol",
      {},
      h("li", {}, "Add a recipient with an email address under ", h("a", {href: "#/recipients"}, "Recipients"), "."),
      h(
        "li",
        {},
        "Create an API key with the scope notifications:send under ",
        h("a", {href: "#/keys"}, "API keys"),
        "."
      ),
      h(
        "li",
        {},
        "Send: ",
        h("code", {}, 'klaxon send --to "Maria" --priority high "Test alert"'),
        " (or POST /api/v1/notifications/send, see the ",
        h("a", {href: "/docs", target: "_blank", rel: "noopener"}, "API docs"),
        ")."
      )
    )
  );
}

/** Live notifications: filters, each with its attempt timeline, acknowledge and resolve; reloads when the gateway says something changed. */
export async function notificationsPage(main, {params}) {
  const targets = await loadTargets();
  const filters = {
    status: params.get("status") ?? "",
    priority: params.get("priority") ?? "",
    recipient_uuid: params.get("recipient_uuid") ?? ""
  };
  const expanded = new Set();
  let items = [];
  let nextCursor = null;

  const live = h("span", {class: "live-indicator", "data-state": "connecting"}, "Connecting…");
  const list = h("div", {class: "notification-list"});
  const more = h("button", {type: "button", class: "button", hidden: true}, "Show older");
  const filterForm = h(
    "form",
    {class: "filters", "aria-label": "Filter notifications"},
    select({
      label: "Status",
      name: "status",
      value: filters.status,
      options: [["", "Any status"], ...STATUSES.map((status) => [status, status])]
    }),
    select({
      label: "Priority",
      name: "priority",
      value: filters.priority,
      options: [["", "Any priority"], ...PRIORITIES.map((priority) => [priority, priority])]
    }),
    select({
      label: "Recipient, group or schedule",
      name: "recipient_uuid",
      value: filters.recipient_uuid,
      options: [["", "Anyone"], ...pagedTargetOptions(targets)]
    })
  );
  filterForm.addEventListener("submit", (event) => event.preventDefault());
  filterForm.addEventListener("change", (event) => {
    filters[event.target.name] = event.target.value;
    const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value));
    history.replaceState(null, "", `#/notifications${query.size ? `?${query}` : ""}`);
    items = [];
    void load();
  });

  function query(extra) {
    return new URLSearchParams({...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)), ...extra});
  }

  async function load() {
    const page = await api(
      "GET",
      `/api/v1/notifications?${query({limit: String(Math.min(MAX_PAGE, Math.max(PAGE_SIZE, items.length)))})}`
    );
    items = page.items;
    nextCursor = page.next_cursor;
    render();
  }

  more.addEventListener("click", async () => {
    const page = await api("GET", `/api/v1/notifications?${query({limit: String(PAGE_SIZE), cursor: nextCursor})}`);
    items = [...items, ...page.items];
    nextCursor = page.next_cursor;
    render();
  });

  async function act(notification, action, card) {
    const path =
      action === "ack"
        ? `/dashboard/api/notifications/${notification.id}/ack`
        : `/api/v1/notifications/${notification.id}/resolve`;
    try {
      const updated = await api("POST", path, action === "ack" ? {} : undefined);
      items = items.map((item) => (item.id === updated.id ? updated : item));
      render();
      // A heartbeat's page: say what the heartbeat is now ("... is still down: its next failure pages again").
      const heartbeat = updated.heartbeat ? ` (${updated.heartbeat.detail})` : "";
      announce(`${action === "ack" ? "Acknowledged" : "Resolved"}: ${notification.message}${heartbeat}`);
    } catch (error) {
      card.querySelector(".card-problem")?.remove();
      card.append(
        h("p", {class: "card-problem", role: "alert"}, error instanceof ApiError ? error.message : String(error))
      );
    }
  }

  function card(notification) {
    const titleId = `title-${notification.id}`;
    const article = h("article", {
      class: `notification priority-${notification.priority}`,
      "aria-labelledby": titleId,
      "data-id": notification.id
    });
    const details = h(
      "details",
      {open: expanded.has(notification.id)},
      h(
        "summary",
        {"data-focus": `${notification.id}:timeline`},
        `Timeline (${notification.attempts.length} attempt${notification.attempts.length === 1 ? "" : "s"})`
      ),
      timeline(notification, targets)
    );
    details.addEventListener("toggle", () =>
      details.open ? expanded.add(notification.id) : expanded.delete(notification.id)
    );
    const link = notification.link
      ? h("a", {href: notification.link, rel: "noreferrer noopener", target: "_blank"}, "source")
      : null;
    return fill(
      article,
      h(
        "div",
        {class: "card-head"},
        badge(notification.priority),
        badge(notification.status),
        h("h2", {id: titleId}, notification.message)
      ),
      h(
        "p",
        {class: "meta"},
        "To ",
        h("strong", {}, targets.nameOf(notification.recipient_uuid)),
        " · ",
        timeElement(h, notification.created_at),
        notification.source ? ` · ${notification.source}` : "",
        notification.occurrences > 1 ? ` · ${notification.occurrences} occurrences` : "",
        link ? " · " : "",
        link
      ),
      policyProgress(notification, targets.nameOf),
      joinedPaging(notification, (id) => items.find((item) => item.id === id)?.message ?? null),
      h(
        "div",
        {class: "actions", "data-needs": "operate"},
        ACKNOWLEDGEABLE.has(notification.status)
          ? h(
              "button",
              {
                type: "button",
                class: "button primary",
                "data-focus": `${notification.id}:ack`,
                onclick: () => act(notification, "ack", article)
              },
              "Acknowledge"
            )
          : null,
        notification.status !== "resolved"
          ? h(
              "button",
              {
                type: "button",
                class: "button",
                "data-focus": `${notification.id}:resolve`,
                onclick: () => act(notification, "resolve", article)
              },
              "Resolve"
            )
          : null
      ),
      details
    );
  }

  function render() {
    // Keep the keyboard focus on the same control across a reload of the list.
    const focused = document.activeElement?.getAttribute?.("data-focus");
    fill(list, items.length ? items.map(card) : emptyHint(Object.values(filters).some(Boolean)));
    more.hidden = !nextCursor;
    if (focused)
      (
        list.querySelector(`[data-focus="${focused}"]`) ??
        list.querySelector(`[data-focus^="${focused.split(":")[0]}:"]`)
      )?.focus();
  }

  fill(main, pageHeading("Notifications", live), filterForm, list, more);
  await load();

  let reloadTimer = null;
  let retryTimer = null;
  let stream = null;
  let left = false;
  const setLive = (state, text) => {
    live.dataset.state = state;
    live.textContent = text;
  };
  const reload = () => load().catch(() => setLive("connecting", "Reload failed, retrying…"));
  function connect() {
    if (left) return;
    stream = new EventSource("/dashboard/api/events");
    stream.addEventListener("open", () => {
      setLive("live", "Live");
      // Whatever changed while the stream was down is picked up here.
      void reload();
    });
    stream.addEventListener("change", () => {
      clearTimeout(reloadTimer);
      reloadTimer = setTimeout(reload, RELOAD_DELAY_MS);
    });
    stream.addEventListener("signed_out", () => {
      stream.close();
      signedOut();
    });
    stream.addEventListener("error", () => {
      setLive("connecting", "Reconnecting…");
      // The browser retries by itself unless the gateway refused the stream (e.g. the session
      // ended): then a plain request finds out which, and a new stream is tried a little later.
      if (stream.readyState !== EventSource.CLOSED) return;
      retryTimer = setTimeout(() => {
        reload().then(connect, connect);
      }, 5000);
    });
  }
  connect();
  return () => {
    left = true;
    clearTimeout(reloadTimer);
    clearTimeout(retryTimer);
    stream.close();
  };
}
