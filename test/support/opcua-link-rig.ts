import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {systemClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";
import {createOpcUaLink, type OpcUaLinkConfig} from "../../src/services/integrations/opcua/opcua-link.js";
import type {DeviceAlarm, LinkStatus, PlcLink, PointReading} from "../../src/services/integrations/plc/plc-link.js";

/** An OPC UA link under test with everything it told its listener, and its data dir. */
export interface LinkUnderTest {
  readonly link: PlcLink;
  readonly dataDir: string;
  readonly readings: PointReading[];
  readonly statuses: LinkStatus[];
  readonly alarms: DeviceAlarm[];
  readonly logLines: string[];
  /** The latest reading of a point, if any. */
  reading(point: string): PointReading | undefined;
  status(): LinkStatus | undefined;
  /** The latest DeviceAlarm of a condition, if any. */
  alarm(conditionId: string): DeviceAlarm | undefined;
  stop(): Promise<void>;
}

const DEFAULTS: OpcUaLinkConfig = {
  endpointUrl: "opc.tcp://127.0.0.1:4840",
  securityMode: "None",
  securityPolicy: "None",
  user: null,
  password: null,
  alarms: false,
  points: []
};

/**
 * Starts an OPC UA link with a recording listener, reconnecting after 300 ms (so a test waits
 * little for a server to come back). `dataDir` is shared when given (the box's one certificate).
 */
export function startLink(config: Partial<OpcUaLinkConfig>, dataDir?: string): LinkUnderTest {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "klaxon-opcua-"));
  const readings: PointReading[] = [];
  const statuses: LinkStatus[] = [];
  const alarms: DeviceAlarm[] = [];
  const logLines: string[] = [];
  const link = createOpcUaLink(
    {...DEFAULTS, ...config},
    {
      clock: systemClock,
      log: createLogger("debug", (line) => logLines.push(line)),
      dataDir: dir,
      reconnect: {firstMs: 300, maxMs: 300}
    }
  );
  link.start({
    reading: (reading) => readings.push(reading),
    link: (status) => statuses.push(status),
    alarm: (alarm) => alarms.push(alarm)
  });
  return {
    link,
    dataDir: dir,
    readings,
    statuses,
    alarms,
    logLines,
    reading: (point) => readings.findLast((reading) => reading.point === point),
    status: () => statuses.at(-1),
    alarm: (conditionId) => alarms.findLast((alarm) => alarm.conditionId === conditionId),
    async stop() {
      await link.stop();
      if (!dataDir) rmSync(dir, {recursive: true, force: true});
    }
  };
}
