import {execFileSync} from "node:child_process";
import {readFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startTestGateway, type TestGateway} from "../support/gateway.js";
import {listenBacklog} from "../../src/api/connections/listen-backlog.js";

// Issue 36: a thousand devices connecting at once overflowed Node's default listen queue (511),
// and each dropped connection waited for its SYN to be resent (1 s, 3 s). The gateway listens
// with the system's net.core.somaxconn instead.

describe("the gateway's listen queue", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("is as long as the system's somaxconn allows", () => {
    const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8"));
    const {port} = new URL(gw.url);
    // For a listening socket, ss reports the backlog it was given as Send-Q.
    const [, , sendQ] = execFileSync("ss", ["-Hltn", `sport = :${port}`], {encoding: "utf8"})
      .trim()
      .split(/\s+/);
    expect(Number(sendQ)).toBe(somaxconn);
  });

  it("falls back to Node's 511 where somaxconn cannot be read", () => {
    expect(listenBacklog(join(gw.dataDir, "no-such-somaxconn"))).toBe(511);
  });
});
