import {announce, h} from "../lib/dom.js";
import {checkboxes, checkedValues, field, numberOf, orderedChecklist, select, textOrNull} from "../lib/forms.js";
import {targetOptions} from "../lib/targets.js";
import {instantOf, knownZone, wallClock} from "../lib/zoned.js";

// The layer editors of the schedule form. Each layer is a fieldset whose fields carry JSON
// Pointers under /layers/<index>, renumbered whenever a layer is added or removed, so that the
// gateway's field errors land beside the layer they are about.

const WEEKDAYS = [
  ["mon", "Mon"],
  ["tue", "Tue"],
  ["wed", "Wed"],
  ["thu", "Thu"],
  ["fri", "Fri"],
  ["sat", "Sat"],
  ["sun", "Sun"]
];
const SHIFT_UNITS = ["hours", "days", "weeks"];
/** How a cycle cell says "nobody works this shift" (null in the API). */
const NOBODY = "-";

/**
 * A datetime-local value read on `zone`'s wall clock, as an ISO instant. Left as typed when it
 * cannot be read (empty, or the zone unknown), so the gateway names the mistake at its pointer.
 */
export function instantField(scope, name, zone) {
  const value = scope.querySelector(`[name="${name}"]`).value;
  return value && knownZone(zone) ? new Date(instantOf(value, zone)).toISOString() : value;
}

/** An ISO instant as the datetime-local value of `zone`'s wall clock; empty when there is none. */
export function wallValue(iso, zone) {
  return iso && knownZone(zone) ? wallClock(Date.parse(iso), zone) : "";
}

/** "09:00-17:00, 22:00-06:00" and back; a part that is no window is passed on for the gateway to name. */
const windowsText = (windows = []) => windows.map((window) => `${window.start}-${window.end}`).join(", ");
function windowsOf(text) {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [start, end = ""] = part.split(/\s*-\s*/);
      return {start, end};
    });
}

/** "early 06:00, late 14:00" and back: the last word of each part is its start. */
const shiftsText = (shifts = []) => shifts.map((shift) => `${shift.name} ${shift.starts}`).join(", ");
function shiftsOf(text) {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const words = part.split(/\s+/);
      return {name: words.slice(0, -1).join(" "), starts: words.at(-1)};
    });
}

/** One cycle day per line, crew names between spaces, "-" for nobody. */
const cycleText = (cycle = []) => cycle.map((day) => day.map((crew) => crew ?? NOBODY).join(" ")).join("\n");
function cycleOf(text) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => line.split(/\s+/).map((crew) => (crew === NOBODY ? null : crew)));
}

function layerFieldset(kind, layer, ...fields) {
  return h(
    "fieldset",
    {class: `layer layer-${kind}`},
    h("legend", {}, ""),
    field({label: "Layer name", name: "layer_name", pointer: "/layers/0/name", value: layer?.name, hint: "Optional"}),
    ...fields
  );
}

/** A rotation: members in turn, a shift length, the first hand-off, optional weekdays and times of day. */
function rotationLayer(targets, layer, zone) {
  const unit = SHIFT_UNITS.find((name) => layer?.[`shift_length_${name}`]) ?? "hours";
  const element = layerFieldset(
    "rotation",
    layer,
    orderedChecklist({
      legend: "Members, in turn order",
      name: "members",
      pointer: "/layers/0/members",
      options: targets.recipients.map((recipient) => [recipient.uuid, recipient.name]),
      checked: layer?.members ?? []
    }),
    h(
      "div",
      {class: "field-row"},
      field({
        label: "Shift length",
        name: "shift_length",
        pointer: "/layers/0",
        type: "number",
        min: "1",
        value: String(layer?.[`shift_length_${unit}`] ?? 12)
      }),
      select({label: "Unit", name: "shift_unit", options: SHIFT_UNITS.map((name) => [name, name]), value: unit})
    ),
    field({
      label: "First hand-off",
      name: "starts_at",
      pointer: "/layers/0/starts_at",
      type: "datetime-local",
      value: wallValue(layer?.starts_at, zone),
      hint: "Wall time in the schedule's zone; later hand-offs keep its time of day"
    }),
    checkboxes({
      legend: "Only on",
      name: "weekdays",
      pointer: "/layers/0/restrictions/weekdays",
      options: WEEKDAYS,
      checked: layer?.restrictions?.weekdays ?? [],
      hint: "None checked: every day"
    }),
    field({
      label: "Only between",
      name: "windows",
      pointer: "/layers/0/restrictions/windows",
      value: windowsText(layer?.restrictions?.windows),
      hint: "Times of day such as 09:00-17:00, comma-separated; empty: the whole day; 22:00-06:00 crosses midnight"
    })
  );
  const read = (zone) => {
    const weekdays = checkedValues(element, "weekdays");
    const windows = windowsOf(element.querySelector('[name="windows"]').value);
    const restrictions = {...(weekdays.length ? {weekdays} : {}), ...(windows.length ? {windows} : {})};
    return {
      type: "rotation",
      ...nameOf(element),
      members: checkedValues(element, "members"),
      [`shift_length_${element.querySelector('[name="shift_unit"]').value}`]: numberOf(element, "shift_length"),
      starts_at: instantField(element, "starts_at", zone),
      ...(Object.keys(restrictions).length ? {restrictions} : {})
    };
  };
  return {element, read};
}

const nameOf = (element) => {
  const name = textOrNull(element, "layer_name");
  return name ? {name} : {};
};

/** One crew row: the name the cycle uses and the recipient or group it pages. */
function crewRow(targets, crew) {
  const row = h(
    "li",
    {class: "field-row crew"},
    field({label: "Crew", name: "crew_name", pointer: "/layers/0/crews", value: crew?.name, autocomplete: "off"}),
    select({label: "Paged", name: "crew_target", options: targetOptions(targets), value: crew?.target})
  );
  row.append(
    h(
      "button",
      {type: "button", class: "button small", onclick: () => row.remove(), "aria-label": "Remove this crew"},
      "Remove"
    )
  );
  return row;
}

/** A shift pattern: named shifts every day, crews, and the cycle of days saying which crew works each shift. */
function shiftPatternLayer(targets, layer) {
  const crews = h(
    "ol",
    {class: "crews"},
    (layer?.crews ?? [{}]).map((crew) => crewRow(targets, crew))
  );
  const cycle = h("textarea", {name: "cycle", rows: "6", spellcheck: "false"}, cycleText(layer?.cycle));
  const element = layerFieldset(
    "shift-pattern",
    layer,
    field({
      label: "Shifts of the day",
      name: "shifts",
      pointer: "/layers/0/shifts",
      value: shiftsText(layer?.shifts),
      hint: "Name and start, comma-separated, e.g. early 06:00, late 14:00, night 22:00; each runs until the next starts"
    }),
    h(
      "fieldset",
      {class: "checkboxes", "data-pointer": "/layers/0/crews"},
      h("legend", {}, "Crews"),
      crews,
      h("button", {type: "button", class: "button small", onclick: () => crews.append(crewRow(targets))}, "Add crew")
    ),
    field({
      label: "Cycle",
      name: "cycle",
      pointer: "/layers/0/cycle",
      control: cycle,
      hint: `One line per day of the cycle, the crew of each shift in order, ${NOBODY} for nobody; it repeats`
    }),
    field({
      label: "Day 1 of the cycle",
      name: "starts_on",
      pointer: "/layers/0/starts_on",
      type: "date",
      value: layer?.starts_on
    })
  );
  const read = () => ({
    type: "shift_pattern",
    ...nameOf(element),
    shifts: shiftsOf(element.querySelector('[name="shifts"]').value),
    crews: [...crews.children].map((row) => ({
      name: row.querySelector('[name="crew_name"]').value.trim(),
      target: row.querySelector('[name="crew_target"]').value
    })),
    cycle: cycleOf(cycle.value),
    starts_on: element.querySelector('[name="starts_on"]').value
  });
  return {element, read};
}

/**
 * The layers of a schedule, bottom first, with buttons to add either kind. `read(zone)` gives
 * them as the API takes them; the zone is asked at submit, since the form can change it.
 */
export function layersEditor(targets, layers, zone) {
  const editors = [];
  const list = h("div", {class: "layers"});
  const renumber = () =>
    editors.forEach(({element}, index) => {
      element.querySelector("legend").textContent = `Layer ${index + 1}: ${
        element.classList.contains("layer-rotation") ? "rotation" : "shift pattern"
      }`;
      for (const marked of element.querySelectorAll("[data-pointer]"))
        marked.dataset.pointer = marked.dataset.pointer.replace(/^\/layers\/\d+/, `/layers/${index}`);
      for (const button of element.querySelectorAll(".layer-actions [data-label]"))
        button.setAttribute("aria-label", button.dataset.label.replace("#", String(index + 1)));
    });
  /** Moves a layer one place down (-1, lower in the stack) or up (+1), where it wins over more. */
  const move = (editor, direction, button) => {
    const index = editors.indexOf(editor);
    const other = editors[index + direction];
    if (!other) return;
    [editors[index], editors[index + direction]] = [other, editor];
    if (direction < 0) other.element.before(editor.element);
    else other.element.after(editor.element);
    renumber();
    button.focus();
    announce(`Layer moved to position ${index + direction + 1}`);
  };
  const add = (editor) => {
    const button = (text, label, onclick, className = "button small") => {
      const control = h("button", {type: "button", class: className, "data-label": label}, text);
      control.addEventListener("click", () => onclick(control));
      return control;
    };
    editor.element.append(
      h(
        "div",
        {class: "actions layer-actions"},
        button("↑ Earlier", "Move layer # earlier (lower)", (control) => move(editor, -1, control)),
        button("↓ Later", "Move layer # later (wins over those before)", (control) => move(editor, 1, control)),
        button(
          "Remove layer",
          "Remove layer #",
          () => {
            editors.splice(editors.indexOf(editor), 1);
            editor.element.remove();
            renumber();
          },
          "button small danger"
        )
      )
    );
    editors.push(editor);
    list.append(editor.element);
    renumber();
  };
  for (const layer of layers)
    add(layer.type === "shift_pattern" ? shiftPatternLayer(targets, layer) : rotationLayer(targets, layer, zone));
  const element = h(
    "div",
    {class: "layers-editor", "data-pointer": "/layers"},
    h("p", {class: "hint"}, "Layers are listed bottom first: a later layer wins wherever it has someone on call."),
    list,
    h(
      "div",
      {class: "actions"},
      h(
        "button",
        {
          type: "button",
          class: "button small",
          onclick: () => add(rotationLayer(targets, null, zone))
        },
        "Add rotation layer"
      ),
      h(
        "button",
        {
          type: "button",
          class: "button small",
          onclick: () => add(shiftPatternLayer(targets, null))
        },
        "Add shift-pattern layer"
      )
    )
  );
  // Renumbered again at reading: a crew added since carries the pointer of layer 0.
  const read = (zoneNow) => {
    renumber();
    return editors.map((editor) => editor.read(zoneNow));
  };
  return {element, read};
}
