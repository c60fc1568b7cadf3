import {BlockList, isIP} from "node:net";

/** Where webhooks may be sent, beyond being an http(s) URL. */
export interface DestinationPolicy {
  /**
   * Let a destination be link-local (169.254.0.0/16, fe80::/10: cloud metadata services, zero-conf
   * devices) or unspecified (0.0.0.0/8, `::`: on Linux, this host). Off unless the
   * `webhooks.allow_link_local` setting turns it on.
   */
  allowLinkLocal: boolean;
}

export const STRICT_DESTINATIONS: DestinationPolicy = Object.freeze({allowLinkLocal: false});

// IPv4-mapped IPv6 forms (::ffff:169.254.0.1) match the IPv4 rules too: BlockList compares them as IPv4.
const REFUSED = new BlockList();
REFUSED.addSubnet("169.254.0.0", 16, "ipv4");
REFUSED.addSubnet("0.0.0.0", 8, "ipv4");
REFUSED.addSubnet("fe80::", 10, "ipv6");
REFUSED.addAddress("::", "ipv6");

const UNLESS_ALLOWED = "refused unless the webhooks.allow_link_local setting is on";

/** Why this address (an IP literal, IPv6 without brackets) may not receive webhooks, or null; `via` names the host it came from. */
export function refusedAddress(address: string, policy: DestinationPolicy, via?: string): string | null {
  const family = isIP(address);
  if (family === 0 || policy.allowLinkLocal) return null;
  if (!REFUSED.check(address, family === 4 ? "ipv4" : "ipv6")) return null;
  return `${via ? `${via} resolves to ${address}, ` : `${address} is `}a link-local or unspecified address: ${UNLESS_ALLOWED}`;
}

/**
 * Why a webhook URL is refused, or null. Credentials in the URL are refused outright: fetch
 * cannot send them (every delivery would fail) and the URL is shown and audited, so the password
 * would be too; a receiver that wants a secret checks the signature instead. A host written as an
 * IP literal is checked here; a name is checked when a delivery resolves it (the dispatcher).
 * The text never repeats the URL, so it cannot carry the password anywhere.
 */
export function refusedDestination(url: URL, policy: DestinationPolicy): string | null {
  if (url.username || url.password)
    return "must not contain a user name or password (user:pass@); the receiver can verify the webhook-signature header instead";
  return refusedAddress(bareHost(url), policy);
}

/** The URL's host as an address is written outside a URL: an IPv6 literal without its brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}
