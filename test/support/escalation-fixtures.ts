import type {MemberPolicy, PolicySnapshot} from "../../src/domain/policy.js";
import type {QuietHours} from "../../src/domain/recipient.js";
import type {Channel, GroupStrategy, Priority} from "../../src/domain/vocabulary.js";

/** A member policy as snapshotPolicy would freeze it, with a contact for every channel it names. */
export function member(uuid: string, channels: Channel[], overrides: Partial<MemberPolicy> = {}): MemberPolicy {
  const address: Record<Channel, string> = {
    telegram_voice: `tg-${uuid}`,
    voice_call: `+49-${uuid}`,
    sms: `+49-${uuid}`,
    email: `${uuid}@example.org`
  };
  const contacts: Partial<Record<Channel, string>> = {};
  for (const channel of channels) contacts[channel] = address[channel];
  return {
    recipient_uuid: uuid,
    name: uuid,
    channels,
    contacts,
    ack_timeout_seconds: 120,
    repeat: 1,
    quiet_hours: null,
    ...overrides
  };
}

/** A snapshot for one recipient (sequential with one member) or a group. */
export function snapshot(
  strategy: GroupStrategy,
  members: MemberPolicy[],
  priority: Priority = "high"
): PolicySnapshot {
  const kind = members.length === 1 && strategy === "sequential" ? "recipient" : "group";
  return {target: {uuid: "target", kind, name: "target"}, priority, strategy, members};
}

/** Quiet hours that let only critical alerts through. */
export function quiet(start: string, end: string, timezone: string): QuietHours {
  return {start, end, timezone, allow_priorities: ["critical"]};
}
