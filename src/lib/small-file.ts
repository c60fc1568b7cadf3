import {constants} from "node:fs";
import {open, stat} from "node:fs/promises";

/** The most a certificate or key file may hold: a PEM bundle of every public CA is about 200 KB. */
export const SMALL_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Reads a small regular file (a CA bundle, a certificate, a key) off the main thread. Anything
 * else is refused with words saying what it is: a FIFO would block the open until a writer came
 * (on the main thread with readFileSync, or holding one of libuv's four pool threads, which the
 * journal's flushes need, with fs.promises), a device or /dev/zero would never end, a directory
 * is a mistake. The open itself is non-blocking, in case the path is swapped for a FIFO after
 * the check.
 */
export async function readSmallFile(path: string, maxBytes = SMALL_FILE_MAX_BYTES): Promise<Buffer> {
  refuseUnlessRegular(await stat(path), maxBytes);
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    refuseUnlessRegular(info, maxBytes);
    const buffer = Buffer.alloc(info.size);
    let filled = 0;
    while (filled < buffer.length) {
      const {bytesRead} = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

function refuseUnlessRegular(info: Awaited<ReturnType<typeof stat>>, maxBytes: number): void {
  if (info.isFIFO()) throw new Error("it is a FIFO (named pipe), not a regular file");
  if (info.isDirectory()) throw new Error("it is a directory, not a file");
  if (!info.isFile()) throw new Error("it is a device or socket, not a regular file");
  if (info.size > maxBytes) throw new Error(`it holds ${info.size} bytes, over the limit of ${maxBytes}`);
}
