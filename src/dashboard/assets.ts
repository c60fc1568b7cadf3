import {existsSync} from "node:fs";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";
import type {ServerResponse} from "node:http";
import {DASHBOARD_PATH} from "../lib/dashboard-link.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The dashboard's files. Beside this module when run from source; `tsc` copies no assets into
 * dist/, so a built gateway serves them from the source tree it was built from.
 */
export const DASHBOARD_ASSETS =
  [join(here, "public"), join(here, "..", "..", "src", "dashboard", "public")].find((dir) =>
    existsSync(join(dir, "index.html"))
  ) ?? join(here, "public");

export {DASHBOARD_PATH};

// Everything the page loads comes from the box itself (it must work with no internet); no inline
// script, so an injected string can never run as script; no framing (clickjacking). Style
// attributes alone are allowed (style-src-attr, which cannot run code and admits no <style>
// element): the recipient preview shows the mail in a sandboxed srcdoc frame, which inherits this
// policy, and mail HTML is styled by attributes, since mail clients drop stylesheets.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function setSecurityHeaders(response: ServerResponse): void {
  response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  response.setHeader("X-Content-Type-Options", "nosniff");
  response.setHeader("Referrer-Policy", "no-referrer");
  // Revalidated on every load (ETag), so an upgraded gateway never runs with yesterday's script.
  response.setHeader("Cache-Control", "no-cache");
}

/** Ts.ED `statics` entry serving the dashboard. */
export const dashboardStatics = {
  [DASHBOARD_PATH]: [
    {root: DASHBOARD_ASSETS, index: "index.html", redirect: true, dotfiles: "ignore", setHeaders: setSecurityHeaders}
  ]
};
