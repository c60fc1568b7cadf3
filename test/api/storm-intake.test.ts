import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {get} from "node:http";
import {createServer, type AddressInfo} from "node:net";
import {Worker} from "node:worker_threads";
import {EventEmitter} from "node:events";
import type {NextFunction, Request, Response} from "express";
import {AdmittingServer} from "../../src/api/connections/connection-limits.js";
import {listenWithBacklog, LISTENING_SOCKETS} from "../../src/api/connections/listen-backlog.js";
import {paceRequests} from "../../src/api/connections/request-pacing.js";

// Issue 36 item 1: in a storm of a thousand devices connecting at once, the last were accepted
// 5 s late (libuv accepts one connection per listening socket per turn of the event loop), and a
// turn that started every request that had arrived took so long that a page's SMTP conversation,
// one round trip a turn, took a second. Counted in turns of the event loop, never in time.

const WAITING = 64;

/** One turn of the event loop: an immediate set from the check phase runs in the next turn's. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

// Opens `count` connections from a thread of its own and says so once every handshake is done.
const CONNECTOR = `
const {workerData} = require("node:worker_threads");
const net = require("node:net");
const {port, count, shared} = workerData;
let connected = 0;
for (let i = 0; i < count; i++) {
  const socket = net.connect({host: "127.0.0.1", port}, () => {
    if (++connected === count) { Atomics.store(shared, 0, count); Atomics.notify(shared, 0); }
  });
  socket.on("error", () => {});
}`;

function answered(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    get({host: "127.0.0.1", port, path: "/", agent: false}, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    }).on("error", reject);
  });
}

describe("a storm of connections", () => {
  let server: AdmittingServer;
  let port: number;
  let accepted = 0;

  beforeAll(async () => {
    server = new AdmittingServer((_request, response) => response.end("ok"));
    server.admitWith(() => ++accepted > 0);
    await listenWithBacklog(server, {host: "127.0.0.1", port: 0}, 511);
    ({port} = server.address() as AddressInfo);
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("is accepted many a turn of the event loop, not one a turn", async () => {
    const shared = new Int32Array(new SharedArrayBuffer(4));
    const connector = new Worker(CONNECTOR, {eval: true, workerData: {port, count: WAITING, shared}});
    try {
      // This thread (the server's) is held while the connections queue in the kernel, as a busy gateway's is.
      Atomics.wait(shared, 0, 0, 30_000);
      expect(Atomics.load(shared, 0)).toBe(WAITING);
      let turns = 0;
      while (accepted < WAITING && turns < 10 * WAITING) {
        await turn();
        turns++;
      }
      expect(accepted).toBe(WAITING);
      // One listening socket takes a turn per connection (64); the kernel spreads them over several.
      expect(turns).toBeLessThan(WAITING / 2);
    } finally {
      await connector.terminate();
    }
  });

  it("is served by the one server whichever listening socket accepted it", async () => {
    const statuses = await Promise.all(Array.from({length: 2 * LISTENING_SOCKETS}, () => answered(port)));
    expect(statuses).toEqual(statuses.map(() => 200));
  });

  it("leaves the port free once the server is closed: every listening socket closes with it", async () => {
    const other = new AdmittingServer((_request, response) => response.end("ok"));
    await listenWithBacklog(other, {host: "127.0.0.1", port: 0}, 511);
    const {port: taken} = other.address() as AddressInfo;
    await new Promise<void>((resolve) => other.close(() => resolve()));
    // A socket that does not share its port (as another program's) binds only if none is left listening.
    const plain = createServer();
    await new Promise<void>((resolve, reject) => {
      plain.once("error", reject);
      plain.listen({host: "127.0.0.1", port: taken}, () => resolve());
    });
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  });
});

describe("request pacing", () => {
  function fakeRequest(url: string): Request {
    return {url} as Request;
  }
  function fakeResponse(): Response & {closed: boolean} {
    return Object.assign(new EventEmitter(), {closed: false}) as unknown as Response & {closed: boolean};
  }

  it("starts at most 32 requests a turn and the rest in later turns, in the order they came", async () => {
    const pace = paceRequests(32);
    const started: number[] = [];
    for (let index = 0; index < 100; index++)
      pace(fakeRequest("/api/v1/notifications/send"), fakeResponse(), (() => started.push(index)) as NextFunction);
    const perTurn = [started.length];
    while (started.length < 100 && perTurn.length < 100) {
      await turn();
      perTurn.push(started.length - perTurn.reduce((sum, n) => sum + n, 0));
    }
    expect(perTurn).toEqual([32, 32, 32, 4]);
    expect(started).toEqual([...Array(100).keys()]);
  });

  it("never holds back the probes", () => {
    const pace = paceRequests(1);
    let started = 0;
    for (let index = 0; index < 3; index++)
      pace(fakeRequest("/api/v1/notifications"), fakeResponse(), (() => started++) as NextFunction);
    for (const probe of ["/healthz", "/readyz", "/metrics?x=1"])
      pace(fakeRequest(probe), fakeResponse(), (() => started++) as NextFunction);
    expect(started).toBe(1 + 3);
  });

  it("does not start a request whose client went away while it waited", async () => {
    const pace = paceRequests(1);
    const started: string[] = [];
    const gone = fakeResponse();
    pace(fakeRequest("/first"), fakeResponse(), (() => started.push("first")) as NextFunction);
    pace(fakeRequest("/gone"), gone, (() => started.push("gone")) as NextFunction);
    pace(fakeRequest("/third"), fakeResponse(), (() => started.push("third")) as NextFunction);
    gone.closed = true;
    await turn();
    await turn();
    await turn();
    expect(started).toEqual(["first", "third"]);
  });
});
