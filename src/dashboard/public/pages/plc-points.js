import {api} from "../lib/api.js";
import {badge, dataTable, emptyState, h} from "../lib/dom.js";
import {timeElement} from "../lib/format.js";

/** What a point is read from: its table and address (Modbus) or its node (OPC UA). */
function pointSource(point) {
  if (point.node_id) return point.node_id;
  return `${point.table} ${point.address} (${point.type}${point.word_order === "low_first" ? ", low word first" : ""})`;
}

function pointValue(point) {
  const state = point.state;
  if (!state || state.value === null) return "—";
  return `${state.value}${point.unit ? ` ${point.unit}` : ""}`;
}

function pointRows(points) {
  return points.map((point) => [
    point.name,
    pointSource(point),
    pointValue(point),
    point.state ? badge(`quality-${point.state.quality}`, point.state.quality) : "not read yet",
    point.alarm ? (point.state ? badge(`alarm-${point.state.alarm}`, point.state.alarm) : "—") : "no alarm",
    point.state?.read_at ? timeElement(h, point.state.read_at, "ago") : "—"
  ]);
}

function linkFacts(integration) {
  const link = integration.link;
  const device = integration.modbus
    ? (integration.modbus.host ?? integration.modbus.serial_port)
    : (integration.opcua?.endpoint_url ?? "");
  const state = !link
    ? "starting..."
    : [
        badge(`link-${link.state}`, link.state),
        " since ",
        timeElement(h, link.since, "ago"),
        link.last_error ? `; last error: ${link.last_error}` : ""
      ];
  return [
    h("dt", {}, "Device"),
    h("dd", {class: link?.state === "unreachable" ? "integration-error" : null}, `${device}: `, state)
  ];
}

/**
 * A modbus or opcua integration's device link and points (the live value and alarm state of
 * each), with "Read now": every point read through the link at once, to check the values before
 * anyone relies on them.
 */
export function plcSection(integration) {
  const facts = h("dl", {class: "facts"}, linkFacts(integration));
  const table = h("div", {class: "plc-points"});
  const show = (current) => {
    facts.replaceChildren(...linkFacts(current).flat());
    table.replaceChildren(
      current.points.length
        ? dataTable({
            caption: `Points of ${current.name}`,
            columns: ["Point", "Read from", "Value", "Quality", "Alarm", "Read"],
            rows: pointRows(current.points)
          })
        : emptyState("No points: only the server's alarms are watched.")
    );
  };
  show(integration);
  const status = h("p", {class: "hint", role: "status"});
  const readNow = h(
    "button",
    {
      type: "button",
      class: "button small",
      onclick: async () => {
        status.textContent = "Reading...";
        try {
          show(await api("POST", `/api/v1/integrations/${integration.id}/read`));
          status.textContent = "Read just now.";
        } catch (error) {
          status.textContent = error.message;
        }
      }
    },
    "Read now"
  );
  return h("div", {class: "plc"}, facts, table, h("div", {class: "actions"}, readNow, status));
}
