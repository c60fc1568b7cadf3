import type {Logger} from "../../../lib/logger.js";
import type {ParserWorkerReport} from "../../../lib/parser-workers.js";
import {
  SupervisedWorker,
  workerModule,
  type SupervisedWorkerOptions,
  type SupervisedWorkerStats
} from "../../../lib/supervised-worker.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {
  MqttMapping,
  MqttMappingEvent,
  MqttMappingItem,
  MqttMappingResult,
  MqttMappingWork
} from "./mqtt-mapping.js";

/** What the mapping of one message gave: its mapping, or why it is refused. */
export type MappedMessage = {mapping: MqttMapping} | {refused: string};

/** Maps one MQTT message of an integration (mqtt-mapping.ts), off the main thread. */
export type MqttMap = (integration: IntegrationRecord, topic: string, payload: string) => Promise<MappedMessage>;

interface Item {
  work: MqttMappingItem;
  integration: IntegrationRecord;
  resolve: (result: MappedMessage) => void;
  reject: (error: Error) => void;
}

/**
 * Messages go to the worker in batches (one postMessage, one structured clone of each
 * integration per batch, not per message), at most this many messages in the worker at once.
 */
const BATCH = 64;
const MAX_IN_FLIGHT = 256;
const ACTIONS = new Set(["fire", "resolve", "heartbeat"]);

/** The answer's shape checked before it is trusted: the worker is as untrusted as the payloads it reads. */
function validMapping(value: unknown): MqttMapping | null {
  const mapping = value as MqttMapping | null;
  if (typeof mapping !== "object" || mapping === null || !Array.isArray(mapping.actions)) return null;
  if (mapping.note !== null && typeof mapping.note !== "string") return null;
  const sound = mapping.actions.every(
    (action) =>
      typeof action === "object" &&
      action !== null &&
      ACTIONS.has(action.action) &&
      typeof action.alert_id === "string" &&
      (action.action !== "fire" || (typeof action.message === "string" && typeof action.priority === "string"))
  );
  return sound ? mapping : null;
}

/**
 * The MQTT mapping behind a bulkhead (design rule 14): JSON parsing, pointers and the rules'
 * regexes run in a supervised worker thread. A throw, a hang or runaway memory there ends the
 * worker (logged and counted by the supervisor, restarted with back-off), and the messages it
 * held are mapped again one at a time in the next worker, so the one that ended it is found and
 * refused alone while the others go through. Answers keep the order messages were handed in.
 */
export class SupervisedMqttMapper {
  private readonly worker: SupervisedWorker<MqttMappingWork, MqttMappingEvent>;
  private starting: Promise<void> | null = null;
  private nextId = 0;
  private readonly waiting: Item[] = [];
  private readonly inFlight = new Map<number, Item>();
  private ready = false;
  private pumpScheduled = false;
  /** Messages a crashed worker held, still to be mapped one by one. */
  private suspects = 0;
  /** Messages refused because a worker ended while mapping them alone. */
  poisoned = 0;

  /** `worker` changes the supervisor's limits, or (tests) the module that maps. */
  constructor(
    logger: Logger,
    worker: Partial<
      Pick<SupervisedWorkerOptions<MqttMappingEvent>, "module" | "hangAfterMs" | "backoff" | "resourceLimits">
    > = {}
  ) {
    this.worker = new SupervisedWorker<MqttMappingWork, MqttMappingEvent>({
      name: "mqtt-mapper",
      module: workerModule(import.meta.url, "./mqtt-mapping.worker"),
      logger,
      onEvent: (event) => this.answered(event),
      onCrash: () => this.crashed(),
      onReady: () => {
        this.ready = true;
        this.pump();
      },
      ...worker
    });
  }

  readonly map: MqttMap = (integration, topic, payload) =>
    new Promise<MappedMessage>((resolve, reject) => {
      const work = {id: ++this.nextId, integrationId: integration.id, topic, payload};
      this.waiting.push({work, integration, resolve, reject});
      void this.start();
      // Messages that arrive in the same turn of the event loop go in one batch.
      if (this.pumpScheduled) return;
      this.pumpScheduled = true;
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    });

  /** Starts the worker unless it runs; resolves once it is ready (or could not start: then messages fail). */
  start(): Promise<void> {
    this.starting ??= this.worker.start().catch((error: Error) => this.unavailable(error));
    return this.starting;
  }

  stats(): SupervisedWorkerStats {
    return this.worker.stats();
  }

  /** For /metrics and /readyz (lib/parser-workers.ts): nothing until the first MQTT integration starts it. */
  report(): ParserWorkerReport | null {
    return this.starting ? {...this.worker.stats(), counters: {poisoned: this.poisoned}} : null;
  }

  async stop(): Promise<void> {
    if (this.starting) await this.starting.catch(() => undefined);
    await this.worker.stop();
  }

  /**
   * No worker could even load: the messages are not refused (they may be alarms) but fail, so the
   * client leaves them unacknowledged and the broker delivers them again; the next one tries again.
   */
  private unavailable(error: Error): void {
    this.starting = null;
    for (const item of this.waiting.splice(0))
      item.reject(new Error(`the MQTT mapping worker cannot start: ${error.message}`));
  }

  private pump(): void {
    if (!this.ready) return;
    // After a crash the messages it held go one at a time, until the one that ended it is found.
    const batch = this.suspects > 0 ? 1 : BATCH;
    const limit = this.suspects > 0 ? 1 : MAX_IN_FLIGHT;
    while (this.waiting.length && this.inFlight.size < limit) {
      const items = this.waiting.splice(0, Math.min(batch, limit - this.inFlight.size));
      const integrations: MqttMappingWork["integrations"] = {};
      for (const {integration} of items) {
        // Its password is of no use to the mapping, and stays on this thread.
        const {password: _password, ...record} = integration as IntegrationRecord & {password?: unknown};
        integrations[integration.id] = record;
      }
      if (!this.worker.post({integrations, items: items.map((item) => item.work)})) {
        this.waiting.unshift(...items);
        return;
      }
      for (const item of items) this.inFlight.set(item.work.id, item);
    }
  }

  private answered(event: MqttMappingEvent): void {
    for (const result of Array.isArray(event?.results) ? event.results : []) this.settle(result);
    this.pump();
  }

  private settle(result: MqttMappingResult): void {
    const item = this.inFlight.get(result?.id);
    if (!item) return;
    this.inFlight.delete(result.id);
    if (this.suspects > 0) this.suspects--;
    if ("invalid" in result) item.resolve({refused: String(result.invalid)});
    else {
      const mapping = validMapping(result.mapping);
      item.resolve(mapping ? {mapping} : {refused: "the mapping worker gave an answer of the wrong shape"});
    }
  }

  private crashed(): void {
    this.ready = false;
    const held = [...this.inFlight.values()];
    this.inFlight.clear();
    if (this.suspects > 0 && held.length === 1) {
      // Alone in the worker when it ended: this message ended it.
      this.suspects--;
      this.poisoned++;
      held[0].resolve({refused: "the mapping worker ended while mapping this message (see the gateway's log)"});
      return;
    }
    this.suspects += held.length;
    this.waiting.unshift(...held);
  }
}
