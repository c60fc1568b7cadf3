// Elements are built with this helper, never from HTML strings: text from the API (alert
// messages, names) can then never become markup or script.

/** h("button", {class: "x", onclick: f}, "Label", child...) */
export function h(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.className = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "value") element.value = value;
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
  return parent;
}

/** Replaces everything inside `parent`. */
export function fill(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

let uniqueCounter = 0;
export function uniqueId(prefix) {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}`;
}

/** Says something to screen readers without moving focus. */
export function announce(text) {
  const announcer = document.getElementById("announcer");
  announcer.textContent = "";
  // A change after a tick is announced even when the text repeats.
  setTimeout(() => (announcer.textContent = text), 50);
}

/** A page heading that takes focus, so keyboard and screen-reader users start at the top of the new page. */
export function pageHeading(text, ...extra) {
  return h("div", {class: "page-head"}, h("h1", {tabindex: "-1", id: "page-title"}, text), ...extra);
}

export function focusHeading() {
  document.getElementById("page-title")?.focus();
}

/** A button that copies `text`, saying so in its label for a moment. */
export function copyButton(text, label = "Copy") {
  const button = h("button", {type: "button", class: "button small", "aria-label": `${label}: ${text}`}, label);
  button.addEventListener("click", async () => {
    await copyText(text);
    button.textContent = "Copied";
    announce("Copied to the clipboard");
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}

async function copyText(text) {
  // The Clipboard API needs a secure context; a LAN box is usually plain http, so fall back.
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // fall through to the selection way
    }
  }
  const area = h("textarea", {class: "visually-hidden", readonly: true}, text);
  document.body.append(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

/** An id or uuid with its copy button. */
export function copyable(value, label) {
  return h("span", {class: "copyable"}, h("code", {}, value), copyButton(value, label));
}

/** A secret shown once: it is in this box only, with a copy button and a warning. */
export function secretOnce(title, value, note) {
  return h(
    "section",
    {class: "secret-once", role: "alert", tabindex: "-1", "aria-label": title},
    h("h2", {}, title),
    h("p", {}, note ?? "Copy it now: it is shown only this once and cannot be read again."),
    h("div", {class: "secret-value"}, h("code", {"data-secret": ""}, value), copyButton(value, "Copy"))
  );
}

export function badge(kind, text) {
  return h("span", {class: `badge badge-${kind}`}, text ?? kind);
}

export function emptyState(text) {
  return h("p", {class: "empty"}, text);
}

export function confirmAction(question) {
  return window.confirm(question);
}

/**
 * A table whose first column heads each row. Every cell carries its column's title, so on a
 * phone the rows become stacked cards that still say what each value is.
 */
export function dataTable({caption, columns, rows}) {
  return h(
    "div",
    {class: "table-wrap"},
    h(
      "table",
      {class: "data-table"},
      h("caption", {class: "visually-hidden"}, caption),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          columns.map((title) => h("th", {scope: "col"}, title))
        )
      ),
      h(
        "tbody",
        {},
        rows.map((cells) =>
          h(
            "tr",
            {},
            cells.map((cell, index) =>
              h(index === 0 ? "th" : "td", {scope: index === 0 ? "row" : null, "data-label": columns[index]}, cell)
            )
          )
        )
      )
    )
  );
}
