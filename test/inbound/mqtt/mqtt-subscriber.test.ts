import {execFileSync} from "node:child_process";
import {truncateSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, it} from "vitest";
import {MqttSubscriber, reconnectDelayMs, type ReceivedMqttMessage} from "../../../src/inbound/mqtt/mqtt-subscriber.js";
import type {MqttSubscription} from "../../../src/domain/mqtt.js";
import {freePort, startMosquitto, type Mosquitto} from "../../support/mosquitto.js";
import {eventually} from "../../support/eventually.js";
import {tempDir} from "../../support/gateway.js";

let broker: Mosquitto;
const running: MqttSubscriber[] = [];
let clients = 0;

beforeAll(async () => {
  broker = await startMosquitto();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((subscriber) => subscriber.stop(true)));
});
afterAll(async () => {
  await broker.stop();
});

function subscription(overrides: Partial<MqttSubscription> = {}): MqttSubscription {
  return {
    brokerUrl: broker.url,
    topics: ["plant/#"],
    username: null,
    password: null,
    clientId: `klaxon-test-${process.pid}-${++clients}`,
    caFile: null,
    ...overrides
  };
}

/** A subscriber whose handler records each message and settles it when the test says so. */
function recordingSubscriber(options: MqttSubscription, settle: "commit" | "hold" | "fail" = "commit") {
  const received: ReceivedMqttMessage[] = [];
  const subscriber = new MqttSubscriber(
    options,
    (message) => {
      received.push(message);
      if (settle === "hold") return new Promise<void>(() => {});
      return settle === "fail" ? Promise.reject(new Error("journal cannot commit")) : Promise.resolve();
    },
    () => new Date()
  );
  running.push(subscriber);
  return {subscriber, received};
}

const connected = (subscriber: MqttSubscriber) =>
  eventually(
    "connected",
    () => subscriber.state,
    (state) => state.connected
  );

describe("MqttSubscriber", () => {
  it("delivers a QoS 1 message published on a subscribed topic", async () => {
    const {subscriber, received} = recordingSubscriber(subscription());
    await connected(subscriber);
    // The subscription is in place once a retained-free probe arrives: publish until one does.
    await eventually(
      "first message",
      () => {
        if (received.length === 0) broker.publish("plant/line1/temp", "hot");
        return received.length;
      },
      (count) => count > 0
    );
    expect(received[0]).toMatchObject({topic: "plant/line1/temp"});
    expect(received[0].payload.toString()).toBe("hot");
  });

  it("acknowledges a message only once the handler has committed it: one still in hand is delivered again to the next session", async () => {
    const clientId = `klaxon-held-${process.pid}`;
    const first = recordingSubscriber(subscription({clientId}), "hold");
    await connected(first.subscriber);
    await eventually(
      "held message",
      () => {
        if (first.received.length === 0) broker.publish("plant/boiler", "pressure high");
        return first.received.length;
      },
      (count) => count > 0
    );
    // A gateway that stops (or dies) before its commit: the broker still holds the message for the session.
    await first.subscriber.stop(false);
    running.splice(running.indexOf(first.subscriber), 1);

    const second = recordingSubscriber(subscription({clientId}));
    await eventually(
      "redelivery",
      () => second.received.map((message) => message.payload.toString()),
      (payloads) => payloads.includes("pressure high")
    );
  });

  it("reconnects after a handler failure, and the broker delivers the message again", async () => {
    const received: string[] = [];
    let failures = 1;
    const subscriber = new MqttSubscriber(
      subscription(),
      (message) => {
        received.push(message.payload.toString());
        return failures-- > 0 ? Promise.reject(new Error("journal cannot commit")) : Promise.resolve();
      },
      () => new Date()
    );
    running.push(subscriber);
    await connected(subscriber);
    broker.publish("plant/pump", "stopped");
    await eventually(
      "delivered twice",
      () => received,
      (payloads) => payloads.filter((payload) => payload === "stopped").length === 2
    );
    expect(subscriber.state.last_error).toMatch(/not committed: journal cannot commit/);
  });

  it("starts while the broker is down and connects once it comes up", async () => {
    const port = await freePort();
    const {subscriber, received} = recordingSubscriber(subscription({brokerUrl: `mqtt://127.0.0.1:${port}`}));
    await eventually(
      "connection refused",
      () => subscriber.state,
      (state) => state.last_error !== null
    );
    expect(subscriber.state.connected).toBe(false);
    const late = await startMosquitto(port);
    try {
      await connected(subscriber);
      await eventually(
        "message after the broker came up",
        () => {
          if (received.length === 0) late.publish("plant/late", "up");
          return received.length;
        },
        (count) => count > 0
      );
    } finally {
      await subscriber.stop(true);
      running.splice(running.indexOf(subscriber), 1);
      await late.stop();
    }
  });

  it("stays down, saying why, when its CA file cannot be read, instead of connecting unverified", async () => {
    const {subscriber} = recordingSubscriber(
      subscription({brokerUrl: broker.url.replace("mqtt:", "mqtts:"), caFile: "/nonexistent/plant-ca.pem"})
    );
    const state = await eventually(
      "the reason",
      () => subscriber.state,
      (current) => current.last_error !== null
    );
    expect(state).toMatchObject({
      connected: false,
      last_error: expect.stringMatching(/^cannot read tls_ca_file \/nonexistent\/plant-ca.pem: ENOENT/)
    });
  });

  it("refuses a CA file that is a FIFO, a directory or over 1 MB, without blocking the main thread", async () => {
    const dir = tempDir("klaxon-ca-");
    const fifo = join(dir, "plant-ca.fifo");
    // A FIFO nobody writes to: readFileSync would wait in open() forever, and every timer with it.
    execFileSync("mkfifo", [fifo]);
    const huge = join(dir, "huge-ca.pem");
    writeFileSync(huge, "");
    truncateSync(huge, 2 * 1024 * 1024);
    const mqtts = broker.url.replace("mqtt:", "mqtts:");
    const reasons = await Promise.all(
      [fifo, dir, huge].map(async (caFile) => {
        const {subscriber} = recordingSubscriber(subscription({brokerUrl: mqtts, caFile}));
        const state = await eventually(
          "the reason",
          () => subscriber.state,
          (current) => current.last_error !== null,
          2_000
        );
        expect(state.connected).toBe(false);
        return state.last_error;
      })
    );
    expect(reasons).toEqual([
      `cannot read tls_ca_file ${fifo}: it is a FIFO (named pipe), not a regular file`,
      `cannot read tls_ca_file ${dir}: it is a directory, not a file`,
      `cannot read tls_ca_file ${huge}: it holds 2097152 bytes, over the limit of 1048576`
    ]);
  });
});

describe("reconnectDelayMs", () => {
  it("grows from a second to a minute and stays there, within ±20%", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((attempt) => reconnectDelayMs(attempt, () => 0.5))).toEqual([
      1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 60_000, 60_000
    ]);
    expect(reconnectDelayMs(1, () => 0)).toBe(800);
    expect(reconnectDelayMs(6, () => 1)).toBe(72_000);
  });
});
