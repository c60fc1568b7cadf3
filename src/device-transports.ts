import {hostname} from "node:os";
import type {Settings} from "./settings/defaults.js";

/**
 * The domain of email integrations' addresses: inbound_email.domain, else the host of
 * public_url (the name people already reach the box by), else the box's hostname.
 */
export function inboundEmailDomain(settings: Settings): string {
  if (settings.inbound_email.domain) return settings.inbound_email.domain;
  if (settings.public_url) return new URL(settings.public_url).hostname;
  return hostname();
}
