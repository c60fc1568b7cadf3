import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {connect, type Socket} from "node:net";
import {createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";

// Issue 36 item 1: beyond what the box can take, a request is answered 503 with Retry-After at
// once instead of queueing without bound, and the alert it carried is not kept (the device,
// told to retry, keeps it). Two requests whose bodies are still arriving fill a bound of two.
const SEND = "/api/v1/notifications/send";

interface Pending {
  socket: Socket;
  /** Everything the gateway wrote back. */
  answer: string;
  rest: string;
}

/** A send whose headers and first half of the body are on the wire; `finish()` sends the rest. */
function startSend(gw: TestGateway, body: string): Promise<Pending> {
  const {hostname, port} = new URL(gw.url);
  const half = Math.floor(body.length / 2);
  return new Promise((resolve, reject) => {
    const socket = connect({host: hostname, port: Number(port)});
    const pending: Pending = {socket, answer: "", rest: body.slice(half)};
    socket.on("data", (chunk) => (pending.answer += chunk.toString()));
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.write(
        `POST ${SEND} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${gw.adminKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`
      );
      resolve(pending);
    });
  });
}

function alert(recipient: string, message: string): Record<string, string> {
  return {recipient_uuid: recipient, message, priority: "high", source: "overload-test"};
}

function kept(gw: TestGateway, message: string): number {
  const row = gw.gateway.journal.db.prepare("SELECT COUNT(*) AS n FROM notifications WHERE message = ?").get(message);
  return (row as {n: number}).n;
}

describe("overload", () => {
  let gw: TestGateway;
  let recipient: string;
  let pending: Pending[];

  beforeAll(async () => {
    gw = await startTestGateway({http: {max_requests_in_flight: 2}});
    recipient = await createRecipient(gw);
    pending = await Promise.all(
      ["held 1", "held 2"].map((message) => startSend(gw, JSON.stringify(alert(recipient, message))))
    );
  });

  afterAll(async () => {
    for (const held of pending) held.socket.destroy();
    await gw.stop();
  });

  it("answers a request beyond max_requests_in_flight with 503, Retry-After and a problem, and keeps nothing of it", async () => {
    // Both held sends are being worked on once a read is refused for overload.
    await expect.poll(async () => (await gw.call("GET", "/api/v1/notifications?limit=1")).status).toBe(503);
    const refused = await gw.call("POST", SEND, {body: alert(recipient, "refused for overload")});
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("2");
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.body).toMatchObject({status: 503, title: "Overloaded"});
    expect(String(refused.body.type)).toMatch(/overloaded$/);
    expect(kept(gw, "refused for overload")).toBe(0);
  });

  it("still answers the health probes while overloaded", async () => {
    expect((await gw.call("GET", "/healthz", {key: null})).status).toBe(200);
  });

  it("works on the held requests, and takes the refused alert when it is sent again", async () => {
    for (const held of pending) held.socket.write(held.rest);
    await expect.poll(() => pending.map((held) => held.answer.split(" ")[1] ?? "")).toEqual(["202", "202"]);
    expect(kept(gw, "held 1") + kept(gw, "held 2")).toBe(2);
    const retried = await gw.call("POST", SEND, {body: alert(recipient, "refused for overload")});
    expect(retried.status).toBe(202);
    expect(kept(gw, "refused for overload")).toBe(1);
  });
});
