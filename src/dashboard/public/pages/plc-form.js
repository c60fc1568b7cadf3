import {h} from "../lib/dom.js";
import {field, select} from "../lib/forms.js";
import {PRIORITIES} from "../lib/format.js";

// The choices the API takes (src/domain/plc/, src/api/models/plc-integration.model.ts).
const TABLES = ["holding_register", "input_register", "coil", "discrete_input"];
const TYPES = ["uint16", "int16", "uint32", "int32", "float32", "bool"];
const CONDITIONS = [
  ["", "no alarm"],
  [">", ">"],
  [">=", ">="],
  ["<", "<"],
  ["<=", "<="],
  ["==", "=="],
  ["!=", "!="],
  ["bit", "a bit is set"],
  ["change", "any change"]
];
const SECURITY_POLICIES = ["None", "Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"];
const options = (values) => values.map((value) => [value, value]);

/**
 * One control of a point row. Its pointer and label carry the row's index, renumbered when a row
 * goes, so the gateway's errors (`/points/2/address`) land in the cell they are about.
 */
function cellControl(control, part, label, only) {
  control.dataset.part = part;
  control.dataset.label = label;
  return h("div", {class: "field", "data-only": only ?? null}, control);
}

const input = (attributes = {}) => h("input", {type: "text", autocomplete: "off", ...attributes});
const choice = (values, value) =>
  h(
    "select",
    {},
    values.map(([optionValue, text]) => h("option", {value: optionValue, selected: optionValue === value}, text))
  );

function pointRow(remove) {
  const when = choice(CONDITIONS, "");
  const bit = cellControl(input({inputmode: "numeric", placeholder: "bit 0-31"}), "alarm/bit", "bit", "bit");
  const row = h(
    "tr",
    {"data-point": ""},
    h("td", {}, cellControl(input({placeholder: "oil_temp"}), "name", "name")),
    h(
      "td",
      {},
      cellControl(choice(options(TABLES), "holding_register"), "table", "table", "modbus"),
      cellControl(input({inputmode: "numeric", placeholder: "address"}), "address", "address", "modbus"),
      cellControl(choice(options(TYPES), "uint16"), "type", "type", "modbus"),
      cellControl(input({placeholder: "ns=2;s=Boiler.Temperature"}), "node_id", "node id", "opcua")
    ),
    h("td", {}, cellControl(input({inputmode: "decimal", placeholder: "1"}), "scale", "scale")),
    h("td", {}, cellControl(input({placeholder: "°C"}), "unit", "unit")),
    h("td", {}, cellControl(when, "alarm/when", "alarm when")),
    h("td", {}, cellControl(input({inputmode: "decimal"}), "alarm/value", "alarm value"), bit),
    h("td", {}, cellControl(input({inputmode: "decimal", placeholder: "0"}), "alarm/deadband", "deadband")),
    h("td", {}, cellControl(input({inputmode: "numeric", placeholder: "0"}), "alarm/on_delay_seconds", "on-delay")),
    h("td", {}, cellControl(input({inputmode: "numeric", placeholder: "0"}), "alarm/off_delay_seconds", "off-delay")),
    h("td", {}, cellControl(choice([["", "default"], ...options(PRIORITIES)], ""), "alarm/priority", "alarm priority")),
    h("td", {}, cellControl(input({placeholder: "Press 7 oil {value} {unit}"}), "alarm/title", "alarm title")),
    h("td", {}, h("button", {type: "button", class: "button small", onclick: () => remove(row)}, "Remove"))
  );
  when.addEventListener("change", () => (bit.hidden = when.value !== "bit"));
  bit.hidden = true;
  return row;
}

/** A number when the text is one; else the text, so the gateway names the mistake in words. */
function numeric(raw) {
  return raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
}

function pointOf(row, kind) {
  const value = (part) => row.querySelector(`[data-part="${part}"]`).value.trim();
  const point = {name: value("name")};
  if (kind === "modbus")
    Object.assign(point, {table: value("table"), address: numeric(value("address")), type: value("type")});
  else point.node_id = value("node_id");
  if (value("scale")) point.scale = numeric(value("scale"));
  if (value("unit")) point.unit = value("unit");
  if (!value("alarm/when")) return point;
  const alarm = {when: value("alarm/when")};
  for (const part of ["value", "bit", "deadband", "on_delay_seconds", "off_delay_seconds"])
    if (value(`alarm/${part}`)) alarm[part] = numeric(value(`alarm/${part}`));
  if (value("alarm/priority")) alarm.priority = value("alarm/priority");
  if (value("alarm/title")) alarm.title = value("alarm/title");
  return {...point, alarm};
}

function modbusFields() {
  const transport = select({
    label: "Connection",
    name: "modbus-transport",
    pointer: "/modbus",
    options: [
      ["tcp", "Modbus TCP (Ethernet)"],
      ["rtu", "Modbus RTU (serial, RS-485)"]
    ]
  });
  const tcp = h(
    "div",
    {class: "row", "data-transport": "tcp"},
    field({label: "Host", name: "modbus-host", pointer: "/modbus/host", hint: "e.g. 10.0.0.7", autocomplete: "off"}),
    field({label: "Port", name: "modbus-port", pointer: "/modbus/port", inputmode: "numeric", value: "502"})
  );
  const rtu = h(
    "div",
    {class: "row", "data-transport": "rtu", hidden: true},
    field({
      label: "Serial port",
      name: "modbus-serial_port",
      pointer: "/modbus/serial_port",
      hint: "best its /dev/serial/by-id/... link",
      autocomplete: "off"
    }),
    field({label: "Baud", name: "modbus-baud_rate", pointer: "/modbus/baud_rate", inputmode: "numeric", value: "9600"}),
    select({
      label: "Parity",
      name: "modbus-parity",
      pointer: "/modbus/parity",
      options: options(["even", "none", "odd"])
    }),
    select({label: "Stop bits", name: "modbus-stop_bits", pointer: "/modbus/stop_bits", options: options(["1", "2"])})
  );
  const fieldset = h(
    "fieldset",
    {"data-only": "modbus"},
    h("legend", {}, "Modbus device"),
    transport,
    tcp,
    rtu,
    h(
      "div",
      {class: "row"},
      field({label: "Unit id", name: "modbus-unit_id", pointer: "/modbus/unit_id", inputmode: "numeric", value: "1"}),
      field({
        label: "Poll every (ms)",
        name: "modbus-poll_interval_ms",
        pointer: "/modbus/poll_interval_ms",
        inputmode: "numeric",
        value: "1000"
      })
    )
  );
  const control = transport.querySelector("select");
  control.addEventListener("change", () => {
    tcp.hidden = control.value !== "tcp";
    rtu.hidden = control.value !== "rtu";
  });
  return fieldset;
}

function modbusOf(form) {
  const value = (name) => form.elements.namedItem(`modbus-${name}`).value.trim();
  const common = {unit_id: numeric(value("unit_id")), poll_interval_ms: numeric(value("poll_interval_ms"))};
  if (value("transport") === "tcp") return {host: value("host"), port: numeric(value("port")), ...common};
  return {
    serial_port: value("serial_port"),
    baud_rate: numeric(value("baud_rate")),
    parity: value("parity"),
    stop_bits: numeric(value("stop_bits")),
    ...common
  };
}

function opcuaFields() {
  return h(
    "fieldset",
    {"data-only": "opcua", hidden: true},
    h("legend", {}, "OPC UA server"),
    field({
      label: "Endpoint URL",
      name: "opcua-endpoint_url",
      pointer: "/opcua/endpoint_url",
      hint: "opc.tcp://host:4840[/path], as the server announces it",
      autocomplete: "off"
    }),
    h(
      "div",
      {class: "row"},
      select({
        label: "Security mode",
        name: "opcua-security_mode",
        pointer: "/opcua/security_mode",
        options: options(["None", "Sign", "SignAndEncrypt"])
      }),
      select({
        label: "Security policy",
        name: "opcua-security_policy",
        pointer: "/opcua/security_policy",
        hint: "None goes with mode None; Sign and SignAndEncrypt need one of the others",
        options: options(SECURITY_POLICIES)
      })
    ),
    h(
      "div",
      {class: "row"},
      field({label: "User", name: "opcua-user", pointer: "/opcua/user", hint: "empty: anonymous", autocomplete: "off"}),
      field({
        label: "Password",
        name: "opcua-password",
        pointer: "/opcua/password",
        type: "password",
        autocomplete: "new-password"
      })
    ),
    h(
      "label",
      {class: "check", "data-pointer": "/opcua/alarms"},
      h("input", {type: "checkbox", name: "opcua-alarms", checked: true}),
      " Page the server's own alarms (Alarms & Conditions), acknowledged both ways"
    )
  );
}

function opcuaOf(form) {
  const value = (name) => form.elements.namedItem(`opcua-${name}`).value.trim();
  return {
    endpoint_url: value("endpoint_url"),
    security_mode: value("security_mode"),
    security_policy: value("security_policy"),
    user: value("user") || null,
    password: form.elements.namedItem("opcua-password").value || null,
    alarms: form.elements.namedItem("opcua-alarms").checked
  };
}

const HEADINGS = [
  "Name",
  "Read from",
  "Scale",
  "Unit",
  "Alarm when",
  "Value",
  "Deadband",
  "On-delay (s)",
  "Off-delay (s)",
  "Priority",
  "Title",
  ""
];

/**
 * The part of "Add an integration" for a modbus or opcua integration: the device (Modbus TCP or
 * RTU, or the OPC UA server and its login) and a table of points the user adds rows to, each with
 * its alarm. `show(kind)` shows what that kind has; `fieldsOf(form, kind)` is its part of the body.
 */
export function plcEditor() {
  const rows = h("tbody", {});
  let kind = "generic";
  const renumber = () =>
    [...rows.children].forEach((row, index) => {
      for (const control of row.querySelectorAll("[data-part]")) {
        control.setAttribute("data-pointer", `/points/${index}/${control.dataset.part}`);
        control.setAttribute("aria-label", `Point ${index + 1} ${control.dataset.label}`);
      }
    });
  const showKind = (scope) => {
    for (const element of scope.querySelectorAll("[data-only]")) {
      const only = element.dataset.only;
      if (only === "modbus" || only === "opcua") element.hidden = only !== kind;
    }
  };
  const remove = (row) => {
    row.remove();
    renumber();
  };
  const addPoint = () => {
    const row = pointRow(remove);
    rows.append(row);
    renumber();
    showKind(row);
    row.querySelector("input")?.focus();
  };
  const points = h(
    "fieldset",
    {"data-pointer": "/points"},
    h("legend", {}, "Points"),
    h(
      "p",
      {class: "hint"},
      "What is read, and when it pages. The value is raw × scale; the title may hold {value} and {unit}. An OPC UA server's own alarms need no point."
    ),
    h(
      "div",
      {class: "table-wrap"},
      h(
        "table",
        {class: "points-editor"},
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            HEADINGS.map((text) => h("th", {}, text))
          )
        ),
        rows
      )
    ),
    h("div", {class: "actions"}, h("button", {type: "button", class: "button small", onclick: addPoint}, "Add point"))
  );
  const element = h("div", {class: "plc-editor", hidden: true}, modbusFields(), opcuaFields(), points);
  return {
    element,
    show(next) {
      kind = next;
      element.hidden = kind !== "modbus" && kind !== "opcua";
      showKind(element);
      if (!element.hidden && !rows.childElementCount) addPoint();
    },
    fieldsOf(form) {
      if (element.hidden) return {};
      const device = kind === "modbus" ? {modbus: modbusOf(form)} : {opcua: opcuaOf(form)};
      return {...device, points: [...rows.children].map((row) => pointOf(row, kind))};
    }
  };
}
