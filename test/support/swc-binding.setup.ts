// Loads SWC's native binding into each test fork's main thread, where it then stays. A worker
// thread started from TypeScript (lib/supervised-worker.ts) loads the binding through
// @swc-node's loader; if no other thread holds it, ending that worker unloads it, and the next
// worker that loads it crashes the whole fork with SIGSEGV (Node 22, @swc/core 1.16; seen in
// every file that starts a second parser worker). Under `npm start` the main thread holds the
// binding through the same loader, and the build runs workers from JavaScript, so only tests need this.
import "@swc/core";
