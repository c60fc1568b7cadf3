import {randomBytes} from "node:crypto";
import {readFileSync, writeFileSync} from "node:fs";

const KEY_BYTES = 32;

/** A fresh key, as the hex text it is kept in. */
export function newAckLinkKeyHex(): string {
  return randomBytes(KEY_BYTES).toString("hex");
}

/** The key in `hex` (as kept in a file or a journal document), refused unless it is 64 hex digits; `where` names the place. */
export function parseAckLinkKey(hex: string, where: string): Buffer {
  const trimmed = hex.trim();
  if (!/^[0-9a-f]{64}$/.test(trimmed))
    throw new Error(
      `${where} does not hold a 64-hex-digit key; delete it to make a new one (links already sent stop working)`
    );
  return Buffer.from(trimmed, "hex");
}

/**
 * The key that signs acknowledge links: 32 random bytes made on first start, kept as hex at
 * `path` (`<data dir>/ack-link.key`, mode 0600) beside the journal, so backups keep links working
 * and deleting the file revokes every link ever sent. Made with an exclusive create, so two
 * processes starting at once cannot end up with different keys.
 */
export function loadAckLinkKey(path: string): Buffer {
  try {
    writeFileSync(path, newAckLinkKeyHex() + "\n", {mode: 0o600, flag: "wx"});
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return parseAckLinkKey(readFileSync(path, "utf8"), path);
}
