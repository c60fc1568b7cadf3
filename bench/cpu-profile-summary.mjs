// Reads a V8 .cpuprofile (node --cpu-prof, e.g. written by the benches with BENCH_CPU_PROF=<dir>)
// and prints where the time went: self time by area (our code by folder, each package, node's
// internals, native code, GC, idle), the top functions by self time, and the inclusive time of
// chosen frames (a function and everything it called).
//
// Usage: node bench/cpu-profile-summary.mjs <file.cpuprofile> [top=25] [frame-name ...]

import {readFileSync} from "node:fs";

const [file, topArg, ...frames] = process.argv.slice(2);
if (!file) {
  console.error("usage: node bench/cpu-profile-summary.mjs <file.cpuprofile> [top=25] [frame-name ...]");
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8"));

// Sample counts per node; time per sample from the profile's own span.
const selfSamples = new Map();
for (const id of profile.samples) selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);
const msPerSample = (profile.endTime - profile.startTime) / 1000 / profile.samples.length;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

/** Which part of the system a frame belongs to. */
function areaOf(frame) {
  const {url, functionName} = frame;
  if (!url) {
    if (["(idle)", "(garbage collector)", "(program)"].includes(functionName)) return functionName;
    return "(native)";
  }
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1];
  if (url.startsWith("node:")) return "node internals";
  const ours = url.match(/\/dist\/([^/]+(?:\/[^/]+)?)\//) ?? url.match(/\/dist\/([^/]+)$/);
  return ours ? `klaxon ${ours[1]}` : url;
}

const areas = new Map();
const functions = new Map();
for (const [id, count] of selfSamples) {
  const frame = byId.get(id).callFrame;
  const area = areaOf(frame);
  areas.set(area, (areas.get(area) ?? 0) + count);
  const key = `${frame.functionName || "(anonymous)"}  ${frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/dist\//, "dist/")}:${frame.lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + count);
}

const total = profile.samples.length;
const busy = total - (areas.get("(idle)") ?? 0);
const pct = (count, of) => `${((100 * count) / of).toFixed(1)}%`.padStart(6);
const ms = (count) => `${Math.round(count * msPerSample)} ms`.padStart(9);

console.log(
  `${file}: ${total} samples over ${Math.round(total * msPerSample)} ms; busy (not idle) ${Math.round(busy * msPerSample)} ms`
);
console.log("\nself time by area (% of busy time)");
for (const [area, count] of [...areas].sort((a, b) => b[1] - a[1]).filter(([area]) => area !== "(idle)"))
  console.log(`${pct(count, busy)} ${ms(count)}  ${area}`);
console.log(`\ntop ${top} functions by self time (% of busy time)`);
for (const [name, count] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(count, busy)} ${ms(count)}  ${name}`);

if (frames.length > 0) {
  // Inclusive time: samples whose stack contains the frame, counted once per sample.
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  console.log("\ninclusive time of chosen frames (% of busy time)");
  for (const name of frames) {
    let count = 0;
    for (const [id, samples] of selfSamples) {
      for (let at = id; at !== undefined; at = parent.get(at)) {
        if (byId.get(at).callFrame.functionName === name) {
          count += samples;
          break;
        }
      }
    }
    console.log(`${pct(count, busy)} ${ms(count)}  ${name}`);
  }
}
