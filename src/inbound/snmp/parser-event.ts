import type {ParserEvent, Peer, ReceivedTrap, TrapRefusal, UsmStamp} from "./trap-types.js";

// The parser worker reads hostile bytes with a library we did not write: what it hands back is
// checked here, field by field, before the main thread acts on it (design rule 14). Bounds are
// generous (a UDP datagram is at most 64 KiB) but keep a broken parser from passing anything odd on.
const MAX_TEXT = 65_536;
const MAX_VARBINDS = 4_096;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isText = (value: unknown, max = MAX_TEXT): value is string => typeof value === "string" && value.length <= max;
const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 32;
const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array && value.length <= MAX_TEXT;

function isPeer(value: unknown): value is Peer {
  return isRecord(value) && isText(value.address, 64) && isCount(value.port) && value.port <= 65_535;
}

function isRefusal(value: unknown): value is TrapRefusal {
  return isRecord(value) && isText(value.agent, 64) && isText(value.reason, 512) && isCount(value.size);
}

function isStamp(value: unknown): value is UsmStamp {
  return (
    isRecord(value) &&
    isText(value.engineId, 128) &&
    isCount(value.boots) &&
    isCount(value.time) &&
    isText(value.digest, 256)
  );
}

function isTrap(value: unknown): value is ReceivedTrap {
  if (!isRecord(value) || !isRecord(value.credential)) return false;
  const {credential, varbinds} = value;
  return (
    isText(value.agent, 64) &&
    (value.version === "v1" || value.version === "v2c" || value.version === "v3") &&
    (credential.kind === "community" || credential.kind === "user") &&
    isText(credential.name, 1024) &&
    typeof value.inform === "boolean" &&
    isText(value.trapOid, 1024) &&
    isCount(value.size) &&
    Array.isArray(varbinds) &&
    varbinds.length <= MAX_VARBINDS &&
    varbinds.every((varbind) => isRecord(varbind) && isText(varbind.oid, 1024) && isText(varbind.value))
  );
}

/** The event as the listener may use it, or null when it is not the shape of one. */
export function validParserEvent(event: unknown): ParserEvent | null {
  if (!isRecord(event)) return null;
  if (event.kind === "refused") return isRefusal(event.refusal) ? (event as ParserEvent) : null;
  if (event.kind === "reply") return isBytes(event.bytes) && isPeer(event.to) ? (event as ParserEvent) : null;
  if (event.kind !== "trap") return null;
  const valid =
    isTrap(event.trap) &&
    isPeer(event.from) &&
    (event.usm === null || isStamp(event.usm)) &&
    (event.reply === null || isBytes(event.reply));
  return valid ? (event as ParserEvent) : null;
}
