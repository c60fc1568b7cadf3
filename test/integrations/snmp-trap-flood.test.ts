import {randomBytes} from "node:crypto";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {IntegrationStatsRepository} from "../../src/store/journal/integration-stats.repository.js";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {eventually} from "../support/eventually.js";
import {freeUdpPort, sendBytes, sendTrap} from "../support/snmptrap.js";

// A flood from one agent, against a gateway whose rate limit (the HTTP API's, which the trap
// listener shares) is a burst of 5 refilling at one per 100 s: within this test it stays spent.
// The counters are read from the journal, so the test's own API calls spend none of it.
const LINK_DOWN = "1.3.6.1.6.3.1.1.5.3";
let gw: TestGateway;
let trapPort: number;
let integrationId: string;

beforeAll(async () => {
  trapPort = await freeUdpPort();
  gw = await startTestGateway({
    rate_limit: {per_second: 0.01, burst: 5},
    snmp: {trap_port: trapPort, trap_address: "127.0.0.1"}
  });
  const recipient = await gw.call("POST", "/api/v1/recipients", {body: {name: "Maria", email: "maria@factory.lan"}});
  const created = await gw.call("POST", "/api/v1/integrations", {
    body: {name: "switches", kind: "snmp_trap", target: recipient.body.uuid, community: "flood-test"}
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  integrationId = created.body.id;
});
afterAll(() => gw?.stop());

function counters(id: string) {
  const stats = new IntegrationStatsRepository(gw.gateway.journal);
  return gw.gateway.journal.read(() => stats.stats(id));
}

describe("a flood from one agent", () => {
  it("gets its burst through; the traps beyond it are refused and counted, not kept", async () => {
    for (let index = 1; index <= 8; index++)
      await sendTrap(trapPort, {version: "2c", community: "flood-test"}, LINK_DOWN, [
        [`1.3.6.1.2.1.2.2.1.1.${index}`, "i", String(index)]
      ]);
    const stats = await eventually(
      "8 traps counted",
      () => counters(integrationId),
      (seen) => seen.received === 8
    );
    expect(stats).toMatchObject({received: 8, accepted: 5, refused: 3, unmapped: 0});
    expect(stats.last_error).toMatch(/^rate limited: 127\.0\.0\.1/);
    const kept = gw.gateway.journal.read(() =>
      new IntegrationStatsRepository(gw.gateway.journal).kept(integrationId, 10, null)
    );
    expect(kept).toEqual([]);
  });

  it("of unreadable packets has a budget of its own: the first 5 are counted, the rest dropped", async () => {
    const before = counters("*snmp_trap").refused;
    await sendBytes(
      trapPort,
      Array.from({length: 12}, () => randomBytes(64))
    );
    // One more packet the listener must read after the junk: once it is counted, the junk was read.
    await sendTrap(trapPort, {version: "2c", community: "flood-test"}, LINK_DOWN, [
      ["1.3.6.1.2.1.2.2.1.1.9", "i", "9"]
    ]);
    await eventually(
      "the last trap counted",
      () => counters(integrationId).received,
      (received) => received === 9
    );
    expect(counters("*snmp_trap").refused - before).toBe(5);
  });
});
