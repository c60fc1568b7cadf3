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

// OPC UA's MessageSecurityMode numbers, as node-opcua writes them in its messages.
const MESSAGE_SECURITY_MODES: Record<number, string> = {1: "None", 2: "Sign", 3: "SignAndEncrypt"};

/** Status codes that mean the server refused Klaxon's certificate: the fix is on the server. */
const UNTRUSTED =
  /BadSecurityChecksFailed|BadCertificateUntrusted|BadCertificateInvalid|BadCertificateRevoked|BadCertificateIssuerRevoked|BadCertificateUseNotAllowed|BadCertificateChainIncomplete/;

/** Where the box's certificate and trust folders are, so an untrusted-certificate message can say what to do. */
export interface OwnCertificateInfo {
  /** The box's own certificate, to trust on the server. */
  readonly path: string;
  readonly thumbprint: string;
  /** Where a server's certificate goes to be trusted by Klaxon. */
  readonly trustedFolder: string;
  /** Where Klaxon saves a server certificate it does not trust yet, and the latest one saved there. */
  readonly rejectedFolder: string;
  readonly lastRejected: string | null;
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

/** What to do when Klaxon does not trust the server's certificate: the fix is on the box. */
export function untrustedServerWords(certificate: OwnCertificateInfo): string {
  const saved = certificate.lastRejected ?? `a file in ${certificate.rejectedFolder}`;
  return (
    `Klaxon does not trust the server's certificate yet: it was saved as ${saved}; if it is the ` +
    "server's (compare its thumbprint with the one the server shows), move it into " +
    `${certificate.trustedFolder}. Klaxon reconnects by itself.`
  );
}

/**
 * Any error from the OPC UA client as words a plant engineer reads: a refused connection, a name
 * that does not resolve, a timeout, a certificate one side does not trust with what to do on
 * that side, and any status code named and explained. Secrets are redacted.
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
  // node-opcua's own check of the server's certificate fails with the same status names as a
  // server's refusal of ours: its message is what tells the two apart.
  if (/server certificate verification failed/i.test(text)) return untrustedServerWords(certificate);
  if (UNTRUSTED.test(text)) return untrustedCertificateWords(certificate);
  const noEndpoint = /Cannot find an Endpoint matching\s+security mode: (\d) policy: \S*#(\S+)/i.exec(text);
  if (noEndpoint) {
    const mode = MESSAGE_SECURITY_MODES[Number(noEndpoint[1])] ?? noEndpoint[1];
    return (
      `the server offers no endpoint with security mode ${mode} and policy ${noEndpoint[2]}: ` +
      "choose a mode and policy the server has enabled, or enable this one on the server"
    );
  }
  const status = statusNameIn(text);
  if (status) return statusInWords(status);
  return redactString(message.split("\n")[0] ?? message).slice(0, 300) || "unknown error";
}
