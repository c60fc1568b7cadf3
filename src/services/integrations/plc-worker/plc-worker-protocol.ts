import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {DeviceAlarm, LinkStatus, PointReading} from "../plc/plc-link.js";

// What crosses between the gateway's thread and the PLC link worker (plc-links.worker.ts): plain,
// structured-cloned data. Commands go in; batches of events come out, and the gateway's thread
// checks every event (`validPlcEvent`) before anything of it reaches the conditioning: the worker
// is as untrusted as the device replies it decodes (design rule 14).

/** The device kinds whose links run in a worker, one worker per kind. */
export type PlcKind = "modbus" | "opcua";

/** A Modbus RTU port the worker asks the gateway's thread to open (serial-relay.ts). */
export interface SerialOpen {
  port: number;
  path: string;
  baudRate: number;
  parity: "none" | "even" | "odd";
  stopBits: 1 | 2;
}

/** What the gateway's thread tells the worker of a relayed serial port: opened or not, bytes, closed. */
export interface SerialToWorker {
  op: "serial";
  port: number;
  event: "opened" | "failed" | "data" | "closed";
  data?: Uint8Array;
  error?: string;
  code?: string | null;
}

export type PlcWorkerCommand =
  | {op: "start"; id: string; integration: IntegrationRecord}
  | SerialToWorker
  | {op: "stop"; id: string; request: number}
  | {op: "read"; id: string; request: number}
  | {op: "acknowledge"; id: string; request: number; conditionId: string; by: string; comment: string};

/** A reading on the wire: the time as milliseconds since the epoch. */
export type WireReading = Omit<PointReading, "readAt"> & {readAt: number};

export type PlcWorkerEvent =
  | ({type: "reading"; id: string} & WireReading)
  | ({type: "link"; id: string} & LinkStatus)
  | ({type: "alarm"; id: string} & Omit<DeviceAlarm, "time"> & {time: number})
  | {type: "answer"; request: number; error: string | null; readings?: WireReading[]}
  | {type: "log"; id: string | null; level: "debug" | "info" | "warn" | "error"; message: string; fields: object}
  | ({type: "serial"; op: "open"} & SerialOpen)
  | {type: "serial"; op: "write"; port: number; data: Uint8Array}
  | {type: "serial"; op: "close"; port: number};

/** Events leave the worker in batches: one message per turn of its event loop, not one per reading. */
export interface PlcWorkerBatch {
  events: PlcWorkerEvent[];
}

/** What the worker is handed when it starts: its kind (the driver it loads) and where the OPC UA PKI lives. */
export interface PlcWorkerData {
  kind: PlcKind;
  dataDir: string;
}

// A device's strings (OPC UA messages, source names, errors quoting a reply) are cut to this.
const MAX_TEXT = 1_000;
const MAX_ID = 200;
const MAX_LOG_FIELDS = 20;
const LEVELS = new Set(["debug", "info", "warn", "error"]);
const QUALITIES = new Set(["good", "bad", "uncertain"]);
// Year 1970 to about 2255: a time outside it is no time a device could mean.
const MAX_TIME_MS = 9e12;

type Raw = Record<string, unknown>;

const text = (value: unknown, max = MAX_TEXT): string | null =>
  typeof value === "string" ? (value.length > max ? `${value.slice(0, max)}...` : value) : null;
const time = (value: unknown): Date | null =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= MAX_TIME_MS ? new Date(value) : null;

function pointValue(value: unknown): number | boolean | null | undefined {
  if (value === null || typeof value === "boolean") return value;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A reading's shape checked: a known quality, a finite number or a boolean (null only when bad). */
export function validReading(raw: unknown): PointReading | null {
  const reading = raw as Raw;
  const point = text(reading?.point, MAX_ID);
  const value = pointValue(reading?.value);
  const readAt = time(reading?.readAt);
  const quality = reading?.quality as PointReading["quality"];
  if (point === null || value === undefined || readAt === null || !QUALITIES.has(quality)) return null;
  if ((value === null) !== (quality === "bad")) return null;
  return {point, value, quality, readAt};
}

function validLink(event: Raw): LinkStatus | null {
  if (event.state !== "connected" && event.state !== "unreachable") return null;
  const error = event.error === undefined ? undefined : text(event.error);
  if (error === null) return null;
  return error === undefined ? {state: event.state} : {state: event.state, error};
}

function validAlarm(event: Raw): DeviceAlarm | null {
  const conditionId = text(event.conditionId, MAX_ID);
  const message = text(event.message);
  const source = text(event.source, MAX_ID);
  const at = time(event.time);
  const {active, acknowledged, severity} = event;
  if (conditionId === null || message === null || source === null || at === null) return null;
  if (typeof active !== "boolean" || typeof acknowledged !== "boolean") return null;
  if (typeof severity !== "number" || !Number.isFinite(severity)) return null;
  return {
    conditionId,
    active,
    acknowledged,
    severity: Math.min(1000, Math.max(1, severity)),
    message,
    source,
    time: at,
    // Who acknowledged at the SCADA, and what they wrote: optional, dropped when not text.
    acknowledgedBy: text(event.acknowledgedBy, MAX_ID) ?? undefined,
    comment: text(event.comment) ?? undefined
  };
}

/** Log fields kept to a few short plain values: nothing the worker sends can flood or break the log. */
function logFields(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null) return {};
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw).slice(0, MAX_LOG_FIELDS)) {
    if (typeof value === "number" || typeof value === "boolean" || value === null) fields[key.slice(0, MAX_ID)] = value;
    else if (typeof value === "string") fields[key.slice(0, MAX_ID)] = text(value);
  }
  return fields;
}

/** One event of the worker, checked and bounded as the conditioning and the log take it; null when malformed. */
export type ValidPlcEvent =
  | {type: "reading"; id: string; reading: PointReading}
  | {type: "link"; id: string; status: LinkStatus}
  | {type: "alarm"; id: string; alarm: DeviceAlarm}
  | {type: "answer"; request: number; error: string | null; readings: PointReading[]}
  | {
      type: "log";
      id: string | null;
      level: "debug" | "info" | "warn" | "error";
      message: string;
      fields: Record<string, unknown>;
    }
  | {type: "serial"; op: "open"; open: SerialOpen}
  | {type: "serial"; op: "write"; port: number; data: Uint8Array}
  | {type: "serial"; op: "close"; port: number};

// A Modbus RTU frame is at most 256 bytes; a write is one frame.
const MAX_SERIAL_WRITE = 256;
const PARITIES = new Set(["none", "even", "odd"]);

/** A relayed serial port's request checked: a port number, a frame's bytes, settings a UART takes. */
function validSerial(event: Raw): ValidPlcEvent | null {
  const {port} = event;
  if (!Number.isSafeInteger(port)) return null;
  const number = port as number;
  if (event.op === "close") return {type: "serial", op: "close", port: number};
  if (event.op === "write")
    return event.data instanceof Uint8Array && event.data.length <= MAX_SERIAL_WRITE
      ? {type: "serial", op: "write", port: number, data: event.data}
      : null;
  const path = text(event.path, 4_096);
  const {baudRate, parity, stopBits} = event;
  if (event.op !== "open" || path === null || !Number.isSafeInteger(baudRate)) return null;
  if ((baudRate as number) < 50 || (baudRate as number) > 4_000_000 || !PARITIES.has(parity as string)) return null;
  if (stopBits !== 1 && stopBits !== 2) return null;
  const open: SerialOpen = {
    port: number,
    path,
    baudRate: baudRate as number,
    parity: parity as SerialOpen["parity"],
    stopBits: stopBits
  };
  return {type: "serial", op: "open", open};
}

export function validPlcEvent(raw: unknown): ValidPlcEvent | null {
  if (typeof raw !== "object" || raw === null) return null;
  const event = raw as Raw;
  const id = text(event.id, MAX_ID);
  switch (event.type) {
    case "reading": {
      const reading = validReading(event);
      return id !== null && reading ? {type: "reading", id, reading} : null;
    }
    case "link": {
      const status = validLink(event);
      return id !== null && status ? {type: "link", id, status} : null;
    }
    case "alarm": {
      const alarm = validAlarm(event);
      return id !== null && alarm ? {type: "alarm", id, alarm} : null;
    }
    case "answer": {
      const error = event.error === null ? null : text(event.error);
      const readings = Array.isArray(event.readings) ? event.readings.map(validReading) : [];
      if (!Number.isSafeInteger(event.request) || (event.error !== null && error === null)) return null;
      if (readings.some((reading) => reading === null)) return null;
      return {type: "answer", request: event.request as number, error, readings: readings as PointReading[]};
    }
    case "log": {
      const message = text(event.message);
      if (message === null || !LEVELS.has(event.level as string) || (event.id !== null && id === null)) return null;
      const level = event.level as "debug" | "info" | "warn" | "error";
      return {type: "log", id, level, message, fields: logFields(event.fields)};
    }
    case "serial":
      return validSerial(event);
    default:
      return null;
  }
}
