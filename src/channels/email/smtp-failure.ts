/** The fields nodemailer puts on its errors that tell what failed. */
interface SmtpErrorShape {
  message?: string;
  code?: string;
  /** The system error behind it, e.g. ECONNREFUSED. */
  originalCode?: string;
  command?: string;
  responseCode?: number;
  response?: string;
}

/** What a failed send means for the contact and for the server. */
export interface SmtpFailure {
  /** Why, in the server's own words where it gave any; never a secret. */
  reason: string;
  /** The server refused this address for good (5xx to RCPT TO): the contact is marked unavailable. */
  permanent: boolean;
  /** The server itself cannot be used (down, timing out, refusing our login or sender): email is unavailable until a check passes. */
  serverFailing: boolean;
  /** The server refused the message for its size (552, or enhanced code 5.3.4): a shorter one may pass. */
  tooBig: boolean;
}

const SERVER_LEVEL_CODES = [
  "ECONNECTION",
  "ETIMEDOUT",
  "ESOCKET",
  "EDNS",
  "ETLS",
  "EAUTH",
  "EPROTOCOL",
  "ENOAUTH",
  "EREQUIRETLS"
];

/**
 * Removes the SMTP password from any text an error carries, as given and in the base64 forms
 * the AUTH exchange uses, in case a server echoes what it received.
 */
export function scrubSecret(text: string, secret: string): string {
  if (!secret) return text;
  const forms = [secret, Buffer.from(secret).toString("base64")].filter((form) => form.length >= 3);
  return forms.reduce((out, form) => out.split(form).join("[redacted]"), text);
}

function describe(error: SmtpErrorShape): string {
  const response = error.response?.replace(/\s+/g, " ").trim();
  const system = error.originalCode ? ` (${error.originalCode})` : "";
  switch (error.code) {
    case "EAUTH":
      return `SMTP login refused${response ? `: ${response}` : `: ${error.message ?? "authentication failed"}`}`;
    case "ETIMEDOUT":
      return `SMTP server did not answer in time${system}`;
    case "ECONNECTION":
    case "ESOCKET":
    case "EDNS":
    case "ETLS":
      return `SMTP connection failed${system}: ${error.message ?? "unknown error"}`;
    default:
      return response
        ? `SMTP ${error.command ?? "server"} answered ${response}`
        : `SMTP error: ${error.message ?? "unknown error"}`;
  }
}

/**
 * Sorts a send failure: a message too big is its own kind (the driver sends a shorter one); a
 * 5xx to RCPT TO is the address's fault and permanent; anything about
 * the connection, TLS, login or sender is the server's (transient, and email stops being
 * offered until a check passes); a 4xx or a refused message body is transient for this one
 * email only, since the server did answer.
 */
export function classifySmtpFailure(raw: unknown, password: string): SmtpFailure {
  const error = (raw && typeof raw === "object" ? raw : {message: String(raw)}) as SmtpErrorShape;
  const reason = scrubSecret(describe(error), password);
  const code = error.code ?? error.originalCode ?? "";
  const status = error.responseCode ?? 0;
  // RFC 5321 552 to MAIL FROM (the SIZE parameter) or to the end of DATA, or RFC 3463's 5.3.4
  // anywhere: the message, not the server or the address. A 552 to RCPT TO is a full mailbox.
  if ((status === 552 && error.command !== "RCPT TO") || /\b5\.3\.4\b/.test(error.response ?? "")) {
    return {reason, permanent: false, serverFailing: false, tooBig: true};
  }
  if (code === "EENVELOPE" && error.command === "RCPT TO") {
    return {reason, permanent: status >= 500 && status < 600, serverFailing: false, tooBig: false};
  }
  // The sender refused for every message, or the server closing with 421: no email can go out.
  const senderRefused = code === "EENVELOPE" && error.command === "MAIL FROM" && status >= 500;
  const serverLevel = SERVER_LEVEL_CODES.includes(code) || code.startsWith("ECONN") || status === 421 || senderRefused;
  return {reason, permanent: false, serverFailing: serverLevel, tooBig: false};
}
