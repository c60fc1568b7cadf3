// npm run build:cli: bundles the CLI into one CommonJS file with esbuild, then makes it a Node
// single executable application (dist/klaxon): a copy of this node binary with the bundle injected,
// so it runs on a machine without Node or node_modules.
import {execFileSync} from "node:child_process";
import {chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from "node:fs";
import {dirname, join, relative, resolve} from "node:path";
import {fileURLToPath} from "node:url";
import {build} from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const outDir = join(root, "dist", "cli");
const bundle = join(outDir, "klaxon.cjs");
const blob = join(outDir, "klaxon.blob");
const seaConfig = join(outDir, "sea-config.json");
const binary = join(root, "dist", "klaxon");
// The fuse every Node binary with single executable support carries (the same in 22 and 24); postject flips it so node runs the injected blob.
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

const {version} = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
mkdirSync(outDir, {recursive: true});

const result = await build({
  entryPoints: [join(root, "src/cli/main.ts")],
  outfile: bundle,
  bundle: true,
  platform: "node",
  target: "node22",
  format: "cjs",
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
  define: {KLAXON_CLI_VERSION: JSON.stringify(version)}
});

writeFileSync(
  seaConfig,
  JSON.stringify({main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true})
);
execFileSync(process.execPath, ["--experimental-sea-config", seaConfig], {stdio: "pipe"});

const pending = binary + ".pending";
rmSync(pending, {force: true});
copyFileSync(process.execPath, pending);
chmodSync(pending, 0o755);
// postject (a devDependency) is Node's own tool for injecting the blob.
execFileSync(
  process.execPath,
  [
    join(root, "node_modules", "postject", "dist", "cli.js"),
    pending,
    "NODE_SEA_BLOB",
    blob,
    "--sentinel-fuse",
    SEA_FUSE
  ],
  {cwd: root, stdio: "pipe"}
);
renameSync(pending, binary);

// The source files inside the binary, so tests can tell whether it is older than the code.
writeFileSync(
  join(outDir, "inputs.json"),
  JSON.stringify(Object.keys(result.metafile.inputs).map((input) => relative(root, resolve(root, input))))
);
console.log(`built ${relative(root, binary)} (klaxon ${version}, node ${process.version})`);
