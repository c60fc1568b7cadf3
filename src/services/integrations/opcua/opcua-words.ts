import {redactString} from "../../../lib/redact.js";

/** What the plant engineer reads beside an OPC UA status code's name: the common ones explained. */
const EXPLAINED: Record<string, string> = {
  BadTimeout: "the server did not answer in time",
  BadRequestTimeout: "the server did not answer in time",
  BadCommunicationError: "the connection to the server failed",
  BadConnectionClosed: "the server closed the connection",
  BadConnectionRejected: "the server refused the connection",
  BadServerHalted: "the server has stopped",
  BadShutdown: "the server is shutting down",
  BadServerNotConnected: "not connected to the server",
  BadSessionIdInvalid: "the session was lost (the server no longer knows it)",
  BadSessionClosed: "the session was closed by the server",
  BadSessionNotActivated: "the session was not activated",
  BadSecureChannelClosed: "the secure channel was closed",
  BadSecureChannelIdInvalid: "the secure channel was lost",
  BadTooManySessions: "the server has no room for another session",
  BadTooManySubscriptions: "the server has no room for another subscription",
  BadIdentityTokenInvalid: "the server does not accept this kind of login (anonymous or user name)",
  BadIdentityTokenRejected: "the server rejected the user name or password",
  BadUserAccessDenied: "the server rejected the user name or password, or the user may not do this",
  BadNodeIdUnknown: "the server has no node with this id",
  BadNodeIdInvalid: "the node id is not valid",
  BadAttributeIdInvalid: "the node has no value to read",
  BadNotReadable: "the node may not be read by this user",
  BadWaitingForInitialData: "the server has no value yet",
  BadOutOfService: "the server reports the point out of service",
  BadDeviceFailure: "the server reports a device failure",
  BadSensorFailure: "the server reports a sensor failure",
  BadNoCommunication: "the server has no communication with the device",
  BadConditionBranchAlreadyAcked: "the alarm was already acknowledged",
  BadConditionDisabled: "the alarm condition is disabled",
  BadEventIdUnknown: "the alarm changed since it was read (unknown event id)",
  BadMethodInvalid: "the server has no such method on this alarm",
  BadSecurityModeRejected: "the server does not offer this security mode",
  BadSecurityPolicyRejected: "the server does not offer this security policy",
  BadCertificateTimeInvalid: "a certificate is expired or not yet valid (check both clocks)",
  BadCertificateUriInvalid: "the certificate's application URI does not match",
  BadCertificateHostNameInvalid: "the server's certificate does not name this host"
};

/** Status codes that mean the server refused Klaxon's certificate: the fix is on the server. */
const UNTRUSTED =
  /BadSecurityChecksFailed|BadCertificateUntrusted|BadCertificateInvalid|BadCertificateRevoked|BadCertificateIssuerRevoked|BadCertificateUseNotAllowed|BadCertificateChainIncomplete/;

/** Where the box's own certificate is, so an untrusted-certificate message can say what to trust. */
export interface OwnCertificateInfo {
  readonly path: string;
  readonly thumbprint: string;
}

/** A status code's name ("BadUserAccessDenied") as words, the name kept for searching the server's manual. */
export function statusInWords(name: string): string {
  const explained = EXPLAINED[name];
  if (explained) return `${explained} (${name})`;
  const words = name
    .replace(/^(Bad|Uncertain|Good)/, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .trim();
  return words ? `${words} (${name})` : name;
}

/** The first OPC UA status code name that appears in a message, if any. */
function statusNameIn(message: string): string | null {
  return /\b((?:Bad|Uncertain)[A-Za-z]+)\b/.exec(message)?.[1] ?? null;
}

/** What the plant engineer must do when the server does not trust Klaxon's certificate. */
export function untrustedCertificateWords(certificate: OwnCertificateInfo): string {
  return (
    "the server does not trust Klaxon's certificate: on the server, trust the certificate " +
    `${certificate.path} (SHA-1 thumbprint ${certificate.thumbprint}); it is usually listed among the ` +
    "rejected client certificates once Klaxon has tried (Siemens TIA Portal: the PLC's OPC UA server " +
    "settings, client certificates; then download the configuration). Klaxon reconnects by itself."
  );
}

/**
 * Any error from the OPC UA client as words a plant engineer reads: a refused connection, a name
 * that does not resolve, a timeout, an untrusted certificate with what to do on the server, and
 * any status code named and explained. Secrets are redacted.
 */
export function opcUaErrorInWords(error: unknown, certificate: OwnCertificateInfo): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as {code?: unknown} | null)?.code;
  const text = `${typeof code === "string" ? code : ""} ${message}`;
  if (/ECONNREFUSED/.test(text)) return "connection refused: no OPC UA server is listening at that address and port";
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return "the server's host name does not resolve";
  if (/EHOSTUNREACH|ENETUNREACH/.test(text))
    return "the server's host cannot be reached (network down or wrong address)";
  if (/ECONNRESET|EPIPE/.test(text)) return "the server closed the connection";
  if (/ETIMEDOUT|timeout|timed out/i.test(text) && !statusNameIn(text)) return "the server did not answer in time";
  if (UNTRUSTED.test(text)) return untrustedCertificateWords(certificate);
  const status = statusNameIn(text);
  if (status) return statusInWords(status);
  return redactString(message.split("\n")[0] ?? message).slice(0, 300) || "unknown error";
}
