import {afterEach, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, type TestGateway} from "../support/gateway.js";
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
    const recipient = (await gw.call("POST", "/api/v1/recipients", {body: {name: "Ops", phone: "+4915112345678", email: "ops@factory.lan", channel_order: ["voice_call", "email"]}})).body.uuid;
    const sent: string[] = [];
    for (const priority of ["critical", "high"]) {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {body: {recipient_uuid: recipient, message: `press ${priority}`, priority}});
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
        expected.set(`${attempt.channel}/${attempt.outcome}`, (expected.get(`${attempt.channel}/${attempt.outcome}`) ?? 0) + 1);
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
    expect(metrics.value("klaxon_channel_detail_info", {channel: "voice_call", detail: "operator", value: 'Test "Net"'})).toBe(1);
    expect(metrics.value("klaxon_journal_can_commit")).toBe(1);
    expect(metrics.types.get("klaxon_journal_commits_total")).toBe("counter");

    // Two sends through the same endpoint template, whatever the ids.
    const sends = {method: "POST", route: "/api/v1/notifications/send", status: "202"};
    expect(metrics.value("klaxon_http_request_duration_seconds_count", sends)).toBe(2);
    expect(metrics.value("klaxon_http_request_duration_seconds_count", {method: "GET", route: "/api/v1/notifications/:id", status: "200"})).toBe(1);
    const buckets = metrics.samples.filter((sample) => sample.name === "klaxon_http_request_duration_seconds_bucket" && sample.labels.route === sends.route && sample.labels.method === "POST");
    for (let index = 1; index < buckets.length; index++) expect(buckets[index].value).toBeGreaterThanOrEqual(buckets[index - 1].value);
    expect(buckets.at(-1)).toMatchObject({labels: {le: "+Inf"}, value: 2});
    expect(text).not.toContain(sent[0]);
    expect(text).not.toContain("press critical");
    expect(text).not.toContain("+4915112345678");
  });

  it("labels requests no endpoint matched as unmatched, so random paths add no series", async () => {
    gw = await startTestGateway();
    for (const path of ["/wp-login.php", "/etc/passwd", "/api/v1/nothing-here"]) expect((await fetch(gw.url + path)).status).toBe(404);
    const metrics = parseExposition(await (await fetch(`${gw.url}/metrics`)).text());
    expect(metrics.value("klaxon_http_request_duration_seconds_count", {method: "GET", route: "unmatched", status: "404"})).toBe(3);
    expect(metrics.samples.some((sample) => sample.labels.route?.includes("wp-login"))).toBe(false);
  });
});
