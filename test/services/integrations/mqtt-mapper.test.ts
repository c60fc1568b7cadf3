import {afterEach, describe, expect, it} from "vitest";
import {createLogger} from "../../../src/lib/logger.js";
import {SupervisedMqttMapper} from "../../../src/services/integrations/mqtt/mqtt-mapper.js";
import type {IntegrationRecord} from "../../../src/store/config/config-store.js";

// The MQTT mapping's bulkhead with the real supervisor and a worker thread that misbehaves on
// command (test/support/crashing-mqtt-mapper.worker.ts).
const mappers: SupervisedMqttMapper[] = [];
afterEach(async () => {
  await Promise.all(mappers.splice(0).map((mapper) => mapper.stop()));
});

const integration = {
  id: "int_plant",
  kind: "mqtt",
  name: "plant",
  password: "Mq77-secret"
} as unknown as IntegrationRecord;

function crashingMapper(logLines: string[]) {
  const mapper = new SupervisedMqttMapper(
    createLogger("error", (line) => logLines.push(line)),
    {
      module: new URL("../../support/crashing-mqtt-mapper.worker.ts", import.meta.url),
      hangAfterMs: 1_000,
      backoff: {firstMs: 10, maxMs: 50, stableMs: 60_000},
      resourceLimits: {maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8, stackSizeMb: 4}
    }
  );
  mappers.push(mapper);
  return mapper;
}

describe("SupervisedMqttMapper", () => {
  it("refuses only the message that ended the worker (a throw, a hang, runaway memory); the others around it map", async () => {
    const logLines: string[] = [];
    const mapper = crashingMapper(logLines);
    await mapper.start();
    const payloads = ["a", "b", "throw", "c", "hang", "d", "memory", "e"];
    const results = await Promise.all(payloads.map((payload) => mapper.map(integration, "plant/x", payload)));
    expect(results).toEqual([
      {mapping: {actions: [], note: "a"}},
      {mapping: {actions: [], note: "b"}},
      {refused: expect.stringMatching(/^the mapping worker ended while mapping this message/)},
      {mapping: {actions: [], note: "c"}},
      {refused: expect.stringMatching(/^the mapping worker ended/)},
      {mapping: {actions: [], note: "d"}},
      {refused: expect.stringMatching(/^the mapping worker ended/)},
      {mapping: {actions: [], note: "e"}}
    ]);
    expect(mapper.poisoned).toBe(3);
    const stats = mapper.stats();
    // The throw ended the worker twice: first among the others in flight, then alone, which named it.
    expect(stats.crashes).toMatchObject({throw: 2, hang: 1, memory: 1});
    expect(stats.running).toBe(true);
    expect(logLines.filter((line) => line.includes("a supervised parser worker ended"))).toHaveLength(4);
    // And it goes on mapping after the crashes, all at once again; the password never crossed.
    expect(await mapper.map(integration, "plant/x", "after")).toEqual({mapping: {actions: [], note: "after"}});
    const seen = await mapper.map(integration, "plant/x", "integration");
    expect(seen).toEqual({mapping: {actions: [], note: expect.stringContaining('"id":"int_plant"')}});
    expect(JSON.stringify(seen)).not.toContain("Mq77-secret");
  });

  it("maps with the real mapping worker", async () => {
    const mapper = new SupervisedMqttMapper(createLogger("error", () => {}));
    mappers.push(mapper);
    const event = JSON.stringify({alert_id: "tk-1", action: "fire", title: "Tank 1 overfill"});
    const result = await mapper.map({...integration, default_priority: "critical"}, "plant/tanks", event);
    expect(result).toMatchObject({
      mapping: {actions: [{action: "fire", alert_id: "tk-1", message: "Tank 1 overfill", priority: "critical"}]}
    });
  });
});
