import type {Clock} from "../../../lib/clock.js";
import type {Logger} from "../../../lib/logger.js";
import {PeriodicTask} from "../../../lib/periodic-task.js";
import type {IntegrationRecord} from "../../../store/config/config-store.js";
import type {IntegrationsRepository} from "../../../store/config/repositories.js";
import {invalid, notFound} from "../../shared/errors.js";
import type {PlcLink} from "./plc-link.js";
import {PLC_FIELDS, PLC_KINDS, type LinkView, type PlcLiveState} from "./plc-settings.js";
import {PlcWatch, type PlcWatchDeps} from "./plc-watch.js";

/** What the PLC links work with. */
export interface PlcLinksDeps extends Omit<PlcWatchDeps, "logger" | "acknowledgeOnDevice"> {
  integrations: IntegrationsRepository;
  /** Makes the link of a modbus or opcua integration (it runs in its kind's worker) and ends them all at shutdown. */
  links: {linkFor(integration: IntegrationRecord): PlcLink; stop(): Promise<void>};
  clock: Clock;
}

/** A PLC integration's link as /readyz, /metrics and the dashboard list it. */
export interface PlcLinkState extends LinkView {
  integration_id: string;
  name: string;
  kind: string;
}

interface Running {
  fingerprint: string;
  watch: PlcWatch;
  link: PlcLink | null;
}

// Only what the link itself reads: a new name or target needs no reconnect.
const linkFingerprint = (integration: IntegrationRecord) =>
  JSON.stringify([integration.kind, integration.default_priority, ...PLC_FIELDS.map((field) => integration[field])]);

/**
 * One link per modbus or opcua integration, started, restarted or stopped to match the stored
 * integrations (`sync`, after every change), each with its watch; a tick each second lets alarm
 * delays run out and pages devices that stopped answering. The links themselves (the device's
 * bytes) run in a supervised worker (plc-link-workers.ts); the watches, which page, run here. A
 * link that cannot even start (a worker that fails to load) leaves its integration unreachable,
 * which pages in time.
 */
export class PlcLinksService {
  private readonly running = new Map<string, Running>();
  private syncing: Promise<void> = Promise.resolve();
  private readonly ticker: PeriodicTask;

  constructor(
    private readonly deps: PlcLinksDeps,
    private readonly logger: Logger
  ) {
    this.ticker = new PeriodicTask("plc-watch", 1000, () => this.tick(), logger);
  }

  async start(): Promise<void> {
    await this.sync();
    this.ticker.start();
  }

  async stop(): Promise<void> {
    await this.ticker.stop();
    await this.syncing;
    await Promise.all([...this.running.keys()].map((id) => this.end(id)));
    await this.deps.links.stop();
  }

  tick(): void {
    for (const {watch} of this.running.values()) watch.tick();
  }

  /** Starts, restarts or stops links to match the integrations now stored. */
  sync(): Promise<void> {
    this.syncing = this.syncing
      .then(() => this.syncNow())
      .catch((error: unknown) =>
        this.logger.error("PLC links could not be updated", {error: (error as Error).message})
      );
    return this.syncing;
  }

  state(integrationId: string): PlcLiveState | null {
    return this.running.get(integrationId)?.watch.live() ?? null;
  }

  links(): PlcLinkState[] {
    return [...this.running.entries()].flatMap(([id, {watch}]) => {
      const integration = this.deps.integrations.get(id);
      return integration
        ? [{integration_id: id, name: integration.name, kind: integration.kind, ...watch.live().link}]
        : [];
    });
  }

  /** Reads every point of the integration now, through its link, and answers the state that follows. */
  async readNow(integrationId: string): Promise<PlcLiveState> {
    const integration = this.deps.integrations.get(integrationId);
    if (!integration) throw notFound("integration", integrationId);
    if (!PLC_KINDS.includes(integration.kind))
      throw invalid([{pointer: "/id", detail: `a ${integration.kind} integration has no device to read`}]);
    await this.syncing;
    const running = this.running.get(integrationId);
    if (running?.link) await running.link.readNow();
    return running?.watch.live() ?? {link: {state: "unreachable", since: "", last_error: "not started"}, points: {}};
  }

  private async syncNow(): Promise<void> {
    const wanted = new Map(
      this.deps.integrations
        .all()
        .filter((integration) => PLC_KINDS.includes(integration.kind))
        .map((integration) => [integration.id, integration])
    );
    for (const id of [...this.running.keys()])
      if (!wanted.has(id) || this.running.get(id)!.fingerprint !== linkFingerprint(wanted.get(id)!)) await this.end(id);
    for (const [id, integration] of wanted) {
      const current = this.running.get(id);
      if (current) current.watch.renamed(integration);
      else this.begin(integration);
    }
  }

  private begin(integration: IntegrationRecord): void {
    const logger = this.logger.child({integration: integration.name});
    const acknowledgeOnDevice = async (conditionId: string, by: string, comment: string) => {
      const link = this.running.get(integration.id)?.link;
      if (!link?.acknowledgeAlarm) throw new Error("this link cannot acknowledge on the device");
      await link.acknowledgeAlarm(conditionId, by, comment);
    };
    const watch = new PlcWatch(integration, {...this.deps, logger, acknowledgeOnDevice});
    const running: Running = {fingerprint: linkFingerprint(integration), watch, link: null};
    this.running.set(integration.id, running);
    try {
      running.link = this.deps.links.linkFor(integration);
      running.link.start(watch);
    } catch (error) {
      const message = (error as Error).message;
      logger.error("the PLC link could not start", {error: message});
      watch.link({state: "unreachable", error: `the link could not start: ${message}`});
    }
  }

  private async end(id: string): Promise<void> {
    const running = this.running.get(id);
    this.running.delete(id);
    await running?.link
      ?.stop()
      .catch((error: unknown) =>
        this.logger.warn("a PLC link did not stop cleanly", {error: (error as Error).message})
      );
    await running?.watch.sent();
  }
}
