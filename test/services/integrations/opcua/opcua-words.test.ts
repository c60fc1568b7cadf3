import {describe, expect, it} from "vitest";
import {opcUaErrorInWords, statusInWords} from "../../../../src/services/integrations/opcua/opcua-words.js";
import {startLink} from "../../../support/opcua-link-rig.js";

const pki = "/var/lib/klaxon/opcua-pki";
const certificate = {
  path: `${pki}/own/certs/client_certificate.pem`,
  thumbprint: "AB:CD",
  trustedFolder: `${pki}/trusted/certs`,
  rejectedFolder: `${pki}/rejected`,
  lastRejected: `${pki}/rejected/S7-1500[0a1b].pem`
};

describe("OPC UA failures in words", () => {
  it("names and explains status codes, keeping the name for the server's manual", () => {
    expect(statusInWords("BadUserAccessDenied")).toBe(
      "the server rejected the user name or password, or the user may not do this (BadUserAccessDenied)"
    );
    expect(statusInWords("BadNodeIdUnknown")).toBe("the server has no node with this id (BadNodeIdUnknown)");
    // One the table does not explain is still split into words.
    expect(statusInWords("BadAggregateListMismatch")).toBe("aggregate list mismatch (BadAggregateListMismatch)");
  });

  it("says what the socket errors mean and what to do about an untrusted certificate", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:4840"), {code: "ECONNREFUSED"});
    expect(opcUaErrorInWords(refused, certificate)).toMatch(/^connection refused/);
    expect(opcUaErrorInWords(new Error("getaddrinfo ENOTFOUND plc-7"), certificate)).toMatch(/does not resolve/);
    const untrusted = opcUaErrorInWords(
      new Error("CreateSession failed BadSecurityChecksFailed (0x80130000)"),
      certificate
    );
    expect(untrusted).toContain("does not trust Klaxon's certificate");
    expect(untrusted).toContain(certificate.path);
    expect(untrusted).toContain("AB:CD");
    expect(untrusted).toContain("TIA Portal");
    const serverUntrusted = opcUaErrorInWords(
      new Error("server Certificate verification failed with err BadCertificateUntrusted (0x801a0000)"),
      certificate
    );
    expect(serverUntrusted).toBe(
      `Klaxon does not trust the server's certificate yet: it was saved as ${pki}/rejected/S7-1500[0a1b].pem; if it is ` +
        `the server's (compare its thumbprint with the one the server shows), move it into ${pki}/trusted/certs. ` +
        "Klaxon reconnects by itself."
    );
    const noEndpoint = new Error(
      "Cannot find an Endpoint matching  security mode: 3 policy: http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256"
    );
    expect(opcUaErrorInWords(noEndpoint, certificate)).toBe(
      "the server offers no endpoint with security mode SignAndEncrypt and policy Basic256Sha256: choose a mode and " +
        "policy the server has enabled, or enable this one on the server"
    );
    expect(opcUaErrorInWords(new Error("ActivateSession: BadIdentityTokenRejected"), certificate)).toBe(
      "the server rejected the user name or password (BadIdentityTokenRejected)"
    );
  });

  it("keeps a password written into a URL out of the words", () => {
    const words = opcUaErrorInWords(new Error("cannot open opc.tcp://ann:Secret-1@plc:4840"), certificate);
    expect(words).not.toContain("Secret-1");
  });

  it("refuses a security mode and policy that cannot go together, in words, without a server", async () => {
    const link = startLink({securityMode: "Sign", securityPolicy: "None"});
    try {
      await expect
        .poll(() => link.status())
        .toEqual({state: "unreachable", error: expect.stringContaining("security mode Sign with policy None")});
    } finally {
      await link.stop();
    }
  });
});
