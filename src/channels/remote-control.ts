import type {PhoneOwner, RemoteControlPort} from "./channel.js";
import {sameNumber} from "./sms/sms-text.js";

/**
 * The recipient whose phone number `number` is (E.164 or the national form the network may
 * report), or null for a stranger. Two recipients sharing one phone: the first one listed.
 */
export function phoneOwnerOf(remote: RemoteControlPort, number: string | null): PhoneOwner | null {
  if (!number) return null;
  return remote.phoneOwners().find((owner) => sameNumber(number, owner.phone)) ?? null;
}
