import modbusSerial from "modbus-serial";
import type {ModbusRTU} from "modbus-serial/ModbusRTU.js";
import type {Clock} from "../../../lib/clock.js";
import type {Logger} from "../../../lib/logger.js";
import {ReconnectBackoff} from "../../../lib/reconnect-backoff.js";
import {
  isBitTable,
  modbusExceptionText,
  planReads,
  pointValue,
  rawValue,
  type ModbusPoint,
  type ModbusRead
} from "../../../domain/plc/modbus-points.js";
import {modbusPointOf, PLC_DEFAULTS} from "../../../domain/plc/plc-integration.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {LinkStatus, PlcLink, PlcLinkListener, PointReading} from "../plc/plc-link.js";

/** Where a Modbus device is: TCP (a PLC, a gateway to an RS-485 line) or RTU on a serial port. */
export type ModbusTransport =
  | {kind: "tcp"; host: string; port: number}
  | {kind: "rtu"; path: string; baudRate: number; parity: "none" | "even" | "odd"; stopBits: 1 | 2};

/** One Modbus device and the points read from it. */
export interface ModbusLinkConfig {
  transport: ModbusTransport;
  unitId: number;
  pollIntervalMs: number;
  /** How long a connect or one request may take before the device counts as not answering. */
  timeoutMs: number;
  points: readonly ModbusPoint[];
}

/** What a Modbus link is given. */
export interface ModbusLinkDeps {
  clock: Clock;
  logger: Logger;
  /**
   * The serialport binding an RTU port is opened with (serialport's native one when absent). In
   * the PLC link worker it relays the bytes through the gateway's thread, since the native binding
   * cannot run in a worker (plc-worker/serial-relay.ts).
   */
  serialBinding?: unknown;
}

/** The longest wait between reconnect attempts. */
const MAX_BACKOFF_MS = 30_000;

type ReadResult = {data: (number | boolean)[]};

// The package is CommonJS whose module.exports is the client class; its typings call that the default export's `default`.
const ModbusClient = modbusSerial as unknown as new () => ModbusRTU;

/**
 * One connection per device, polled every pollIntervalMs with the points batched into as few
 * requests as the addresses allow; one request in flight at a time (RTU allows no other, and a
 * small PLC answers one TCP client's requests in turn anyway). A device that does not answer is
 * closed and reconnected with back-off (lib/reconnect-backoff.ts: from 2 poll intervals, doubling up to 10, at most 30 s); every
 * wait is a timer, so a dead device never holds up another link.
 */
export class ModbusLink implements PlcLink {
  private client: ModbusRTU | null = null;
  private listener: PlcLinkListener | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** The pause before the next cycle: the poll interval, or a reconnect back-off while the device is gone. */
  private nextPauseMs: number;
  private readonly backoff: ReconnectBackoff;
  private readonly reads: ModbusRead[];

  constructor(
    private readonly config: ModbusLinkConfig,
    private readonly deps: ModbusLinkDeps
  ) {
    this.reads = planReads(config.points);
    this.nextPauseMs = config.pollIntervalMs;
    this.backoff = new ReconnectBackoff({
      firstMs: config.pollIntervalMs * 2,
      maxMs: Math.min(config.pollIntervalMs * 10, MAX_BACKOFF_MS)
    });
  }

  start(listener: PlcLinkListener): void {
    this.listener = listener;
    this.schedule(0);
  }

  readNow(): Promise<readonly PointReading[]> {
    return this.serially(() => this.cycle());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.busy.catch(() => undefined);
    this.disconnect();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.serially(() => this.cycle()).then(() => this.schedule(this.nextPauseMs));
    }, delayMs);
    this.timer.unref();
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.busy.then(work, work);
    this.busy = next.catch(() => undefined);
    return next;
  }

  /** Connects if need be, then reads every batch; never throws (failures become bad readings and the link's status). */
  private async cycle(): Promise<PointReading[]> {
    if (this.stopped) return [];
    let failure: string | null = null;
    const readings: PointReading[] = [];
    try {
      const client = await this.connected();
      for (const read of this.reads) {
        try {
          readings.push(...this.decode(read, await this.request(client, read)));
        } catch (error) {
          const code = (error as {modbusCode?: number}).modbusCode;
          if (code === undefined) throw error;
          // The device answered, with an exception: the connection is fine, these points are not.
          failure ??= `${modbusExceptionText(code)}, reading ${describe(read)}`;
          readings.push(...this.bad(read));
        }
      }
    } catch (error) {
      failure = `${this.where()}: ${words(error as Error)}`;
      this.disconnect();
      readings.splice(0, readings.length, ...this.reads.flatMap((read) => this.bad(read)));
    }
    if (failure && !this.client) this.nextPauseMs = this.backoff.failed();
    else {
      this.backoff.succeeded();
      this.nextPauseMs = this.config.pollIntervalMs;
    }
    this.report(readings, failure ? {state: "unreachable", error: failure} : {state: "connected"});
    return readings;
  }

  private report(readings: PointReading[], status: LinkStatus): void {
    if (!this.listener || this.stopped) return;
    try {
      for (const reading of readings) this.listener.reading(reading);
      this.listener.link(status);
    } catch (error) {
      this.deps.logger.error("a Modbus reading could not be handled", {error: (error as Error).message});
    }
  }

  private async connected(): Promise<ModbusRTU> {
    if (this.client?.isOpen) return this.client;
    this.disconnect();
    const client = new ModbusClient();
    // A socket or port error after the connect shows up as the next request's failure.
    client.on("error", () => undefined);
    const {transport} = this.config;
    const connecting =
      transport.kind === "tcp"
        ? client.connectTCP(transport.host, {port: transport.port, timeout: this.config.timeoutMs})
        : client.connectRTUBuffered(transport.path, {
            baudRate: transport.baudRate,
            parity: transport.parity,
            stopBits: transport.stopBits,
            dataBits: 8,
            ...(this.deps.serialBinding ? {binding: this.deps.serialBinding} : {})
          });
    this.client = client;
    await withTimeout(connecting, this.config.timeoutMs, "no answer to the connection");
    client.setID(this.config.unitId);
    client.setTimeout(this.config.timeoutMs);
    return client;
  }

  private request(client: ModbusRTU, read: ModbusRead): Promise<ReadResult> {
    switch (read.table) {
      case "coil":
        return client.readCoils(read.address, read.count);
      case "discrete_input":
        return client.readDiscreteInputs(read.address, read.count);
      case "holding_register":
        return client.readHoldingRegisters(read.address, read.count);
      case "input_register":
        return client.readInputRegisters(read.address, read.count);
    }
  }

  private decode(read: ModbusRead, result: ReadResult): PointReading[] {
    // A reply shorter than the request is a confused device or line: never read zeros from it.
    if (!Array.isArray(result.data) || result.data.length < read.count)
      throw new Error(
        `the device answered ${result.data?.length ?? 0} values for the ${read.count} asked (${describe(read)})`
      );
    const readAt = new Date(this.deps.clock.now());
    return read.points.map((point) => {
      const value = pointValue(point, rawValue(point, read, result.data));
      // A float32 NaN is a device's "no value": shown as a bad reading, never compared with a limit.
      if (typeof value === "number" && !Number.isFinite(value))
        return {point: point.name, value: null, quality: "bad", readAt};
      return {point: point.name, value, quality: "good", readAt};
    });
  }

  private bad(read: ModbusRead): PointReading[] {
    const readAt = new Date(this.deps.clock.now());
    return read.points.map((point) => ({point: point.name, value: null, quality: "bad", readAt}));
  }

  private where(): string {
    const {transport} = this.config;
    return transport.kind === "tcp" ? `${transport.host}:${transport.port}` : transport.path;
  }

  private disconnect(): void {
    const client = this.client;
    this.client = null;
    if (client?.isOpen) client.close(() => undefined);
    else (client as {destroy?: (done: () => void) => void} | null)?.destroy?.(() => undefined);
  }
}

function describe(read: ModbusRead): string {
  const last = read.address + read.count - 1;
  const span = isBitTable(read.table) || read.count > 1 ? `${read.address}-${last}` : `${read.address}`;
  return `${read.table} ${span} (${read.points.map((point) => point.name).join(", ")})`;
}

/** A connection or request failure in words. */
function words(error: Error & {code?: string; errno?: string}): string {
  const code = error.code ?? error.errno;
  if (code === "ECONNREFUSED")
    return "connection refused (nothing listens on the port; is the device on and Modbus TCP enabled?)";
  if (code === "ETIMEDOUT" || /timed out/i.test(error.message)) return "no answer in time (timeout)";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "the device's network cannot be reached";
  if (code === "ENOENT") return "no such serial port (is the adapter plugged in?)";
  if (code === "EACCES") return "permission denied on the serial port (add the service user to the dialout group)";
  if (/port not open/i.test(error.message)) return "the connection was lost";
  return error.message;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(what), {code: "ETIMEDOUT"})), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The Modbus link the PLC wiring starts for a modbus integration, its settings' defaults filled in. */
export function createModbusLink(integration: IntegrationRecord, deps: ModbusLinkDeps): PlcLink {
  const modbus = integration.modbus ?? {};
  const transport: ModbusTransport = modbus.serial_port
    ? {
        kind: "rtu",
        path: modbus.serial_port,
        baudRate: modbus.baud_rate ?? PLC_DEFAULTS.baud_rate,
        parity: modbus.parity ?? PLC_DEFAULTS.parity,
        stopBits: modbus.stop_bits ?? PLC_DEFAULTS.stop_bits
      }
    : {kind: "tcp", host: modbus.host ?? "", port: modbus.port ?? PLC_DEFAULTS.port};
  const pollIntervalMs = modbus.poll_interval_ms ?? PLC_DEFAULTS.poll_interval_ms;
  return new ModbusLink(
    {
      transport,
      unitId: modbus.unit_id ?? PLC_DEFAULTS.unit_id,
      pollIntervalMs,
      timeoutMs: modbus.timeout_ms ?? Math.min(PLC_DEFAULTS.timeout_ms, Math.max(pollIntervalMs, 200)),
      points: (integration.points ?? []).map(modbusPointOf)
    },
    deps
  );
}
