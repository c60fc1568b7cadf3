import fc from "fast-check";
import type {BoxChannels} from "../../src/domain/plan-coverage.js";
import type {QuietHours, Recipient, RoutingRule} from "../../src/domain/recipient.js";
import {CHANNELS, PRIORITIES, type Channel} from "../../src/domain/vocabulary.js";

/** Routing rules as a client may write them: any priorities to any channels, including rules that leave a priority with none. */
export const routingRulesArb: fc.Arbitrary<RoutingRule[]> = fc.array(
  fc.record({
    priorities: fc.subarray([...PRIORITIES], {minLength: 1}),
    channels: fc.subarray([...CHANNELS], {minLength: 1})
  }),
  {maxLength: 3}
);

const HH_MM = fc
  .tuple(fc.integer({min: 0, max: 23}), fc.constantFrom(0, 30))
  .map(([hour, minute]) => `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`);

/** Quiet hours in a few zones, letting through any set of priorities. */
export const quietHoursArb: fc.Arbitrary<QuietHours> = fc
  .record({
    start: HH_MM,
    end: HH_MM,
    timezone: fc.constantFrom("UTC", "Europe/Berlin", "America/New_York"),
    allow_priorities: fc.subarray([...PRIORITIES])
  })
  .filter((quiet) => quiet.start !== quiet.end);

/** A recipient with any contacts (at least one), any channel_order, routing rules and optional quiet hours. */
export function recipientArb(uuid: string): fc.Arbitrary<Recipient> {
  return fc
    .record({
      telegram_id: fc.option(fc.constant(`tg-${uuid}`)),
      phone: fc.option(fc.constant("+4915112345678")),
      email: fc.option(fc.constant(`${uuid}@plant.lan`)),
      channel_order: fc.shuffledSubarray([...CHANNELS]),
      routing_rules: routingRulesArb,
      quiet_hours: fc.option(quietHoursArb)
    })
    .filter((fields) => fields.telegram_id !== null || fields.phone !== null || fields.email !== null)
    .map((fields) => ({
      uuid,
      name: uuid,
      ...fields,
      escalation: {ack_timeout_seconds: 120, repeat: 0},
      created_at: "2026-03-01T00:00:00.000Z",
      updated_at: "2026-03-01T00:00:00.000Z"
    }));
}

/** The channels a box has not configured (no modem: voice_call and sms together), as the gateway words it. */
export const boxArb: fc.Arbitrary<{unconfigured: Channel[]; box: BoxChannels}> = fc
  .record({modem: fc.boolean(), smtp: fc.boolean(), telegram: fc.boolean()})
  .map(({modem, smtp, telegram}) => {
    const unconfigured: Channel[] = [
      ...(modem ? [] : (["voice_call", "sms"] as const)),
      ...(smtp ? [] : (["email"] as const)),
      ...(telegram ? [] : (["telegram_voice"] as const))
    ];
    return {unconfigured, box: (channel) => (unconfigured.includes(channel) ? `${channel} is not configured` : null)};
  });
