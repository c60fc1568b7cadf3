import {createServer, type Server, type Socket} from "node:net";
import fc from "fast-check";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {systemClock} from "../../../../src/lib/clock.js";
import {createLogger} from "../../../../src/lib/logger.js";
import {ModbusLink} from "../../../../src/services/integrations/modbus/modbus-link.js";
import type {LinkStatus, PointReading} from "../../../../src/services/integrations/plc/plc-link.js";

// A device that answers every request with whatever bytes fast-check makes up (a broken
// gateway, a wrong protocol on the port, line noise): its link reports it in words and goes on;
// nothing escapes into the process (an uncaught exception would fail this file).
let server: Server;
let answers: Buffer[] = [];
const sockets = new Set<Socket>();
beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    socket.on("data", (request) => {
      const answer = answers.shift();
      if (!answer) return;
      // Half the time with the request's own transaction id, so the client reads into the body.
      if (answer.length >= 2 && answer[0] % 2 === 0) request.copy(answer, 0, 0, 2);
      socket.write(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("a Modbus link whose device answers garbage", () => {
  it("reports bad readings and a failure in words, never throwing", async () => {
    const port = (server.address() as {port: number}).port;
    const logger = createLogger("error", () => undefined);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({minLength: 0, maxLength: 40}), {minLength: 3, maxLength: 3}),
        async (garbage) => {
          answers = garbage.map((bytes) => Buffer.from(bytes));
          const link = new ModbusLink(
            {
              transport: {kind: "tcp", host: "127.0.0.1", port},
              unitId: 1,
              pollIntervalMs: 1000,
              timeoutMs: 150,
              points: [
                {
                  name: "a",
                  table: "holding_register",
                  address: 0,
                  type: "float32",
                  wordOrder: "high_first",
                  scale: 1,
                  offset: 0
                },
                {name: "b", table: "coil", address: 0, type: "bool", wordOrder: "high_first", scale: 1, offset: 0}
              ]
            },
            {clock: systemClock, logger}
          );
          const statuses: LinkStatus[] = [];
          const readings: PointReading[] = [];
          link.start({reading: (reading) => readings.push(reading), link: (status) => statuses.push(status)});
          const now = await link.readNow();
          await link.stop();
          expect(now).toHaveLength(2);
          for (const reading of now) expect(reading.value === null).toBe(reading.quality === "bad");
          for (const status of statuses) if (status.state === "unreachable") expect(status.error).toMatch(/\w/);
        }
      ),
      {numRuns: 15}
    );
  }, 60_000);
});
