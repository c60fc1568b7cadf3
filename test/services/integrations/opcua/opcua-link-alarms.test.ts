import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {eventually} from "../../../support/eventually.js";
import {type AlarmServer, startAlarmServer} from "../../../support/opcua-alarm-server.js";
import {type LinkUnderTest, startLink} from "../../../support/opcua-link-rig.js";

// Alarms & Conditions through node-opcua's server (its address space's AlarmConditionType): the
// link turns the server's condition events into DeviceAlarms and acknowledges through the
// condition's Acknowledge method. One server and one link for the file, in the order a shift
// lives it; each test starts from the state the previous one left.
let server: AlarmServer;
let link: LinkUnderTest;

beforeAll(async () => {
  server = await startAlarmServer();
  link = startLink({endpointUrl: server.endpointUrl, alarms: true});
  await eventually(
    "the link connected",
    () => link.status()?.state,
    (state) => state === "connected"
  );
});

afterAll(async () => {
  await link?.stop();
  await server?.close();
});

describe("OPC UA Alarms & Conditions against node-opcua's server", () => {
  it("reports a raised condition as an active, unacknowledged DeviceAlarm keyed by its condition id", async () => {
    server.raise(800, "Tank level high");
    await expect
      .poll(() => link.alarm(server.conditionId))
      .toMatchObject({
        conditionId: "ns=1;s=Tank.HighLevelAlarm",
        active: true,
        acknowledged: false,
        severity: 800,
        message: "Tank level high",
        // node-opcua's server names the source by its browse name, namespace first.
        source: "1:Tank"
      });
  });

  it("acknowledgeAlarm calls the condition's Acknowledge with the person's name and comment", async () => {
    await link.link.acknowledgeAlarm?.(server.conditionId, "Ann Operator", "on my way");
    expect(server.acked()).toBe(true);
    expect(server.comment()).toBe("by Ann Operator: on my way");
    await expect.poll(() => link.alarm(server.conditionId)).toMatchObject({active: true, acknowledged: true});
    // Acknowledging again (a second channel's ack) is not an error.
    await link.link.acknowledgeAlarm?.(server.conditionId, "Bob", "");
  });

  it("reports an acknowledgement made on the SCADA side, and the clear as inactive", async () => {
    server.raise(900, "Tank level very high");
    await expect
      .poll(() => link.alarm(server.conditionId))
      .toMatchObject({active: true, acknowledged: false, severity: 900});
    server.acknowledgeHere("seen at the SCADA", "jwagner");
    await expect
      .poll(() => link.alarm(server.conditionId))
      .toMatchObject({
        active: true,
        acknowledged: true,
        acknowledgedBy: "jwagner",
        comment: "seen at the SCADA"
      });
    server.clear("Tank level normal");
    await expect.poll(() => link.alarm(server.conditionId)).toMatchObject({active: false, acknowledged: true});
  });

  it("refuses to acknowledge a condition the server never reported, in words", async () => {
    await expect(link.link.acknowledgeAlarm?.("ns=1;s=NoSuchAlarm", "Ann", "x")).rejects.toThrow(
      /has not reported an alarm ns=1;s=NoSuchAlarm/
    );
  });

  it("says the server is unreachable in words when it stops, reconnects when it is back and re-reads its conditions", async () => {
    server.raise(700, "Tank level high again");
    await expect.poll(() => link.alarm(server.conditionId)).toMatchObject({active: true, severity: 700});
    await server.stop();
    await expect
      .poll(() => link.status())
      .toEqual({state: "unreachable", error: expect.stringMatching(/connection|refused/)});
    await expect(link.link.acknowledgeAlarm?.(server.conditionId, "Ann", "x")).rejects.toThrow(/cannot acknowledge/);
    // The PLC comes back without the alarm (switched off and on): the condition refresh finds it gone.
    await server.restart();
    await expect.poll(() => link.status()).toEqual({state: "connected"});
    await expect.poll(() => link.alarm(server.conditionId)).toMatchObject({active: false, acknowledged: true});
    const unreachable = link.statuses.filter((status) => status.state === "unreachable");
    expect(unreachable.every((status) => !/\bat\b.*\.js|Error:/.test(status.error ?? ""))).toBe(true);
  });

  it("stop() closes its session on the server and tries no more", async () => {
    expect(server.sessions()).toBe(1);
    await link.link.stop();
    expect(server.sessions()).toBe(0);
    // Longer than the rig's 300 ms reconnect pause: a link that went on would have a session again.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(server.sessions()).toBe(0);
  });
});
