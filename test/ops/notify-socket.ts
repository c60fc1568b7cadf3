import {spawn} from "node:child_process";
import {existsSync} from "node:fs";
import {join} from "node:path";
import {tempDir} from "../support/gateway.js";

/**
 * A real sd_notify receiver: a unix datagram socket, as systemd's NOTIFY_SOCKET is. Node cannot
 * bind one, so python3 does, printing each datagram as a JSON line. systemd-notify's BARRIER=1
 * handshake is answered by reading it (the passed descriptor is closed on receipt).
 */
export interface NotifySocket {
  path: string;
  /** Every message so far, BARRIER=1 left out. */
  messages: string[];
  /** Resolves with the first message (already received or still to come) that matches. */
  waitFor(match: (message: string) => boolean, timeoutMs?: number): Promise<string>;
  close(): void;
}

const RECEIVER = `
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    print(json.dumps(s.recv(65536).decode()), flush=True)
`;

export async function openNotifySocket(): Promise<NotifySocket> {
  const path = join(tempDir("klaxon-notify-"), "notify.sock");
  const child = spawn("python3", ["-c", RECEIVER, path], {stdio: ["ignore", "pipe", "inherit"]});
  const messages: string[] = [];
  const waiters: Array<() => void> = [];
  let buffered = "";
  await new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line === "bound") resolve();
        else if (line) {
          const message = JSON.parse(line) as string;
          if (message !== "BARRIER=1") messages.push(message);
        }
      }
      for (const wake of waiters.splice(0)) wake();
    });
  });
  if (!existsSync(path)) throw new Error("the notify socket was not created");
  return {
    path,
    messages,
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching notification; got ${JSON.stringify(messages)}`)),
          timeoutMs
        );
        const check = () => {
          const found = messages.find(match);
          if (found !== undefined) {
            clearTimeout(timer);
            resolve(found);
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => child.kill()
  };
}
