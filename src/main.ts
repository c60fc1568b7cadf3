import {createRequire} from "node:module";

// The gateway's entry: it trims node:http, then loads the gateway (boot/main.ts). Nothing else may
// be imported statically here, because Node loads a module's whole static graph before running it.
//
// Node's http module has three lazy getters (WebSocket, CloseEvent, MessageEvent) that load undici,
// Node's fetch, with assert, zlib, http2, perf_hooks and worker_threads behind it. An ES module
// import of node:http (ours, Ts.ED's) copies every export when the module is linked, so the getters
// ran at every start: about 5 MB of idle RSS (docs/benchmarks.md, "Idle footprint") for an
// implementation nothing here uses at start. Removed from node:http before anything imports it, the
// three are still globals; fetch (webhooks, Telegram) loads undici when it is first called.
const http = createRequire(import.meta.url)("node:http") as Record<string, unknown>;
for (const lazyUndiciExport of ["WebSocket", "CloseEvent", "MessageEvent"]) delete http[lazyUndiciExport];

await import("./boot/main.js");
