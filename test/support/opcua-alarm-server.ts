import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {UAAlarmConditionEx, UAObject, UAVariable} from "node-opcua-address-space";
import {OPCUACertificateManager} from "node-opcua-certificate-manager";
import {DataType} from "node-opcua-client";
import {OPCUAServer} from "node-opcua-server";
import {freePort} from "./mosquitto.js";

/**
 * node-opcua's server (its own address space's Alarms & Conditions, not our client's code) with one
 * alarm, Tank.HighLevelAlarm (an AlarmConditionType on the Tank object, events through the Server
 * object), on a free loopback port, anonymous and without security. `restart()` brings up a new
 * server on the same port with the same condition, as a PLC that was switched off and on.
 */
export interface AlarmServer {
  readonly endpointUrl: string;
  /** The alarm's condition id as a client sees it. */
  readonly conditionId: string;
  raise(severity: number, message: string): void;
  /** The alarm returns to normal (stays retained until acknowledged). */
  clear(message: string): void;
  /** An operator (`user`, the server's ClientUserId) acknowledges at the SCADA (the server's own acknowledge, not a client's call). */
  acknowledgeHere(comment: string, user: string): void;
  acked(): boolean;
  /** The sessions the server holds open now. */
  sessions(): number;
  /** The comment of the condition's latest acknowledgement or other comment. */
  comment(): string;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Stops the server for good and removes its PKI folder. */
  close(): Promise<void>;
}

const CONDITION_NODE = "s=Tank.HighLevelAlarm";

async function serve(port: number, pkiDir: string): Promise<{server: OPCUAServer; alarm: UAAlarmConditionEx}> {
  const pki = (name: string) =>
    new OPCUACertificateManager({rootFolder: join(pkiDir, name), automaticallyAcceptUnknownCertificate: true});
  const server = new OPCUAServer({
    port,
    hostname: "127.0.0.1",
    allowAnonymous: true,
    serverInfo: {applicationName: {text: "Klaxon test (node-opcua alarms)"}},
    // Its PKI in a temp folder, not node-opcua's default under the home directory.
    serverCertificateManager: pki("server"),
    userCertificateManager: pki("users")
  });
  await server.initialize();
  const addressSpace = server.engine.addressSpace;
  if (!addressSpace) throw new Error("node-opcua server has no address space");
  addressSpace.installAlarmsAndConditionsService();
  const namespace = addressSpace.getOwnNamespace();
  const serverObject = addressSpace.rootFolder.objects.server;
  const tank: UAObject = namespace.addObject({
    browseName: "Tank",
    nodeId: "s=Tank",
    organizedBy: addressSpace.rootFolder.objects,
    eventSourceOf: serverObject,
    eventNotifier: 1
  });
  const level: UAVariable = namespace.addVariable({
    browseName: "Level",
    nodeId: "s=Tank.Level",
    componentOf: tank,
    dataType: "Double",
    value: {dataType: DataType.Double, value: 0}
  });
  const alarm = namespace.instantiateAlarmCondition("AlarmConditionType", {
    browseName: "HighLevelAlarm",
    nodeId: CONDITION_NODE,
    componentOf: tank,
    conditionSource: tank,
    inputNode: level
  });
  await server.start();
  return {server, alarm};
}

export async function startAlarmServer(): Promise<AlarmServer> {
  const port = await freePort();
  const pkiDir = mkdtempSync(join(tmpdir(), "klaxon-opcua-server-"));
  let current = await serve(port, pkiDir);
  return {
    endpointUrl: `opc.tcp://127.0.0.1:${port}/UA/NodeOPCUA`,
    conditionId: `ns=1;${CONDITION_NODE}`,
    raise(severity, message) {
      current.alarm.activateAlarm();
      current.alarm.raiseNewCondition({severity, message, retain: true});
    },
    clear(message) {
      current.alarm.deactivateAlarm();
      const branch = current.alarm.currentBranch();
      current.alarm.raiseNewCondition({
        severity: branch.getSeverity(),
        message,
        retain: !branch.getAckedState()
      });
    },
    acknowledgeHere(comment, user) {
      const branch = current.alarm.currentBranch();
      branch.setClientUserId(user);
      current.alarm.acknowledgeAndAutoConfirmBranch(branch, comment);
    },
    acked: () => current.alarm.currentBranch().getAckedState(),
    sessions: () => current.server.currentSessionCount,
    comment: () => current.alarm.currentBranch().getComment().text ?? "",
    async stop() {
      await current.server.shutdown(0);
    },
    async restart() {
      current = await serve(port, pkiDir);
    },
    async close() {
      await current.server.shutdown(0).catch(() => undefined);
      rmSync(pkiDir, {recursive: true, force: true});
    }
  };
}
