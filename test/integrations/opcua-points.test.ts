import {copyFileSync, mkdtempSync, renameSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {basename, join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {eventually, shareEmailRig} from "../channels/email-rig.js";
import {type AsyncuaServer, startAsyncuaServer} from "../support/asyncua-server.js";

// An opcua integration's point end to end over SignAndEncrypt: asyncua's server (python, no code
// shared with node-opcua) behind the API, each side refusing the other's certificate in words
// until it is trusted there, then a value over its limit paging through the loopback SMTP peer
// and its return resolving the page.
const rig = shareEmailRig();
const scratch = mkdtempSync(join(tmpdir(), "klaxon-opcua-e2e-"));
const trustFile = join(scratch, "trusted-client.pem");
let server: AsyncuaServer;

beforeAll(async () => {
  server = await startAsyncuaServer({secure: {pkiDir: join(scratch, "server-pki"), trustFile}});
});
afterAll(async () => {
  await server?.stop();
  rmSync(scratch, {recursive: true, force: true});
});

describe("an opcua integration's points over SignAndEncrypt", () => {
  it("says which certificate to trust on which side; once both are trusted, a value over its limit pages and its return resolves", async () => {
    const target = await rig().recipient();
    const created = await rig().gw.call("POST", "/api/v1/integrations", {
      body: {
        name: "boiler-house",
        kind: "opcua",
        target,
        opcua: {
          endpoint_url: server.endpointUrl,
          security_mode: "SignAndEncrypt",
          security_policy: "Basic256Sha256",
          user: null,
          password: null,
          alarms: false
        },
        points: [
          {
            name: "boiler_temp",
            node_id: "ns=2;s=Boiler.Temperature",
            unit: "°C",
            alarm: {when: ">", value: 80, deadband: 2, priority: "high", title: "Boiler {value} {unit}"}
          }
        ],
        // The certificate steps below must not page the link itself.
        unreachable_after_seconds: 3600
      }
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const integration = async () => (await rig().gw.call("GET", `/api/v1/integrations/${id}`)).body;
    const pki = join(rig().gw.dataDir, "opcua-pki");

    // Klaxon has not trusted the server's certificate: the API says where it was saved.
    const refused = await eventually("the server's certificate refused", integration, (body) =>
      /saved as .+\.pem;/.test(body.link?.last_error ?? "")
    );
    expect(refused.link.state).toBe("unreachable");
    const saved = /saved as (.+\.pem);/.exec(refused.link.last_error)?.[1] ?? "";
    renameSync(saved, join(pki, "trusted", "certs", basename(saved)));
    // Then the server refuses Klaxon's: the API names the file to trust there.
    const ownCertificate = join(pki, "own", "certs", "client_certificate.pem");
    const untrusted = await eventually("Klaxon's certificate refused", integration, (body) =>
      (body.link?.last_error ?? "").includes(
        `does not trust Klaxon's certificate: on the server, trust the certificate ${ownCertificate}`
      )
    );
    expect(untrusted.link.last_error).toMatch(/SHA-1 thumbprint ([0-9A-F]{2}:){19}[0-9A-F]{2}\)/);
    copyFileSync(ownCertificate, trustFile);

    const connected = await eventually(
      "connected and read",
      integration,
      (body) => body.link?.state === "connected" && body.points?.[0]?.state?.value === 20.5
    );
    expect(connected.points[0].state).toMatchObject({quality: "good", alarm: "normal"});

    await server.set("Boiler.Temperature", 85.5);
    const mail = await rig().peer.next();
    expect(mail.text).toContain("Boiler 85.5 °C");
    const page = async () =>
      ((await rig().gw.call("GET", "/api/v1/notifications?limit=50")).body.items as any[]).find((item) =>
        item.message.includes("Boiler 85.5")
      );
    expect((await page()).priority).toBe("high");

    await server.set("Boiler.Temperature", 20);
    await eventually("resolved", page, (notification) => notification?.status === "resolved");
  });
});
