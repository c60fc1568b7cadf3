import fc from "fast-check";
import {afterEach, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED} from "../support/gateway.js";
import {makeRig, stopRig, type Rig} from "../support/runner-rig.js";
import {assertModel, observingTick, modelDrivers, openAlert, setChannel} from "../support/escalation-model-rig.js";
import {checkInvariants, settleEverything, type Observed} from "../support/escalation-invariants.js";
import {TimedRegex} from "../../src/lib/timed-regex.js";
import {EmailIntake} from "../../src/services/integrations/email-intake.js";
import {IntegrationsRepository} from "../../src/store/config/repositories.js";
import {CHANNELS, PRIORITIES, type Channel, type Priority} from "../../src/domain/vocabulary.js";

afterEach(stopRig);

/**
 * The escalation model's sibling for device integrations (issue 30): email integrations with and
 * without rules, unmapped "page", "keep" or left to the default, receive mails through the real
 * EmailIntake and the shared DeviceIntake (what the SMTP listener calls, in process), among
 * outages, acknowledgements, resolves and restarts. After every command the invariants of
 * `escalation-invariants.ts` hold, the auditor's question among them; and every mail did what its
 * integration says: a mail no rule maps, under "page", is an alert (new or merged) the auditor
 * then holds to the first-page deadline; under "keep" it is counted as unmapped and warned about
 * on /readyz, never silently dropped.
 */

const DOMAIN = "alerts.plant.lan";
/** Rules a plant writes for its NAS and UPS mails ("contains", matched case-insensitively). */
const RULES = [
  {field: "subject", match: "contains", pattern: "RAID degraded", action: "fire", alert_key: "raid", priority: "high"},
  {field: "subject", match: "contains", pattern: "RAID rebuilt", action: "resolve", alert_key: "raid"},
  {field: "subject", match: "contains", pattern: "on battery", action: "fire", alert_key: "ups", priority: "critical"},
  {field: "subject", match: "contains", pattern: "on mains", action: "resolve", alert_key: "ups"}
];
/** Subjects some rules map and some none does. */
const SUBJECTS = [
  "RAID degraded",
  "RAID rebuilt",
  "UPS 2 on battery",
  "UPS 2 on mains",
  "Fan 3 failed",
  "Weekly report"
];
const SENDERS = ["nas@plant.lan", "ups@plant.lan"];

interface Person {
  channels: Channel[];
  ack: number;
  quiet: {start: number; end: number} | null;
}

interface IntegrationSpec {
  target: number;
  /** Indexes into RULES; empty: an integration with no rules, every mail unmapped. */
  rules: number[];
  /** null: not given, so the default ("page"). */
  unmapped: "page" | "keep" | null;
  priority: Priority;
}

type Command =
  | {kind: "mail"; integration: number; subject: number; sender: number}
  | {kind: "wait"; seconds: number}
  | {kind: "channel"; channel: Channel; up: boolean}
  | {kind: "ack" | "resolve"; pick: number}
  | {kind: "restart"};

interface Scenario {
  people: Person[];
  integrations: IntegrationSpec[];
  commands: Command[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  people: fc.array(
    fc.record({
      channels: fc.uniqueArray(fc.constantFrom(...CHANNELS), {minLength: 1, maxLength: 3}),
      ack: fc.integer({min: 30, max: 600}),
      quiet: fc.option(fc.record({start: fc.integer({min: 0, max: 23}), end: fc.integer({min: 0, max: 23})}), {
        freq: 2
      })
    }),
    {minLength: 1, maxLength: 2}
  ),
  integrations: fc.array(
    fc.record({
      target: fc.nat(2),
      rules: fc.oneof(fc.constant<number[]>([]), fc.uniqueArray(fc.nat(RULES.length - 1), {minLength: 1})),
      unmapped: fc.constantFrom("page" as const, "keep" as const, null),
      priority: fc.constantFrom(...PRIORITIES.slice(0, 4))
    }),
    {minLength: 1, maxLength: 3}
  ),
  commands: fc.array(
    fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          kind: fc.constant("mail" as const),
          integration: fc.nat(2),
          subject: fc.nat(SUBJECTS.length - 1),
          sender: fc.nat(SENDERS.length - 1)
        })
      },
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant("wait" as const),
          seconds: fc.oneof(fc.integer({min: 1, max: 90}), fc.integer({min: 90, max: 6 * 3600}))
        })
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant("channel" as const),
          channel: fc.constantFrom(...CHANNELS),
          up: fc.boolean()
        })
      },
      {weight: 1, arbitrary: fc.record({kind: fc.constantFrom("ack" as const, "resolve" as const), pick: fc.nat()})},
      {weight: 1, arbitrary: fc.constant({kind: "restart" as const})}
    ),
    {minLength: 1, maxLength: 14}
  )
});

const hh = (hour: number) => `${String(hour).padStart(2, "0")}:00`;

async function createTargets(r: Rig, people: Person[]): Promise<string[]> {
  const uuids: string[] = [];
  for (const [index, p] of people.entries())
    uuids.push(
      await r.recipient({
        name: `person ${index}`,
        phone: `+4915100000${String(index).padStart(3, "0")}`,
        email: `person${index}@factory.lan`,
        telegram_id: String(1000 + index),
        channel_order: p.channels,
        escalation: {ack_timeout_seconds: p.ack, repeat: 0},
        ...(p.quiet && p.quiet.start !== p.quiet.end
          ? {quiet_hours: {start: hh(p.quiet.start), end: hh(p.quiet.end), timezone: "Europe/Berlin"}}
          : {})
      })
    );
  const group = await r.gw.call("POST", "/api/v1/groups", {
    body: {name: "maintenance crew", members: uuids, strategy: "sequential"}
  });
  expect(group.status).toBe(201);
  return [...uuids, group.body.uuid];
}

async function createIntegrations(r: Rig, targets: string[], specs: IntegrationSpec[]) {
  const created: Array<{id: string; address: string; spec: IntegrationSpec}> = [];
  for (const [index, spec] of specs.entries()) {
    const answer = await r.gw.call("POST", "/api/v1/integrations", {
      body: {
        name: `device mails ${index}`,
        kind: "email",
        target: targets[spec.target % targets.length],
        default_priority: spec.priority,
        ...(spec.rules.length ? {rules: spec.rules.map((rule) => RULES[rule])} : {}),
        ...(spec.unmapped ? {unmapped: spec.unmapped} : {})
      }
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    created.push({id: answer.body.id, address: answer.body.address, spec});
  }
  return created;
}

/** How often (sender, subject) was taken as an alert: the occurrences of alerts from that sender titled so. */
function occurrences(r: Rig, sender: string, subject: string): number {
  return r.gw.gateway.journal.db
    .prepare("SELECT COALESCE(SUM(occurrences), 0) FROM notifications WHERE source = ? AND substr(message, 1, ?) = ?")
    .pluck()
    .get(sender, subject.length, subject) as number;
}

async function unmappedCount(r: Rig, id: string): Promise<number> {
  return (await r.gw.call("GET", `/api/v1/integrations/${id}`)).body.stats.unmapped;
}

async function run(s: Scenario): Promise<void> {
  const r = await makeRig({}, {...ALL_CHANNELS_CONFIGURED, inbound_email: {domain: DOMAIN}});
  const observed: Observed = {voiceCalls: [], restarts: []};
  const targets = await createTargets(r, s.people);
  const integrations = await createIntegrations(r, targets, s.integrations);
  const regex = new TimedRegex();
  // The listener's own EmailIntake over the gateway's intake, built again after a restart.
  const mails = () =>
    new EmailIntake({
      integrations: new IntegrationsRepository(r.gw.gateway.config),
      intake: r.gw.gateway.deviceIntake,
      domain: () => DOMAIN,
      matcher: (pattern, text) => regex.match(pattern, text)
    });
  const tick = observingTick(r, observed);
  for (const c of s.commands) {
    if (c.kind === "mail") {
      const {id, address, spec} = integrations[c.integration % integrations.length];
      const [subject, sender] = [SUBJECTS[c.subject], SENDERS[c.sender]];
      const mapped = spec.rules.some((rule) => subject.toLowerCase().includes(RULES[rule].pattern.toLowerCase()));
      const [pagedBefore, keptBefore] = [occurrences(r, sender, subject), await unmappedCount(r, id)];
      const answer = await mails().deliver({
        sender,
        recipients: [address],
        subject,
        text: `${subject} at ${new Date(r.clock.now()).toISOString()}`,
        size: 200,
        remoteAddress: "192.0.2.7"
      });
      expect(answer, `${subject} from ${sender}`).toEqual({accepted: true});
      if (!mapped && spec.unmapped === "keep") {
        expect(await unmappedCount(r, id), `unmapped "${subject}" counted (keep)`).toBe(keptBefore + 1);
        const ready = await r.gw.call("GET", "/readyz");
        expect(
          ready.body.unmapped_kept.map((warning: {integration_id: string}) => warning.integration_id),
          `unmapped "${subject}" warned about on /readyz (keep)`
        ).toContain(id);
        expect(occurrences(r, sender, subject), `unmapped "${subject}" paged under keep`).toBe(pagedBefore);
      } else if (!mapped) {
        expect(
          occurrences(r, sender, subject),
          `unmapped "${subject}" became an alert (${spec.unmapped ?? "default"})`
        ).toBe(pagedBefore + 1);
        expect(await unmappedCount(r, id), `unmapped "${subject}" paged yet counted as kept`).toBe(keptBefore);
      }
    } else if (c.kind === "wait") {
      r.clock.advance(c.seconds * 1000);
    } else if (c.kind === "channel") {
      await setChannel(r, c.channel, c.up);
    } else if (c.kind === "ack" || c.kind === "resolve") {
      const id = openAlert(r, c.pick);
      if (id) await r.gw.call("POST", `/api/v1/notifications/${id}/${c.kind}`, {body: {}});
    } else {
      await r.restart();
      observed.restarts.push(r.clock.now());
    }
    await tick();
    checkInvariants(r, observed, {settled: false});
  }
  await settleEverything(r, modelDrivers(r), tick);
  checkInvariants(r, observed, {settled: true});
}

describe("escalation runner with device integrations, model-based", () => {
  it("keeps every invariant while devices mail integrations with and without rules", {timeout: 120_000}, async () => {
    await assertModel(scenario, run, {seed: 20261128, runs: 25});
  });
});
