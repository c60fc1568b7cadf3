import {mkdtempSync, rmSync} from "node:fs";
import {createServer, type AddressInfo} from "node:net";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {type AsyncuaServer, startAsyncuaServer} from "../../../support/asyncua-server.js";
import {freePort} from "../../../support/mosquitto.js";
import {startLink} from "../../../support/opcua-link-rig.js";

// The OPC UA link against asyncua's server (python): an implementation that shares no code with
// node-opcua, for monitored items and logins. SignAndEncrypt with both sides' certificates is
// driven through the API in test/integrations/opcua-points.test.ts.
const NS = "ns=2;s=";
const temp = {name: "boiler_temp", nodeId: `${NS}Boiler.Temperature`};
const running = {name: "running", nodeId: `${NS}Boiler.Running`};
const label = {name: "label", nodeId: `${NS}Boiler.Label`};
const missing = {name: "missing", nodeId: `${NS}Boiler.NoSuchThing`};

const scratch = mkdtempSync(join(tmpdir(), "klaxon-opcua-asyncua-"));
// One box, one certificate: every link of the file shares the data dir (and the key made once).
const box = join(scratch, "box");
// One plain server (None/None; anonymous, or this user) for the first two tests: each start of
// asyncua costs about 2 s of CPU.
const user = {name: "klaxon", password: "right-Pa55word"};
let plain: AsyncuaServer | undefined;
afterAll(async () => {
  await plain?.stop();
  rmSync(scratch, {recursive: true, force: true});
});

describe("OPC UA link against asyncua's server", () => {
  it("says connection refused in words, then follows each point's value through subscriptions once the server is up", async () => {
    const port = await freePort();
    const link = startLink(
      {endpointUrl: `opc.tcp://127.0.0.1:${port}/klaxon-test`, points: [temp, running, label, missing]},
      box
    );
    try {
      await expect
        .poll(() => link.status())
        .toEqual({state: "unreachable", error: expect.stringContaining("connection refused")});
      await expect(link.link.readNow()).rejects.toThrow(/connection refused/);
      const server = await startAsyncuaServer({port, user});
      plain = server;
      await expect.poll(() => link.status()?.state).toBe("connected");
      await expect.poll(() => link.reading("boiler_temp")).toMatchObject({value: 20.5, quality: "good"});
      await expect.poll(() => link.reading("running")).toMatchObject({value: false, quality: "good"});
      // Text cannot be compared with a limit; a node the server lacks reads bad, and neither stops the others.
      await expect.poll(() => link.reading("label")).toMatchObject({value: null, quality: "bad"});
      await expect.poll(() => link.reading("missing")).toMatchObject({value: null, quality: "bad"});
      await server.set("Boiler.Temperature", 85.5);
      await server.set("Boiler.Running", true);
      await expect.poll(() => link.reading("boiler_temp")?.value).toBe(85.5);
      await expect.poll(() => link.reading("running")?.value).toBe(true);
      const now = await link.link.readNow();
      expect(now.map(({point, value, quality}) => ({point, value, quality}))).toEqual([
        {point: "boiler_temp", value: 85.5, quality: "good"},
        {point: "running", value: true, quality: "good"},
        {point: "label", value: null, quality: "bad"},
        {point: "missing", value: null, quality: "bad"}
      ]);
    } finally {
      await link.stop();
    }
  });

  it("logs in with a user name and password; a wrong password is said in words and never shown", async () => {
    const endpointUrl = plain?.endpointUrl ?? "";
    const login = (password: string) => startLink({endpointUrl, user: user.name, password, points: [temp]}, box);
    const wrong = login("wrong-Pa55word");
    const right = login(user.password);
    try {
      await expect
        .poll(() => wrong.status())
        .toEqual({state: "unreachable", error: expect.stringContaining("rejected the user name or password")});
      await expect.poll(() => right.reading("boiler_temp")?.quality).toBe("good");
      expect(right.status()).toEqual({state: "connected"});
      const told = JSON.stringify([wrong.statuses, wrong.logLines, right.logLines]);
      expect(told).not.toContain("Pa55word");
    } finally {
      await wrong.stop();
      await right.stop();
    }
  });

  it("a server that takes the connection and never answers holds up no other link, and stop() ends its attempt", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((done) => silent.listen(0, "127.0.0.1", done));
    const {port} = silent.address() as AddressInfo;
    const hung = startLink({endpointUrl: `opc.tcp://127.0.0.1:${port}`, points: [temp]}, box);
    const fine = startLink({endpointUrl: plain?.endpointUrl ?? "", points: [temp]}, box);
    try {
      await expect.poll(() => fine.reading("boiler_temp")?.quality).toBe("good");
      expect(hung.status()).toBeUndefined();
    } finally {
      await hung.stop();
      await fine.stop();
      silent.close();
    }
    expect(hung.readings).toEqual([]);
  });
});
