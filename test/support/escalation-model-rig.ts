import fc from "fast-check";
import type {Channel} from "../../src/domain/vocabulary.js";
import type {Observed} from "./escalation-invariants.js";
import type {RecordingDriver} from "./recording-driver.js";
import {stopRig, type Rig} from "./runner-rig.js";

/** What the escalation models (escalation-model*.test.ts) share beyond the rig and the invariants. */

export function modelDrivers(r: Rig): Record<Channel, RecordingDriver> {
  return {voice_call: r.voice, email: r.email, telegram_voice: r.telegram, sms: r.sms};
}

/**
 * The runner's passes at the clock's time, recording each voice call they started in `observed`.
 * What a maintenance window held is released once it ends first, as the releaser's own timer would.
 */
export function observingTick(r: Rig, observed: Observed): () => Promise<void> {
  return async () => {
    const before = r.voice.deliveries.length;
    await r.gw.gateway.services.maintenance.releaser.tick();
    await r.tick();
    for (const delivery of r.voice.deliveries.slice(before))
      observed.voiceCalls.push({
        at: r.clock.now(),
        epoch: observed.restarts.length,
        contact: delivery.contact,
        alerts: delivery.alerts.map((a) => a.notification_id),
        priorities: delivery.alerts.map((a) => a.priority)
      });
  };
}

/** One of the open alerts, picked by `pick` (null when none is open). */
export function openAlert(r: Rig, pick: number): string | null {
  const rows = r.gw.gateway.journal.db
    .prepare("SELECT id FROM notifications WHERE status IN ('queued', 'notifying') ORDER BY id")
    .pluck()
    .all() as string[];
  return rows.length ? rows[pick % rows.length] : null;
}

/** A channel going away or coming back, as the runner's health check then sees it. */
export async function setChannel(r: Rig, channel: Channel, up: boolean): Promise<void> {
  modelDrivers(r)[channel].unavailable = up ? null : `${channel} is down (scripted)`;
  await r.runner().checkChannels();
}

/**
 * Runs a model over generated scenarios, a fresh rig each. A fixed seed, so a red run is the
 * code's doing and repeats; explore with KLAXON_MODEL_SEED=random (and KLAXON_MODEL_RUNS=500).
 */
export async function assertModel<S>(
  scenarios: fc.Arbitrary<S>,
  run: (s: S) => Promise<void>,
  defaults: {seed: number; runs: number}
): Promise<void> {
  const seed = process.env.KLAXON_MODEL_SEED ?? String(defaults.seed);
  await fc.assert(
    fc.asyncProperty(scenarios, async (s) => {
      try {
        await run(s);
      } finally {
        await stopRig();
      }
    }),
    {
      numRuns: Number(process.env.KLAXON_MODEL_RUNS ?? defaults.runs),
      seed: seed === "random" ? undefined : Number(seed)
    }
  );
}
