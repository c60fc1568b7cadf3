import {existsSync} from "node:fs";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";
import type {IncomingMessage, ServerResponse} from "node:http";

const here = dirname(fileURLToPath(import.meta.url));

// Beside this module when run from source; `tsc` copies no assets into dist/, so a built
// gateway reads them from the source tree it was built from (as the dashboard does).
const DOCS_UI_DIR =
  [here, join(here, "..", "..", "..", "src", "api", "docs-ui")].find((dir) => existsSync(join(dir, "page.ejs"))) ??
  here;

/**
 * The Swagger UI page at /docs, in place of Ts.ED's own, which links a font stylesheet on the
 * internet and starts the UI with inline script. Ours loads only files the gateway serves.
 */
export const DOCS_UI = {
  viewPath: join(DOCS_UI_DIR, "page.ejs"),
  jsPath: join(DOCS_UI_DIR, "start-swagger-ui.js")
};

// Everything from the box itself (it must work with no internet), no inline script, no framing.
// Swagger UI sets inline styles on its elements, hence style-src 'unsafe-inline' (styles cannot run code).
const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Express middleware for /docs: the page's security headers, set before Swagger's routes answer. */
export function docsSecurityHeaders(_request: IncomingMessage, response: ServerResponse, next: () => void): void {
  response.setHeader("Content-Security-Policy", DOCS_CONTENT_SECURITY_POLICY);
  response.setHeader("X-Content-Type-Options", "nosniff");
  response.setHeader("Referrer-Policy", "no-referrer");
  next();
}
