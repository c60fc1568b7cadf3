import {expect} from "vitest";
import {
  ALL_CHANNELS_CONFIGURED,
  startTestGateway,
  tempDir,
  type SettingsOverrides,
  type TestGateway
} from "./gateway.js";
import {RecordingDriver} from "./recording-driver.js";
import {ManualClock} from "../../src/lib/clock.js";
import type {EscalationRunner, RunnerOptions} from "../../src/services/escalation/escalation-runner.service.js";

export const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);

/**
 * A gateway whose runner the test drives itself, at exact times on a manual clock, with
 * scripted drivers standing in for the phone, the mailbox and Telegram.
 */
export interface Rig {
  gw: TestGateway;
  clock: ManualClock;
  voice: RecordingDriver;
  email: RecordingDriver;
  telegram: RecordingDriver;
  sms: RecordingDriver;
  runner(): EscalationRunner;
  send(recipient: string, message?: string, priority?: string, extra?: Record<string, unknown>): Promise<string>;
  notification(id: string): Promise<any>;
  recipient(fields: Record<string, unknown>): Promise<string>;
  /**
   * Runner passes at the clock's time, each followed by recording every delivery it started,
   * until nothing is due (what the runner's own timer does when an outcome brings a step forward).
   */
  tick(): Promise<void>;
  /** Stops the gateway and starts it again on the same data, the runner again driven by the test. */
  restart(): Promise<void>;
}

let current: Rig | null = null;

/** Stops the rig the last `makeRig` started: call from afterEach. */
export async function stopRig(): Promise<void> {
  await current?.gw.stop();
  current = null;
}

export async function makeRig(
  runner: RunnerOptions = {},
  settings: SettingsOverrides = ALL_CHANNELS_CONFIGURED
): Promise<Rig> {
  const clock = new ManualClock(T0);
  const voice = new RecordingDriver("voice_call", 1);
  const email = new RecordingDriver("email", 4);
  const telegram = new RecordingDriver("telegram_voice", 4);
  const sms = new RecordingDriver("sms", 1);
  const gw = await startTestGateway(settings, {
    clock,
    dataDir: tempDir(),
    drivers: () => [voice, email, telegram, sms],
    runner
  });
  const runnerOf = () => gw.gateway.services.runner;
  // The tests drive the runner's passes themselves, at exact times.
  await runnerOf().stop();
  current = {
    gw,
    clock,
    voice,
    email,
    telegram,
    sms,
    runner: runnerOf,
    async send(recipient, message = "Press 7 oil temperature high", priority = "high", extra = {}) {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: recipient, message, priority, ...extra}
      });
      expect(answer.status).toBe(202);
      return answer.body.notification_uuid;
    },
    async notification(id) {
      await runnerOf().idle();
      return (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    },
    async recipient(fields) {
      const answer = await gw.call("POST", "/api/v1/recipients", {
        body: {escalation: {ack_timeout_seconds: 60, repeat: 0}, channel_order: ["voice_call", "email"], ...fields}
      });
      expect(answer.status).toBe(201);
      return answer.body.uuid;
    },
    async tick() {
      const due = gw.gateway.journal.db
        .prepare("SELECT COUNT(*) FROM escalations WHERE state = 'running' AND next_step_at <= ?")
        .pluck();
      for (let pass = 0; pass < 20; pass++) {
        await runnerOf().tick();
        await runnerOf().idle();
        if (due.get(new Date(clock.now()).toISOString()) === 0) return;
      }
    },
    async restart() {
      await gw.restart();
      await runnerOf().stop();
    }
  };
  return current;
}
