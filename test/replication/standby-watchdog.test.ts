import {afterAll, afterEach, describe, expect, it} from "vitest";
import {mkdirSync} from "node:fs";
import {join} from "node:path";
import {launchGatewayProcess, type LaunchedGateway} from "../support/gateway-process.js";
import {requireLitestream, endOrphanedLitestreams} from "../support/litestream.js";
import {openNotifySocket, type NotifySocket} from "../ops/notify-socket.js";
import {tempDir} from "../support/gateway.js";

afterAll(endOrphanedLitestreams);

let box: LaunchedGateway | null = null;
let socket: NotifySocket | null = null;
afterEach(async () => {
  // SIGTERM: the standby stops its follower on the way out.
  box?.child.kill("SIGTERM");
  await box?.exited;
  socket?.close();
  box = null;
  socket = null;
});

describe("a standby under systemd", () => {
  it(
    "says it is ready and keeps pinging the watchdog, so WatchdogSec does not kill a box that only stands by",
    {timeout: 60_000},
    async () => {
      socket = await openNotifySocket();
      const root = tempDir();
      const incoming = join(root, "incoming");
      mkdirSync(incoming);
      box = launchGatewayProcess(join(root, "data"), {
        NOTIFY_SOCKET: socket.path,
        WATCHDOG_USEC: "1000000",
        KLAXON_REPLICATION_ROLE: "standby",
        KLAXON_REPLICATION_BOX_NAME: "klaxon-b",
        // No active answers there, and the copy stays empty: it stands by and never takes over.
        KLAXON_REPLICATION_PEER: "http://127.0.0.1:9",
        KLAXON_REPLICATION_REPLICA: tempDir(),
        KLAXON_REPLICATION_INCOMING: incoming,
        KLAXON_REPLICATION_LITESTREAM: requireLitestream()
      });
      const ready = await socket.waitFor((message) => message.startsWith("READY=1"), 30_000);
      expect(ready).toMatch(/STATUS=serving on http:\/\/127\.0\.0\.1:\d+/);
      const readyAt = socket.messages.indexOf(ready);
      await socket.waitFor(
        (message) => socket!.messages.indexOf(message) > readyAt && message === "WATCHDOG=1",
        10_000
      );
    }
  );
});
