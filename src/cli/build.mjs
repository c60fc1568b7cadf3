// npm run build:admin-cli [-- --out FILE]: bundles klaxon-admin (src/cli) into one CommonJS file
// with esbuild, its npm dependencies inside, so the gateway's own Node runs it from anywhere with no
// node_modules beside it. `npm run package` puts it in the release as dist/klaxon-admin.cjs, which
// the installed bin/klaxon-admin runs; devices use the Go `klaxon` (sdk/go/build-cli.sh) instead.
import {mkdirSync, readFileSync, writeFileSync} from "node:fs";
import {dirname, join, relative, resolve} from "node:path";
import {parseArgs} from "node:util";
import {fileURLToPath} from "node:url";
import {build} from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const {values} = parseArgs({options: {out: {type: "string"}}});
const bundle = resolve(values.out ?? join(root, "dist", "cli", "klaxon-admin.cjs"));
const inputsFile = join(root, "dist", "cli", "inputs.json");

const {version} = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
mkdirSync(dirname(bundle), {recursive: true});
mkdirSync(dirname(inputsFile), {recursive: true});

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

// The source files inside the bundle, so tests can tell whether it is older than the code.
writeFileSync(
  inputsFile,
  JSON.stringify(Object.keys(result.metafile.inputs).map((input) => relative(root, resolve(root, input))))
);
console.log(`built ${relative(root, bundle)} (klaxon-admin ${version})`);
