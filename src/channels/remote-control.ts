import type {PhoneOwner, RemoteControlPort} from "./channel.js";
import {sameLine} from "../lib/phone-number.js";

/**
 * The recipient whose phone number `number` is (E.164 or the national form the network may
 * report), or null for a stranger. Two recipients sharing one phone: the first one listed.
 */
export function phoneOwnerOf(remote: RemoteControlPort, number: string | null): PhoneOwner | null {
  if (!number) return null;
  return remote.phoneOwners().find((owner) => sameLine(number, owner.phone)) ?? null;
}
