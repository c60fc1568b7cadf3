import {systemClock} from "../../../lib/clock.js";
import type {Logger} from "../../../lib/logger.js";
import {serveSupervisedWork, supervisedWorkerData} from "../../../lib/supervised-worker.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {PlcLink, PlcLinkListener, PointReading} from "../plc/plc-link.js";
import {SerialRelayBinding} from "./serial-relay-binding.js";
import type {
  PlcWorkerBatch,
  PlcWorkerCommand,
  PlcWorkerData,
  PlcWorkerEvent,
  WireReading
} from "./plc-worker-protocol.js";

// The PLC links' thread (design rule 14): the Modbus or OPC UA client connections of one kind, their
// polling, subscriptions and reconnects, and so every byte a device sends, are decoded here, never on
// the thread that pages. What the links see leaves as plain events, in batches, which the gateway's
// thread checks (plc-link-workers.ts). A throw that escapes, a hang or runaway memory ends this
// worker; its supervisor marks its links unreachable and starts a fresh one, which reconnects them.
const {kind, dataDir} = supervisedWorkerData<PlcWorkerData>();

// The driver is loaded before the worker says it is ready (within the supervisor's load limit):
// loading node-opcua takes seconds on a small busy box, which must not look like a hang later.
const driver =
  kind === "modbus"
    ? {modbus: await import("../modbus/modbus-link.js")}
    : {opcua: await import("../opcua/opcua-link.js")};

// Modbus RTU ports are opened by the gateway's thread and their bytes relayed (serial-relay.ts).
const serial = new SerialRelayBinding((event) => say(event));

const links = new Map<string, Promise<PlcLink | null>>();
let outbox: PlcWorkerEvent[] = [];
let send: ((batch: PlcWorkerBatch) => void) | null = null;

function say(event: PlcWorkerEvent): void {
  outbox.push(event);
  if (outbox.length > 1) return;
  setImmediate(() => {
    const events = outbox;
    outbox = [];
    send?.({events});
  });
}

const wire = (reading: PointReading): WireReading => ({...reading, readAt: reading.readAt.getTime()});

/** Only plain values cross: a field that does not clone (an Error, a function) would end the worker. */
function plain(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields ?? {}))
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) kept[key] = value;
    else kept[key] = value instanceof Error ? value.message : `(${typeof value})`;
  return kept;
}

/** A logger whose lines the gateway's thread writes, under the link's integration. */
function workerLogger(id: string | null, bound: Record<string, unknown> = {}): Logger {
  const line = (level: "debug" | "info" | "warn" | "error") => (message: string, fields?: Record<string, unknown>) =>
    say({type: "log", id, level, message, fields: plain({...bound, ...fields})});
  return {
    debug: line("debug"),
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    child: (fields) => workerLogger(id, {...bound, ...fields})
  };
}

function makeLink(integration: IntegrationRecord): PlcLink {
  const logger = workerLogger(integration.id);
  if (driver.modbus)
    return driver.modbus.createModbusLink(integration, {clock: systemClock, logger, serialBinding: serial});
  const opcua = integration.opcua!;
  return driver.opcua.createOpcUaLink(
    {
      endpointUrl: opcua.endpoint_url,
      securityMode: opcua.security_mode,
      securityPolicy: opcua.security_policy,
      user: opcua.user ?? null,
      password: opcua.password ?? null,
      alarms: opcua.alarms,
      points: (integration.points ?? []).map((point) => ({name: point.name, nodeId: point.node_id ?? ""}))
    },
    {clock: systemClock, log: logger, dataDir}
  );
}

function listenerOf(id: string): PlcLinkListener {
  return {
    reading: (reading) => say({type: "reading", id, ...wire(reading)}),
    link: (status) => say({type: "link", id, ...status}),
    alarm: (alarm) => say({type: "alarm", id, ...alarm, time: alarm.time.getTime()})
  };
}

function start(id: string, integration: IntegrationRecord): void {
  const previous = stop(id);
  const made = (async () => {
    await previous;
    try {
      const link = makeLink(integration);
      link.start(listenerOf(id));
      return link;
    } catch (error) {
      say({type: "link", id, state: "unreachable", error: `the link could not start: ${(error as Error).message}`});
      return null;
    }
  })();
  links.set(id, made);
}

async function stop(id: string): Promise<void> {
  const link = links.get(id);
  links.delete(id);
  await (await link)?.stop();
}

/** Runs a request and answers it; a failure is an answer in words, never a throw out of the worker. */
async function answer(request: number, work: () => Promise<readonly PointReading[] | void>): Promise<void> {
  try {
    const readings = (await work()) ?? [];
    say({type: "answer", request, error: null, readings: readings.map(wire)});
  } catch (error) {
    say({type: "answer", request, error: error instanceof Error ? error.message : String(error)});
  }
}

async function linkOf(id: string): Promise<PlcLink> {
  const link = await links.get(id);
  if (!link) throw new Error("the link is not running");
  return link;
}

serveSupervisedWork<PlcWorkerCommand, PlcWorkerBatch>(async (command, emit) => {
  send = emit;
  switch (command.op) {
    case "serial":
      return serial.received(command);
    case "start":
      return start(command.id, command.integration);
    case "stop":
      return answer(command.request, () => stop(command.id));
    case "read":
      return answer(command.request, async () => (await linkOf(command.id)).readNow());
    case "acknowledge":
      return answer(command.request, async () => {
        const link = await linkOf(command.id);
        if (!link.acknowledgeAlarm) throw new Error("this link cannot acknowledge on the device");
        await link.acknowledgeAlarm(command.conditionId, command.by, command.comment);
      });
  }
});
