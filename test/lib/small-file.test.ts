import {execFileSync} from "node:child_process";
import {writeFileSync} from "node:fs";
import {join} from "node:path";
import {describe, expect, it} from "vitest";
import {readSmallFile} from "../../src/lib/small-file.js";
import {startTestGateway, tempDir} from "../support/gateway.js";
import {freePort} from "../support/mosquitto.js";

describe("readSmallFile", () => {
  it("reads a small regular file, and refuses a FIFO, a device and a directory without opening them for reading", async () => {
    const dir = tempDir("klaxon-small-file-");
    const pem = join(dir, "ca.pem");
    writeFileSync(pem, "-----BEGIN CERTIFICATE-----\n");
    expect((await readSmallFile(pem)).toString()).toBe("-----BEGIN CERTIFICATE-----\n");
    const fifo = join(dir, "ca.fifo");
    execFileSync("mkfifo", [fifo]);
    await expect(readSmallFile(fifo)).rejects.toThrow("it is a FIFO (named pipe), not a regular file");
    await expect(readSmallFile("/dev/zero")).rejects.toThrow("it is a device or socket, not a regular file");
    await expect(readSmallFile(dir)).rejects.toThrow("it is a directory, not a file");
    await expect(readSmallFile(pem, 10)).rejects.toThrow("it holds 28 bytes, over the limit of 10");
  });

  it("stops the gateway's start, naming the setting, when the inbound email certificate is a FIFO", async () => {
    const fifo = join(tempDir("klaxon-cert-fifo-"), "cert.pem");
    execFileSync("mkfifo", [fifo]);
    await expect(
      startTestGateway({inbound_email: {port: await freePort(), tls_cert_file: fifo, tls_key_file: fifo}})
    ).rejects.toThrow(
      `inbound_email.tls_cert_file: cannot read ${fifo}: it is a FIFO (named pipe), not a regular file`
    );
  });
});
