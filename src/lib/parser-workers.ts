import type {SupervisedWorkerStats} from "./supervised-worker.js";

/** One parser worker as /metrics and /readyz show it: its supervisor's counters and the door's own. */
export interface ParserWorkerReport extends SupervisedWorkerStats {
  /** Counters of the door it serves (SNMP: datagrams, replays_refused), by name. */
  counters: Record<string, number>;
}

/**
 * The gateway's supervised parser workers (SNMP, MIME, MQTT), for /metrics and /readyz: a door
 * registers how to read its worker's report when its listener starts (a stopped listener
 * reports nothing). Made once by the gateway before the doors open, so the metrics and readiness built
 * earlier see every worker that comes later.
 */
export class ParserWorkers {
  private readonly sources = new Map<string, () => ParserWorkerReport | null>();

  register(name: string, read: () => ParserWorkerReport | null): void {
    this.sources.set(name, read);
  }

  reports(): ParserWorkerReport[] {
    return [...this.sources.values()].flatMap((read) => read() ?? []);
  }
}
