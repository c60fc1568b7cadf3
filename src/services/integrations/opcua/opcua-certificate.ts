import {createHash} from "node:crypto";
import {readdir, readFile, stat} from "node:fs/promises";
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
 * The certificate manager of a data dir, initialised once. A server's certificate is not trusted
 * until someone trusts it (OPC UA Part 2: a client must not accept any certificate it is shown):
 * the first time Klaxon sees it, it is saved in rejected/, and moving that file into
 * trusted/certs/ trusts it (the manager watches the folders; docs/integrations.md). With security
 * mode None no certificate is exchanged, so none of this applies.
 */
export function certificateManager(dataDir: string): Promise<OPCUACertificateManager> {
  const rootFolder = join(dataDir, OPCUA_PKI_FOLDER);
  let manager = managers.get(rootFolder);
  if (!manager) {
    const created = new OPCUACertificateManager({rootFolder, automaticallyAcceptUnknownCertificate: false});
    manager = created.initialize().then(() => created);
    // A failure (a read-only data dir) is retried at the next connection attempt, not remembered.
    manager.catch(() => managers.delete(rootFolder));
    managers.set(rootFolder, manager);
  }
  return manager;
}

/** Where the box's own certificate is (to trust on the server), its thumbprint, and the trust folders. */
export async function ownCertificate(dataDir: string): Promise<OwnCertificateInfo> {
  const pki = join(dataDir, OPCUA_PKI_FOLDER);
  const path = join(pki, OWN_CERTIFICATE);
  const folders = {
    trustedFolder: join(pki, "trusted", "certs"),
    lastRejected: await newestFile(join(pki, "rejected")),
    rejectedFolder: join(pki, "rejected")
  };
  try {
    const pem = await readFile(path, "utf8");
    // The first certificate of the file is the box's own (a chain may follow it).
    const body = /-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/.exec(pem)?.[1];
    if (!body) return {path, thumbprint: "not made yet", ...folders};
    const der = Buffer.from(body.replace(/\s+/g, ""), "base64");
    const thumbprint = createHash("sha1").update(der).digest("hex").toUpperCase();
    return {path, thumbprint: thumbprint.replace(/(..)(?!$)/g, "$1:"), ...folders};
  } catch {
    return {path, thumbprint: "not made yet", ...folders};
  }
}

/** The latest certificate saved in a folder (the server's that was just refused), if any. */
async function newestFile(folder: string): Promise<string | null> {
  try {
    const names = (await readdir(folder)).filter((name) => name.endsWith(".pem") || name.endsWith(".der"));
    const dated = await Promise.all(
      names.map(async (name) => ({name, mtimeMs: (await stat(join(folder, name))).mtimeMs}))
    );
    const newest = dated.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
    return newest ? join(folder, newest.name) : null;
  } catch {
    return null;
  }
}
