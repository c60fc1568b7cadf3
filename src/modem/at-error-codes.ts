// The error codes a modem answers with, in the words of the specifications, so that a log line
// or /readyz says "invalid memory index" instead of "+CMS ERROR: 321". One table per result code:
// +CME ERROR from 3GPP TS 27.007 clause 9.2 (9.2.1 general, 9.2.2 GPRS and EPS), +CMS ERROR from
// 3GPP TS 27.005 clause 3.2.5, whose 0-127 are the RP causes of TS 24.011 annex E.2 and 128-255
// the TP-Failure-Cause of TS 23.040 clause 9.2.3.22.

/** Which family an extended error belongs to: mobile equipment (+CME) or message service (+CMS). */
export type ExtendedErrorKind = "cme" | "cms";

const CME_ERRORS: Readonly<Record<number, string>> = {
  0: "phone failure",
  1: "no connection to phone",
  2: "phone-adaptor link reserved",
  3: "operation not allowed",
  4: "operation not supported",
  5: "PH-SIM PIN required",
  6: "PH-FSIM PIN required",
  7: "PH-FSIM PUK required",
  10: "SIM not inserted",
  11: "SIM PIN required",
  12: "SIM PUK required",
  13: "SIM failure",
  14: "SIM busy",
  15: "SIM wrong",
  16: "incorrect password",
  17: "SIM PIN2 required",
  18: "SIM PUK2 required",
  20: "memory full",
  21: "invalid index",
  22: "not found",
  23: "memory failure",
  24: "text string too long",
  25: "invalid characters in text string",
  26: "dial string too long",
  27: "invalid characters in dial string",
  30: "no network service",
  31: "network timeout",
  32: "network not allowed - emergency calls only",
  40: "network personalization PIN required",
  41: "network personalization PUK required",
  42: "network subset personalization PIN required",
  43: "network subset personalization PUK required",
  44: "service provider personalization PIN required",
  45: "service provider personalization PUK required",
  46: "corporate personalization PIN required",
  47: "corporate personalization PUK required",
  48: "hidden key required",
  49: "EAP method not supported",
  50: "incorrect parameters",
  51: "command implemented but currently disabled",
  52: "command aborted by user",
  53: "not attached to network due to MT functionality restrictions",
  54: "modem not allowed - MT restricted to emergency calls only",
  55: "operation not allowed because of MT functionality restrictions",
  56: "fixed dial number only allowed - called number is not a fixed dial number",
  57: "temporarily out of service due to other MT usage",
  58: "language/alphabet not supported",
  59: "unexpected data value",
  60: "system failure",
  61: "data missing",
  62: "call barred",
  63: "message waiting indication subscription failure",
  100: "unknown",
  103: "illegal MS",
  106: "illegal ME",
  107: "GPRS services not allowed",
  108: "GPRS services and non-GPRS services not allowed",
  111: "PLMN not allowed",
  112: "location area not allowed",
  113: "roaming not allowed in this location area",
  114: "GPRS services not allowed in this PLMN",
  115: "no suitable cells in location area",
  122: "congestion",
  125: "insufficient resources",
  126: "missing or unknown APN",
  127: "unknown PDP address or PDP type",
  128: "user authentication failed",
  129: "activation rejected by GGSN, Serving GW or PDN GW",
  130: "activation rejected, unspecified",
  131: "service option not supported",
  132: "requested service option not subscribed",
  133: "service option temporarily out of order",
  134: "NSAPI already used",
  148: "unspecified GPRS error",
  149: "PDP authentication failure",
  150: "invalid mobile class"
};

const CMS_ERRORS: Readonly<Record<number, string>> = {
  // RP causes (TS 24.011 annex E.2): the network's answer to a message we sent.
  1: "unassigned (unallocated) number",
  8: "operator determined barring",
  10: "call barred",
  21: "short message transfer rejected",
  27: "destination out of service",
  28: "unidentified subscriber",
  29: "facility rejected",
  30: "unknown subscriber",
  38: "network out of order",
  41: "temporary failure",
  42: "congestion",
  47: "resources unavailable, unspecified",
  50: "requested facility not subscribed",
  69: "requested facility not implemented",
  81: "invalid short message transfer reference value",
  95: "invalid message, unspecified",
  96: "invalid mandatory information",
  97: "message type non-existent or not implemented",
  98: "message not compatible with short message protocol state",
  99: "information element non-existent or not implemented",
  111: "protocol error, unspecified",
  127: "interworking, unspecified",
  // TP-Failure-Cause (TS 23.040 9.2.3.22): the service centre's answer.
  128: "telematic interworking not supported",
  129: "short message type 0 not supported",
  130: "cannot replace short message",
  143: "unspecified TP-PID error",
  144: "data coding scheme (alphabet) not supported",
  145: "message class not supported",
  159: "unspecified TP-DCS error",
  160: "command cannot be actioned",
  161: "command unsupported",
  175: "unspecified TP-Command error",
  176: "TPDU not supported",
  192: "SC busy",
  193: "no SC subscription",
  194: "SC system failure",
  195: "invalid SME address",
  196: "destination SME barred",
  197: "SM rejected - duplicate SM",
  198: "TP-VPF not supported",
  199: "TP-VP not supported",
  208: "SIM SMS storage full",
  209: "no SMS storage capability in SIM",
  210: "error in MS",
  211: "memory capacity exceeded",
  212: "SIM application toolkit busy",
  213: "SIM data download error",
  255: "unspecified error cause",
  // The modem's own (TS 27.005 3.2.5).
  300: "ME failure",
  301: "SMS service of ME reserved",
  302: "operation not allowed",
  303: "operation not supported",
  304: "invalid PDU mode parameter",
  305: "invalid text mode parameter",
  310: "SIM not inserted",
  311: "SIM PIN required",
  312: "PH-SIM PIN required",
  313: "SIM failure",
  314: "SIM busy",
  315: "SIM wrong",
  316: "SIM PUK required",
  317: "SIM PIN2 required",
  318: "SIM PUK2 required",
  320: "memory failure",
  321: "invalid memory index",
  322: "memory full",
  330: "SMSC address unknown",
  331: "no network service",
  332: "network timeout",
  340: "no +CNMA acknowledgement expected",
  500: "unknown error"
};

const TABLES: Record<ExtendedErrorKind, Readonly<Record<number, string>>> = {cme: CME_ERRORS, cms: CMS_ERRORS};

/**
 * The specification's words for a numeric code. Codes the tables leave out are named by their
 * range: 27.005 reserves 512 and up for manufacturers, and 27.007 leaves gaps a vendor may fill.
 */
export function describeErrorCode(kind: ExtendedErrorKind, code: number): string {
  const words = TABLES[kind][code];
  if (words) return words;
  if (kind === "cms" && code >= 512) return "manufacturer-specific error";
  if (kind === "cms" && code < 128) return "network error (RP cause)";
  if (kind === "cms" && code < 256) return "service centre error (TP cause)";
  return "error code not in 3GPP TS 27.007";
}

/** The code for the words a modem in verbose mode (CMEE=2) printed, or null when not in the table. */
export function codeForWords(kind: ExtendedErrorKind, words: string): number | null {
  const wanted = normalise(words);
  for (const [code, known] of Object.entries(TABLES[kind])) {
    if (normalise(known) === wanted) return Number(code);
  }
  return null;
}

// Firmware writes "SIM not inserted", "sim not inserted" or "(U)SIM not inserted".
function normalise(words: string): string {
  return words.toLowerCase().replace(/\(u\)/g, "").replace(/\s+/g, " ").trim();
}
