import {afterAll, afterEach, beforeAll, describe, expect, it} from "vitest";
import {readdirSync, readFileSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {performance} from "node:perf_hooks";
import {pathToFileURL} from "node:url";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {readBuildInfo} from "../../src/ops/metrics/process-metrics.js";
import {RecordingDriver} from "../support/recording-driver.js";
import {ManualClock} from "../../src/lib/clock.js";
import {parseExposition} from "./exposition-parser.js";

/** A channel stand-in whose details look like a modem's health (src/modem/health.ts). */
class ModemLikeDriver extends RecordingDriver {
  details() {
    return {port_open: true, sim: "ready", registration: "home", operator: 'Test "Net"', signal: {rssi: 20, dbm: -73}};
  }
}

let gw: TestGateway | null = null;
afterEach(async () => {
  await gw?.stop();
  gw = null;
});

describe("/metrics", () => {
  it("reports notifications, attempts, lag, channels, modem details and request durations in the Prometheus format", async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    const voice = new ModemLikeDriver("voice_call");
    const email = new RecordingDriver("email", 4);
    email.unavailable = "SMTP server refused the login";
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {clock, drivers: () => [voice, email]});
    const recipient = (
      await gw.call("POST", "/api/v1/recipients", {
        body: {name: "Ops", phone: "+4915112345678", email: "ops@factory.lan", channel_order: ["voice_call", "email"]}
      })
    ).body.uuid;
    const sent: string[] = [];
    for (const priority of ["critical", "high"]) {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: recipient, message: `press ${priority}`, priority}
      });
      expect(answer.status).toBe(202);
      sent.push(answer.body.notification_uuid);
    }
    await gw.gateway.services.runner.idle();
    expect((await gw.call("POST", `/api/v1/notifications/${sent[0]}/ack`)).status).toBe(200);
    await gw.gateway.services.runner.idle();
    const open = (await gw.call("GET", `/api/v1/notifications/${sent[1]}`)).body;
    clock.advance(Date.parse(open.escalation.next_step_at) - clock.now() + 42_000);

    const answer = await fetch(`${gw.url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await answer.text();
    const metrics = parseExposition(text);

    expect(metrics.value("klaxon_notifications", {status: "acknowledged", priority: "critical"})).toBe(1);
    expect(metrics.value("klaxon_notifications", {status: "notifying", priority: "high"})).toBe(1);
    expect(metrics.value("klaxon_notifications", {status: "queued", priority: "info"})).toBe(0);
    // Attempts as the API shows them, counted by channel and outcome.
    const expected = new Map<string, number>();
    for (const id of sent) {
      for (const attempt of (await gw.call("GET", `/api/v1/notifications/${id}`)).body.attempts) {
        expected.set(
          `${attempt.channel}/${attempt.outcome}`,
          (expected.get(`${attempt.channel}/${attempt.outcome}`) ?? 0) + 1
        );
      }
    }
    expect(expected.get("voice_call/sent")).toBeGreaterThan(0);
    for (const sample of metrics.samples.filter((item) => item.name === "klaxon_attempts")) {
      expect(sample.value).toBe(expected.get(`${sample.labels.channel}/${sample.labels.outcome}`) ?? 0);
    }
    expect(metrics.value("klaxon_escalations_running")).toBe(1);
    expect(metrics.value("klaxon_escalation_lag_seconds")).toBe(42);
    expect(metrics.value("klaxon_outbox_pending")).toBe(0);
    expect(metrics.value("klaxon_channel_available", {channel: "voice_call"})).toBe(1);
    expect(metrics.value("klaxon_channel_available", {channel: "email"})).toBe(0);
    expect(metrics.value("klaxon_channel_detail", {channel: "voice_call", detail: "signal.dbm"})).toBe(-73);
    expect(metrics.value("klaxon_channel_detail", {channel: "voice_call", detail: "port_open"})).toBe(1);
    expect(
      metrics.value("klaxon_channel_detail_info", {channel: "voice_call", detail: "operator", value: 'Test "Net"'})
    ).toBe(1);
    expect(metrics.value("klaxon_journal_can_commit")).toBe(1);
    expect(metrics.types.get("klaxon_journal_commits_total")).toBe("counter");

    // Two sends through the same endpoint template, whatever the ids.
    const sends = {method: "POST", route: "/api/v1/notifications/send", status: "202"};
    expect(metrics.value("klaxon_http_request_duration_seconds_count", sends)).toBe(2);
    expect(
      metrics.value("klaxon_http_request_duration_seconds_count", {
        method: "GET",
        route: "/api/v1/notifications/:id",
        status: "200"
      })
    ).toBe(1);
    const buckets = metrics.samples.filter(
      (sample) =>
        sample.name === "klaxon_http_request_duration_seconds_bucket" &&
        sample.labels.route === sends.route &&
        sample.labels.method === "POST"
    );
    for (let index = 1; index < buckets.length; index++)
      expect(buckets[index].value).toBeGreaterThanOrEqual(buckets[index - 1].value);
    expect(buckets.at(-1)).toMatchObject({labels: {le: "+Inf"}, value: 2});
    expect(text).not.toContain(sent[0]);
    expect(text).not.toContain("press critical");
    expect(text).not.toContain("+4915112345678");
  });

  // Neither changes what the other reads (their own unmatched paths; the process and the runtime), so
  // they share one gateway.
  describe("on a gateway with no channel configured", () => {
    let plain: TestGateway;
    beforeAll(async () => {
      plain = await startTestGateway();
    });
    afterAll(async () => {
      await plain.stop();
    });

    it("labels requests no endpoint matched as unmatched, so random paths add no series", async () => {
      for (const path of ["/wp-login.php", "/etc/passwd", "/api/v1/nothing-here"])
        expect((await fetch(plain.url + path)).status).toBe(404);
      const metrics = parseExposition(await (await fetch(`${plain.url}/metrics`)).text());
      expect(
        metrics.value("klaxon_http_request_duration_seconds_count", {method: "GET", route: "unmatched", status: "404"})
      ).toBe(3);
      expect(metrics.samples.some((sample) => sample.labels.route?.includes("wp-login"))).toBe(false);
    });

    it("reports the process, the Node.js runtime and the build, as Prometheus client libraries name them", async () => {
      // Hold the event loop for 300 ms: the delay gauges must see it.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const blockedUntil = performance.now() + 300;
      while (performance.now() < blockedUntil);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const metrics = parseExposition(await (await fetch(`${plain.url}/metrics`)).text());
      const value = (name: string) => metrics.value(name) as number;

      expect(metrics.types.get("process_cpu_seconds_total")).toBe("counter");
      expect(value("process_cpu_seconds_total")).toBeGreaterThan(0.3);
      // The gateway runs in this process, so /proc and Node must agree with what the test reads.
      expect(value("process_resident_memory_bytes")).toBeGreaterThan(20e6);
      expect(
        Math.abs(value("process_resident_memory_bytes") - process.memoryUsage.rss()) / process.memoryUsage.rss()
      ).toBeLessThan(0.5);
      expect(value("process_start_time_seconds")).toBeCloseTo(performance.timeOrigin / 1000, 0);
      // Sockets of other tests' leftovers may come and go between the two readings: close, not equal.
      expect(Math.abs(value("process_open_fds") - (readdirSync("/proc/self/fd").length - 1))).toBeLessThanOrEqual(4);
      expect(value("process_open_fds")).toBeLessThan(value("process_max_fds"));
      expect(value("nodejs_heap_size_used_bytes")).toBeGreaterThan(1e6);
      expect(value("nodejs_heap_size_used_bytes")).toBeLessThanOrEqual(value("nodejs_heap_size_total_bytes"));
      expect(value("nodejs_eventloop_delay_max_seconds")).toBeGreaterThan(0.25);
      expect(value("nodejs_eventloop_delay_p99_seconds")).toBeGreaterThan(0.25);
      // Percentiles cover the time since the previous scrape: the held loop is not counted twice.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(
        parseExposition(await (await fetch(`${plain.url}/metrics`)).text()).value("nodejs_eventloop_delay_max_seconds")
      ).toBeLessThan(0.25);

      const version = JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")).version;
      // A checkout has no RELEASE file, so no commit label rather than a guess.
      expect(metrics.samples.filter((sample) => sample.name === "klaxon_build_info")).toEqual([
        {name: "klaxon_build_info", labels: {version, node: process.version}, value: 1}
      ]);
    });
  });

  it("labels the build with the commit a release was packaged from", () => {
    const root = tempDir();
    writeFileSync(join(root, "package.json"), JSON.stringify({version: "9.8.7"}));
    expect(readBuildInfo(pathToFileURL(root + "/"))).toEqual({version: "9.8.7", node: process.version});
    writeFileSync(join(root, "RELEASE"), "version=9.8.7\narch=x64\ncommit=0123456789abcdef0123456789abcdef01234567\n");
    expect(readBuildInfo(pathToFileURL(root + "/"))).toEqual({
      version: "9.8.7",
      node: process.version,
      commit: "0123456789abcdef0123456789abcdef01234567"
    });
  });
});
