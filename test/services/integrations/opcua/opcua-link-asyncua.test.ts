import {copyFileSync, mkdtempSync, renameSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {basename, dirname, join} from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {type AsyncuaServer, startAsyncuaServer} from "../../../support/asyncua-server.js";
import {freePort} from "../../../support/mosquitto.js";
import {startLink} from "../../../support/opcua-link-rig.js";

// The OPC UA link against asyncua's server (python): an implementation that shares no code with
// node-opcua, for monitored items and the security modes None and SignAndEncrypt.
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

  it("SignAndEncrypt: each side refuses the other's certificate in words until trusted there; then values flow", async () => {
    const trustFile = join(scratch, "trusted-client.pem");
    const server = await startAsyncuaServer({secure: {pkiDir: join(scratch, "server-pki"), trustFile}});
    const link = startLink(
      {
        endpointUrl: server.endpointUrl,
        securityMode: "SignAndEncrypt",
        securityPolicy: "Basic256Sha256",
        points: [temp]
      },
      box
    );
    try {
      // First Klaxon refuses the server's certificate (saved among the rejected) ...
      const rejected = join(box, "opcua-pki", "rejected");
      await expect
        .poll(() => link.status())
        .toEqual({
          state: "unreachable",
          error: expect.stringMatching(/does not trust the server's certificate yet: it was saved as .+\.pem;/)
        });
      const saved = /saved as (.+\.pem);/.exec(link.status()?.error ?? "")?.[1] ?? "";
      expect(dirname(saved)).toBe(rejected);
      expect(link.status()?.error).toContain(join(box, "opcua-pki", "trusted", "certs"));
      // ... the engineer moves it to the trusted ones; then the server refuses Klaxon's.
      renameSync(saved, join(box, "opcua-pki", "trusted", "certs", basename(saved)));
      await expect
        .poll(() => link.status())
        .toEqual({state: "unreachable", error: expect.stringContaining("does not trust Klaxon's certificate")});
      const ownCertificate = join(box, "opcua-pki", "own", "certs", "client_certificate.pem");
      const error = link.status()?.error ?? "";
      expect(error).toContain(ownCertificate);
      expect(error).toMatch(/SHA-1 thumbprint ([0-9A-F]{2}:){19}[0-9A-F]{2}/);
      expect(link.readings).toEqual([]);
      // The engineer trusts Klaxon's certificate on the server: the link connects by itself.
      copyFileSync(ownCertificate, trustFile);
      await expect.poll(() => link.status()?.state).toBe("connected");
      await expect.poll(() => link.reading("boiler_temp")).toMatchObject({value: 20.5, quality: "good"});
      await server.set("Boiler.Temperature", 91);
      await expect.poll(() => link.reading("boiler_temp")?.value).toBe(91);
    } finally {
      await link.stop();
      await server.stop();
    }
  });
});
