import {announce, append, h, uniqueId} from "./dom.js";

/**
 * A labelled input with an optional hint, tied to a JSON Pointer of the request body so the
 * gateway's field errors land beside the field they are about.
 */
export function field({label, name, pointer = `/${name}`, type = "text", value, hint, control, ...attributes}) {
  const id = uniqueId(name);
  const hintId = hint ? `${id}-hint` : null;
  const input =
    control ??
    h("input", {
      id,
      name,
      type,
      value: value ?? "",
      "data-pointer": pointer,
      "aria-describedby": hintId,
      ...attributes
    });
  if (control) {
    control.id = id;
    control.setAttribute("data-pointer", pointer);
    if (hintId) control.setAttribute("aria-describedby", hintId);
  }
  return h(
    "div",
    {class: "field"},
    h("label", {for: id}, label),
    input,
    hint ? h("p", {class: "hint", id: hintId}, hint) : null
  );
}

export function select({label, name, options, value, hint, pointer}) {
  const control = h(
    "select",
    {name},
    options.map(([optionValue, text]) => h("option", {value: optionValue, selected: optionValue === value}, text))
  );
  return field({label, name, pointer, hint, control});
}

/** A group of checkboxes under one legend; `pointer` marks the whole group. */
export function checkboxes({legend, name, options, checked = [], pointer = `/${name}`, hint}) {
  return h(
    "fieldset",
    {class: "checkboxes", "data-pointer": pointer},
    h("legend", {}, legend),
    hint ? h("p", {class: "hint"}, hint) : null,
    options.map(([value, text]) =>
      h(
        "label",
        {class: "check"},
        h("input", {type: "checkbox", name, value, checked: checked.includes(value)}),
        " ",
        text
      )
    )
  );
}

/** The checked values, in their order on the page (which is the chosen order for an ordered checklist). */
export function checkedValues(form, name) {
  return [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((input) => input.value);
}

export function clearProblem(form) {
  form.querySelector(".form-problem")?.remove();
  for (const element of form.querySelectorAll(".field-error")) element.remove();
  for (const element of form.querySelectorAll("[aria-invalid]")) {
    element.removeAttribute("aria-invalid");
    const describedBy = (element.getAttribute("aria-describedby") ?? "")
      .split(" ")
      .filter((id) => id && !id.endsWith("-error"))
      .join(" ");
    if (describedBy) element.setAttribute("aria-describedby", describedBy);
    else element.removeAttribute("aria-describedby");
  }
}

function targetFor(form, pointer) {
  let best = null;
  for (const element of form.querySelectorAll("[data-pointer]")) {
    const own = element.getAttribute("data-pointer");
    if (
      (pointer === own || pointer.startsWith(`${own}/`)) &&
      (!best || own.length > best.getAttribute("data-pointer").length)
    )
      best = element;
  }
  return best;
}

/** The gateway names a pattern a value failed; the field's own hint says the same for people. */
function readable(detail, target) {
  const hint = target.closest(".field")?.querySelector(".hint")?.textContent;
  return detail.startsWith("does not have the expected form") && hint ? `Not in the expected form. ${hint}.` : detail;
}

/**
 * Shows a refused request on the form: a summary at the top (announced, and focused when no
 * field can take the focus) and each field error under its field.
 */
export function showProblem(form, error) {
  clearProblem(form);
  // An ApiError, or a check the page made itself in the same shape.
  const problem = error?.problem ?? {title: "Something went wrong", detail: String(error?.message ?? error)};
  const unplaced = [];
  let firstInvalid = null;
  for (const item of problem.errors ?? []) {
    const target = targetFor(form, item.pointer);
    if (!target) {
      unplaced.push(item);
      continue;
    }
    const errorId = uniqueId("field") + "-error";
    const message = h("p", {class: "field-error", id: errorId}, readable(item.detail, target));
    target.setAttribute("aria-invalid", "true");
    target.setAttribute("aria-describedby", `${target.getAttribute("aria-describedby") ?? ""} ${errorId}`.trim());
    (target.closest(".field") ?? target).append(message);
    firstInvalid ??= target.matches("fieldset") ? target.querySelector("input, select, button") : target;
  }
  const summary = h(
    "div",
    {class: "form-problem", role: "alert", tabindex: "-1"},
    h("p", {class: "problem-title"}, problem.title ?? "The gateway refused this"),
    problem.errors?.length ? null : h("p", {}, problem.detail),
    unplaced.length
      ? h(
          "ul",
          {},
          unplaced.map((item) => h("li", {}, `${item.pointer || "body"}: ${item.detail}`))
        )
      : null,
    problem.errors?.length && !unplaced.length ? h("p", {}, "Correct the fields marked below.") : null
  );
  form.prepend(summary);
  (firstInvalid ?? summary).focus();
}

/** Runs `work` for a form: disables its submit button meanwhile and shows what the gateway refused. */
export async function submitting(form, work) {
  const button = form.querySelector('button[type="submit"]');
  clearProblem(form);
  if (button) button.disabled = true;
  try {
    return {ok: true, value: await work()};
  } catch (error) {
    showProblem(form, error);
    return {ok: false};
  } finally {
    if (button) button.disabled = false;
  }
}

/** Trimmed text of a field, or null when empty (the API's way of saying "none"). */
export function textOrNull(form, name) {
  const value = form.elements.namedItem(name).value.trim();
  return value === "" ? null : value;
}

/** A whole number, or the text itself when it is not one, so the gateway names the mistake. */
export function numberOf(form, name) {
  const raw = form.elements.namedItem(name).value.trim();
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

/**
 * Checkboxes whose order matters (channel order, group members): each row moves with Up and
 * Down buttons, which work from the keyboard and say where the row went.
 */
export function orderedChecklist({legend, name, pointer = `/${name}`, options, checked = [], hint}) {
  const known = new Map(options);
  const ordered = [
    ...checked.filter((value) => known.has(value)),
    ...options.map(([value]) => value).filter((value) => !checked.includes(value))
  ];
  const list = h("ol", {class: "ordered-list"});
  const move = (row, label, direction, button) => {
    const sibling = direction < 0 ? row.previousElementSibling : row.nextElementSibling;
    if (!sibling) return;
    if (direction < 0) sibling.before(row);
    else sibling.after(row);
    button.focus();
    announce(`${label} moved to position ${[...list.children].indexOf(row) + 1}`);
  };
  for (const value of ordered) {
    const label = known.get(value);
    const row = h("li", {"data-value": value});
    const up = h("button", {type: "button", class: "button small", "aria-label": `Move ${label} up`}, "↑");
    const down = h("button", {type: "button", class: "button small", "aria-label": `Move ${label} down`}, "↓");
    up.addEventListener("click", () => move(row, label, -1, up));
    down.addEventListener("click", () => move(row, label, 1, down));
    list.append(
      append(row, [
        h(
          "label",
          {class: "check"},
          h("input", {type: "checkbox", name, value, checked: checked.includes(value)}),
          " ",
          label
        ),
        h("span", {class: "move"}, up, down)
      ])
    );
  }
  return h(
    "fieldset",
    {class: "checkboxes", "data-pointer": pointer},
    h("legend", {}, legend),
    hint ? h("p", {class: "hint"}, hint) : null,
    list
  );
}
