import {randomBytes} from "node:crypto";
import {readFileSync, writeFileSync} from "node:fs";

const KEY_BYTES = 32;

/**
 * The key that signs acknowledge links: 32 random bytes made on first start, kept as hex at
 * `path` (`<data dir>/ack-link.key`, mode 0600) beside the journal, so backups keep links working
 * and deleting the file revokes every link ever sent. Made with an exclusive create, so two
 * processes starting at once cannot end up with different keys.
 */
export function loadAckLinkKey(path: string): Buffer {
  try {
    writeFileSync(path, randomBytes(KEY_BYTES).toString("hex") + "\n", {mode: 0o600, flag: "wx"});
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const hex = readFileSync(path, "utf8").trim();
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw new Error(
      `${path} does not hold a 64-hex-digit key; delete it to make a new one (links already sent stop working)`
    );
  return Buffer.from(hex, "hex");
}
