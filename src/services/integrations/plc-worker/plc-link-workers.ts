import type {Logger} from "../../../lib/logger.js";
import type {ParserWorkerReport} from "../../../lib/parser-workers.js";
import {SupervisedWorker, workerModule, type WorkerCrash} from "../../../lib/supervised-worker.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {PlcLink, PlcLinkListener, PointReading} from "../plc/plc-link.js";
import {
  validPlcEvent,
  type PlcKind,
  type PlcWorkerBatch,
  type PlcWorkerCommand,
  type PlcWorkerData,
  type SerialOpen,
  type SerialToWorker,
  type ValidPlcEvent
} from "./plc-worker-protocol.js";
import {SerialRelay} from "./serial-relay.js";

// node-opcua's client with its sessions needs more heap than a parser; a Modbus worker stays small.
const HEAP_MB: Record<PlcKind, number> = {modbus: 64, opcua: 128};
// A worker that loads its driver on a busy two-core box can miss a beat or two: a hang is 10 s of silence.
const HANG_AFTER_MS = 10_000;
// A stop or a request the worker does not answer (it is restarting) is given up after this.
const ANSWER_TIMEOUT_MS = 30_000;
// A worker that could not even load is tried again after this while links want it.
const LOAD_RETRY_MS = 30_000;

const CRASH_WORDS: Record<WorkerCrash["kind"], string> = {
  throw: "it threw",
  hang: "it hung (no heartbeat)",
  memory: "it ran out of memory",
  exit: "it ended"
};

type Request = Exclude<PlcWorkerCommand, {op: "start"} | SerialToWorker>;

interface Pending {
  command: Request;
  /** Handed to a worker; false while none is ready (starting, or restarting after a crash). */
  posted: boolean;
  resolve(readings: PointReading[]): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The PLC links of one kind behind a bulkhead (design rule 14): one supervised worker thread runs
 * every Modbus (or every OPC UA) link; this side hands it the links' configurations and requests
 * and checks every event that comes back before a watch sees it. The worker starts with the first
 * link of its kind (an idle gateway runs none). When it crashes or hangs, its links are told
 * "unreachable" in words at once (so an outage that lasts pages as any unreachable device does),
 * requests in flight fail, and once the supervisor's fresh worker is ready every link is started
 * in it again and reports "connected" when its device answers.
 */
class PlcLinkWorker {
  private readonly worker: SupervisedWorker<PlcWorkerCommand, PlcWorkerBatch>;
  private readonly links = new Map<string, {integration: IntegrationRecord; listener: PlcLinkListener}>();
  private readonly pending = new Map<number, Pending>();
  private starting: Promise<void> | null = null;
  private ready = false;
  private nextRequest = 0;
  private retry: NodeJS.Timeout | null = null;
  /** Events refused because they were malformed or out of bounds. */
  private refused = 0;
  private readonly serial: SerialRelay;

  constructor(
    readonly kind: PlcKind,
    dataDir: string,
    private readonly logger: Logger
  ) {
    this.worker = new SupervisedWorker<PlcWorkerCommand, PlcWorkerBatch>({
      name: `plc-${kind}`,
      module: workerModule(import.meta.url, "./plc-links.worker"),
      data: {kind, dataDir} satisfies PlcWorkerData,
      logger,
      onEvent: (batch) => this.received(batch),
      onCrash: (crash) => this.crashed(crash),
      onReady: () => this.started(),
      resourceLimits: {maxOldGenerationSizeMb: HEAP_MB[kind], maxYoungGenerationSizeMb: 16, stackSizeMb: 4},
      hangAfterMs: HANG_AFTER_MS
    });
    this.serial = new SerialRelay((message) => void this.worker.post(message), logger);
  }

  attach(id: string, integration: IntegrationRecord, listener: PlcLinkListener): void {
    this.links.set(id, {integration, listener});
    if (this.ready) this.worker.post({op: "start", id, integration});
    else this.start();
  }

  async detach(id: string): Promise<void> {
    if (!this.links.delete(id) || !this.ready) return;
    await this.request({op: "stop", id}).catch(() => undefined);
  }

  /** A request waits for a worker that is (re)starting, up to the answer timeout. */
  request(
    command:
      | {op: "stop" | "read"; id: string}
      | {op: "acknowledge"; id: string; conditionId: string; by: string; comment: string}
  ): Promise<PointReading[]> {
    return new Promise((resolve, reject) => {
      const request = ++this.nextRequest;
      const timer = setTimeout(
        () => this.settle(request, new Error("the PLC link worker did not answer in time")),
        ANSWER_TIMEOUT_MS
      );
      timer.unref();
      this.pending.set(request, {command: {...command, request}, posted: false, resolve, reject, timer});
      if (this.ready) this.post(request);
    });
  }

  report(): ParserWorkerReport | null {
    return this.starting ? {...this.worker.stats(), counters: {refused_events: this.refused}} : null;
  }

  /** Ends the worker as a crash would: what a test does to prove the bulkhead. */
  terminate(): Promise<void> {
    return this.worker.terminate();
  }

  async stop(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    if (this.starting) await this.starting;
    this.ready = false;
    this.serial.closeAll();
    await this.worker.stop();
    for (const request of [...this.pending.keys()]) this.settle(request, new Error("the gateway is stopping"));
  }

  private start(): void {
    this.starting ??= this.worker.start().catch((error: Error) => {
      this.logger.error("the PLC link worker cannot start; tried again later", {kind: this.kind, error: error.message});
      this.tellAll(`the PLC link worker cannot start: ${error.message}`);
      this.retry = setTimeout(() => {
        this.retry = this.starting = null;
        if (this.links.size) this.start();
      }, LOAD_RETRY_MS);
      this.retry.unref();
    });
  }

  private started(): void {
    this.ready = true;
    for (const [id, {integration}] of this.links) this.worker.post({op: "start", id, integration});
    for (const [request, pending] of this.pending) if (!pending.posted) this.post(request);
  }

  private post(request: number): void {
    const pending = this.pending.get(request)!;
    pending.posted = true;
    if (!this.worker.post(pending.command)) this.settle(request, new Error("the PLC link worker is busy"));
  }

  private crashed(crash: WorkerCrash): void {
    this.ready = false;
    this.serial.closeAll();
    const words = `PLC link worker restarted: ${CRASH_WORDS[crash.kind]} (${crash.detail}); reconnecting in ${crash.restartInMs} ms`;
    // What the ended worker held is lost with it; what waits for a worker goes to the next one.
    for (const [request, pending] of [...this.pending]) if (pending.posted) this.settle(request, new Error(words));
    this.tellAll(words);
  }

  private tellAll(error: string): void {
    for (const {listener} of this.links.values())
      this.tell(listener, (each) => each.link({state: "unreachable", error}));
  }

  private received(batch: PlcWorkerBatch): void {
    const events = Array.isArray((batch as {events?: unknown} | null)?.events) ? batch.events : [];
    for (const raw of events) {
      const event = validPlcEvent(raw);
      if (event) this.handle(event);
      else this.refused++;
    }
  }

  private handle(event: ValidPlcEvent): void {
    if (event.type === "answer")
      return this.settle(event.request, event.error === null ? event.readings : new Error(event.error));
    if (event.type === "serial") return this.relay(event);
    const link = event.id === null ? null : this.links.get(event.id);
    if (event.type === "log") {
      const logger = link ? this.logger.child({integration: link.integration.name}) : this.logger;
      return logger[event.level](event.message, event.fields);
    }
    if (!link) return;
    if (event.type === "reading") this.tell(link.listener, (listener) => listener.reading(event.reading));
    else if (event.type === "link") this.tell(link.listener, (listener) => listener.link(event.status));
    else this.tell(link.listener, (listener) => listener.alarm?.(event.alarm));
  }

  private relay(event: Extract<ValidPlcEvent, {type: "serial"}>): void {
    if (event.op === "write") return this.serial.write(event.port, event.data);
    if (event.op === "close") return this.serial.close(event.port);
    if (this.configuredPort(event.open)) return this.serial.open(event.open);
    // The worker is as untrusted as the devices: it opens only a serial port an integration names.
    this.worker.post({op: "serial", port: event.open.port, event: "failed", error: "not a configured serial port"});
  }

  private configuredPort(open: SerialOpen): boolean {
    return [...this.links.values()].some(({integration}) => integration.modbus?.serial_port === open.path);
  }

  private settle(request: number, outcome: PointReading[] | Error): void {
    const pending = this.pending.get(request);
    if (!pending) return;
    this.pending.delete(request);
    clearTimeout(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  /** A watch that throws must not stop the other links' events. */
  private tell(listener: PlcLinkListener, call: (listener: PlcLinkListener) => void): void {
    try {
      call(listener);
    } catch (error) {
      this.logger.error("a PLC link event could not be handled", {error: (error as Error).message});
    }
  }
}

/**
 * The PLC links of the gateway, each a handle on a link that runs in its kind's worker
 * (plc-links.worker.ts): one worker for the Modbus links, one for the OPC UA links, each started
 * only when a link of its kind is (docs/integrations.md, "Where the links run").
 */
export class PlcLinkWorkers {
  private readonly workers = new Map<PlcKind, PlcLinkWorker>();

  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger
  ) {}

  linkFor(integration: IntegrationRecord): PlcLink {
    const worker = this.workerOf(integration.kind as PlcKind);
    const id = integration.id;
    return {
      start: (listener) => worker.attach(id, integration, listener),
      readNow: () => worker.request({op: "read", id}),
      acknowledgeAlarm: async (conditionId, by, comment) => {
        await worker.request({op: "acknowledge", id, conditionId, by, comment});
      },
      stop: () => worker.detach(id)
    };
  }

  /** Each running worker's supervisor counters, for /metrics and /readyz (parser_workers). */
  report(kind: PlcKind): ParserWorkerReport | null {
    return this.workers.get(kind)?.report() ?? null;
  }

  /** Ends a kind's worker as a crash would (tests prove the bulkhead with it). */
  async terminate(kind: PlcKind): Promise<void> {
    await this.workers.get(kind)?.terminate();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.workers.values()].map((worker) => worker.stop()));
  }

  private workerOf(kind: PlcKind): PlcLinkWorker {
    let worker = this.workers.get(kind);
    if (!worker) {
      worker = new PlcLinkWorker(kind, this.dataDir, this.logger.child({plc_worker: kind}));
      this.workers.set(kind, worker);
    }
    return worker;
  }
}
