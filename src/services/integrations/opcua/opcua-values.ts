import {
  DataType,
  type DataValue,
  MessageSecurityMode,
  type NodeId,
  resolveNodeId,
  SecurityPolicy
} from "node-opcua-client";
import type {PointReading} from "../plc/plc-link.js";

// What the OPC UA link's configuration and the server's values become: node ids, security
// settings, and readings the alarm conditioning can compare.

/** The node id, or null when the text is not one (the point then reads bad, in words). */
export function nodeIdOf(text: string): NodeId | null {
  try {
    return resolveNodeId(text);
  } catch {
    return null;
  }
}

export function securityModeOf(mode: "None" | "Sign" | "SignAndEncrypt"): MessageSecurityMode {
  return MessageSecurityMode[mode];
}

export function securityPolicyOf(policy: string): SecurityPolicy {
  const known = SecurityPolicy[policy as keyof typeof SecurityPolicy];
  if (!known || known === SecurityPolicy.Invalid) {
    throw new Error(
      `security policy "${policy}" is not one OPC UA defines (None, Basic256Sha256, Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss)`
    );
  }
  return known;
}

/** A point's value as a number or a boolean; null for what the conditioning cannot compare (text, NaN, arrays). */
function numericValue(dataValue: DataValue | undefined): number | boolean | null {
  const variant = dataValue?.value;
  const value: unknown = variant?.value;
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint") return Number(value);
  // node-opcua carries 64-bit integers as [high, low] 32-bit words.
  if ((variant?.dataType === DataType.Int64 || variant?.dataType === DataType.UInt64) && Array.isArray(value)) {
    const [high, low] = value as [number, number];
    return high * 2 ** 32 + (low >>> 0);
  }
  return null;
}

/** A DataValue as a reading: bad (and null) when the server says bad or the value is not comparable. */
export function pointReading(point: string, dataValue: DataValue | undefined, readAt: Date): PointReading {
  const status = dataValue?.statusCode;
  const value = numericValue(dataValue);
  if (!status || status.isBad() || value === null) return {point, value: null, quality: "bad", readAt};
  return {point, value, quality: status.isGood() ? "good" : "uncertain", readAt};
}
