import {createHash} from "node:crypto";
import {readFile} from "node:fs/promises";
import {join} from "node:path";
import {OPCUACertificateManager} from "node-opcua-certificate-manager";
import type {OwnCertificateInfo} from "./opcua-words.js";

/**
 * The box's OPC UA identity: one PKI folder under the data dir, shared by every OPC UA link, in
 * node-opcua's layout (own/certs, own/private, trusted/certs, rejected/certs). The application
 * certificate is made by the client at its first connection attempt (self-signed, 2048-bit RSA).
 */
export const OPCUA_PKI_FOLDER = "opcua-pki";
const OWN_CERTIFICATE = join("own", "certs", "client_certificate.pem");

const managers = new Map<string, Promise<OPCUACertificateManager>>();

/**
 * The certificate manager of a data dir, initialised once. A server's certificate is trusted the
 * first time it is seen (kept in trusted/certs): a PLC's self-signed certificate cannot be known
 * in advance, and moving it from trusted/certs to rejected/certs distrusts it (docs/integrations.md).
 */
export function certificateManager(dataDir: string): Promise<OPCUACertificateManager> {
  const rootFolder = join(dataDir, OPCUA_PKI_FOLDER);
  let manager = managers.get(rootFolder);
  if (!manager) {
    const created = new OPCUACertificateManager({rootFolder, automaticallyAcceptUnknownCertificate: true});
    manager = created.initialize().then(() => created);
    // A failure (a read-only data dir) is retried at the next connection attempt, not remembered.
    manager.catch(() => managers.delete(rootFolder));
    managers.set(rootFolder, manager);
  }
  return manager;
}

/** Where the box's own certificate is (to trust on the server), and its thumbprint once it exists. */
export async function ownCertificate(dataDir: string): Promise<OwnCertificateInfo> {
  const path = join(dataDir, OPCUA_PKI_FOLDER, OWN_CERTIFICATE);
  try {
    const pem = await readFile(path, "utf8");
    // The first certificate of the file is the box's own (a chain may follow it).
    const body = /-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/.exec(pem)?.[1];
    if (!body) return {path, thumbprint: "not made yet"};
    const der = Buffer.from(body.replace(/\s+/g, ""), "base64");
    const thumbprint = createHash("sha1").update(der).digest("hex").toUpperCase();
    return {path, thumbprint: thumbprint.replace(/(..)(?!$)/g, "$1:")};
  } catch {
    return {path, thumbprint: "not made yet"};
  }
}
