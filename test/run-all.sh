#!/usr/bin/env bash
# `npm test`: every check this repository has, from a fresh clone, ending with ONE line
# "N passed, N failed" that sums them all (CI reads only that line). Exits non-zero if anything failed.
#
#  1. System packages the tests drive for real (socat, espeak-ng, opus-tools, Alertmanager, Chromium,
#     systemd-analyze): installed with apt-get when run as root; otherwise it stops at once and prints
#     the exact `sudo apt-get install` line.
#  2. A Python virtual environment in .venv/ (gitignored) with schemathesis (the fuzz test) and pytest
#     (the Python SDK); nothing is installed into the system's Python.
#  3. Checks, one count each: `npm run typecheck`, and `npm run lint` / `npm run depcheck` when
#     package.json defines them (add such a script and it runs here, no change to this file needed).
#  4. Every vitest suite on the machine's Node, then on Node 24 from the npm registry's
#     node-linux-<arch> package (see node24_pass below; KLAXON_NODE24=off skips it).
#  5. The Python SDK's tests (pytest from the venv) and the Go library's (go vet, go test).
#
# `npm test -- test/api/auth.test.ts -t "refuses"`: arguments go to vitest, and only vitest runs
# (on the machine's Node); `npm run test:unit` is plain `vitest run`.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.ci-out
mkdir -p "$OUT"
rm -f "$OUT"/vitest-*.json "$OUT"/checks.tsv "$OUT"/pytest.xml "$OUT"/go-test.json
started=$SECONDS

say() { echo "[npm test] $*"; }
# One line per check that is not a test report: "name<TAB>passed|failed".
record() { printf '%s\t%s\n' "$1" "$2" >>"$OUT/checks.tsv"; }
abort() { say "$*"; echo "0 passed, 1 failed"; exit 1; }

# --- 1. System packages ------------------------------------------------------------------------
# socat makes the modem simulator's pseudo-terminals, espeak-ng and opusenc speak Telegram voice
# notes, Alertmanager is a real inbound peer, Chromium runs the dashboard tests, systemd-analyze
# verifies the unit; python3-venv makes .venv.
missing=()
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v opusenc >/dev/null 2>&1 || missing+=(opus-tools)
command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
[ -x .venv/bin/python ] || python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    say "system packages missing: ${missing[*]}. Install them once, then run npm test again:"
    echo "sudo apt-get install -y ${missing[*]}"
    echo "0 passed, 1 failed"
    exit 1
  fi
  say "installing system packages: ${missing[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >"$OUT/apt.log" 2>&1 ||
    { tail -20 "$OUT/apt.log"; abort "apt-get install ${missing[*]} failed (log: .ci-out/apt.log)"; }
fi

# --- 2. Python virtual environment -------------------------------------------------------------
# Schemathesis 4.32.5 is the version the fuzz test's config and seed were written for.
PY_REQUIREMENTS="schemathesis==4.32.5 pytest==9.2.0"
if [ "$(cat .venv/.klaxon-requirements 2>/dev/null)" != "$PY_REQUIREMENTS" ]; then
  say "preparing .venv ($PY_REQUIREMENTS)"
  { [ -x .venv/bin/python ] || python3 -m venv .venv; } >"$OUT/venv.log" 2>&1 &&
    .venv/bin/python -m pip install --quiet --disable-pip-version-check $PY_REQUIREMENTS >>"$OUT/venv.log" 2>&1 ||
    { tail -20 "$OUT/venv.log"; abort "could not prepare .venv (log: .ci-out/venv.log)"; }
  echo "$PY_REQUIREMENTS" >.venv/.klaxon-requirements
fi
# test/security/fuzz.test.ts runs schemathesis with this interpreter.
export KLAXON_PYTHON=$ROOT/.venv/bin/python

[ -d node_modules ] || abort "node_modules is missing: run npm install first"

# vitest on a given node binary, in a given tree, keeping the JSON report for the count.
run_vitest() { # label node-binary tree [vitest args...]
  local label=$1 node=$2 tree=$3
  shift 3
  say "vitest on $("$node" --version) ($label)"
  (cd "$tree" && "$node" node_modules/vitest/vitest.mjs run --reporter=default --reporter=json \
    --outputFile="$OUT/vitest-$label.json" "$@")
}

summary() {
  node - "$OUT" <<'EOF'
const fs = require("fs");
const path = require("path");
const out = process.argv[2];
let passed = 0, failed = 0;
const lines = [];
const add = (name, p, f) => { passed += p; failed += f; lines.push(`  ${name}: ${p} passed, ${f} failed`); };
for (const line of (fs.existsSync(path.join(out, "checks.tsv")) ? fs.readFileSync(path.join(out, "checks.tsv"), "utf8") : "").split("\n").filter(Boolean)) {
  const [name, result] = line.split("\t");
  add(name, result === "passed" ? 1 : 0, result === "passed" ? 0 : 1);
}
for (const file of fs.readdirSync(out).filter((name) => /^vitest-.*\.json$/.test(name)).sort()) {
  try {
    const report = JSON.parse(fs.readFileSync(path.join(out, file), "utf8"));
    // Failed tests, plus test files that failed without a failing test (they could not even load).
    const unloadable = report.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((t) => t.status === "failed"));
    let bad = report.numFailedTests + unloadable.length;
    // A run vitest cancelled (a worker process crashed) leaves its remaining tests pending and no
    // failed test to show for it: count the run itself as one failure.
    if (report.success === false && bad === 0) bad = 1;
    add(file.replace(/\.json$/, ""), report.numPassedTests, bad);
  } catch (error) {
    add(file, 0, 1);
    console.error(`unreadable ${file}: ${error.message}`);
  }
}
if (fs.existsSync(path.join(out, "pytest.xml"))) {
  try {
    const suites = fs.readFileSync(path.join(out, "pytest.xml"), "utf8").match(/<testsuite [^>]*>/)[0];
    const count = (name) => Number((suites.match(new RegExp(` ${name}="(\\d+)"`)) || [0, 0])[1]);
    const bad = count("failures") + count("errors");
    add("pytest", count("tests") - bad - count("skipped"), bad);
  } catch (error) {
    add("pytest", 0, 1);
    console.error("unreadable pytest report:", error.message);
  }
}
if (fs.existsSync(path.join(out, "go-test.json"))) {
  try {
    // One JSON event per line; a test (or example) ends with action pass or fail.
    const events = fs.readFileSync(path.join(out, "go-test.json"), "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const anyTestFailed = events.some((e) => e.Test && e.Action === "fail");
    add("go test", events.filter((e) => e.Test && e.Action === "pass").length,
      events.filter((e) => e.Action === "fail" && (e.Test || !anyTestFailed)).length || (events.length ? 0 : 1));
  } catch (error) {
    add("go test", 0, 1);
    console.error("unreadable go test report:", error.message);
  }
}
console.log(lines.join("\n"));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
EOF
}

# --- A developer's filtered run: only vitest, only the machine's Node --------------------------
if [ $# -gt 0 ]; then
  run_vitest machine "$(command -v node)" "$ROOT" "$@"
  summary
  exit $?
fi

# --- 3. Checks -----------------------------------------------------------------------------------
has_script() { node -e 'process.exit(require("./package.json").scripts?.[process.argv[1]] ? 0 : 1)' "$1"; }
for check in typecheck lint depcheck; do
  has_script "$check" || continue
  say "npm run $check"
  if npm run --silent "$check"; then record "$check" passed; else record "$check" failed; fi
done

# --- 4. vitest on the machine's Node, then on Node 24 ------------------------------------------
NODE24_TREE=""
MACHINE_NODE=$(command -v node)
MACHINE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
vitest_started=$SECONDS
run_vitest machine "$MACHINE_NODE" "$ROOT"
say "vitest on the machine's Node took $((SECONDS - vitest_started)) s"

# Node 24 is the npm registry's node-linux-<arch> package (the official build: bin/node and the
# headers), extracted once into .node24/ (gitignored; delete it to take a newer 24.x).
# better-sqlite3 is native and compiled per Node ABI, and Node resolves modules by real path, so the
# Node 24 pass runs in a mirror of this checkout, .node24/tree-<pid>: a copy of the sources (a few
# MB), node_modules hard-linked file by file (no copying) except better-sqlite3, which comes from a
# build for Node 24 cached in .node24/ and made once (about 80 s on two cores).
# KLAXON_NODE24: "all" runs every vitest suite; "off" skips the pass; anything else (the default,
# see NODE24_SUITES below) is a space-separated list of test paths to run on Node 24 only.
node24_pass() {
  local arch pkg dir tree bsql cache
  arch=$(node -p process.arch)
  pkg="node-linux-$arch"
  dir=$ROOT/.node24/node
  mkdir -p "$ROOT/.node24"
  exec 9>"$ROOT/.node24/lock"
  flock 9
  if [ ! -x "$dir/bin/node" ]; then
    say "fetching Node 24 ($pkg@24 from the npm registry)"
    local tmp
    tmp=$(mktemp -d "$ROOT/.node24/fetch.XXXXXX")
    (cd "$tmp" && npm pack --silent "$pkg@24" >/dev/null && tar -xzf "$pkg"-*.tgz) >"$OUT/node24-fetch.log" 2>&1 &&
      rm -rf "$dir" && mv "$tmp/package" "$dir" || { tail "$OUT/node24-fetch.log"; rm -rf "$tmp"; flock -u 9; return 1; }
    rm -rf "$tmp"
  fi
  NODE24=$dir/bin/node
  local version
  version=$("$NODE24" --version) || { flock -u 9; return 1; }
  bsql=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
  cache=$ROOT/.node24/better-sqlite3-$bsql-node-$version

  tree=$ROOT/.node24/tree-$$
  NODE24_TREE=$tree
  rm -rf "$tree"
  mkdir -p "$tree/node_modules"
  trap 'rm -rf "$NODE24_TREE"' EXIT
  tar -C "$ROOT" --exclude=./.git --exclude=./node_modules --exclude=./.node24 --exclude=./.venv \
    --exclude=./.ci-out --exclude=./dist --exclude=./data --exclude=./release --exclude=./coverage -cf - . |
    tar -C "$tree" -xf -
  local entry
  for entry in "$ROOT"/node_modules/* "$ROOT"/node_modules/.bin; do
    [ "$(basename "$entry")" = better-sqlite3 ] && continue
    cp -al "$entry" "$tree/node_modules/" 2>/dev/null || cp -a "$entry" "$tree/node_modules/"
  done
  cp "$ROOT/node_modules/.package-lock.json" "$tree/node_modules/" 2>/dev/null
  if [ ! -f "$cache/build/Release/better_sqlite3.node" ]; then
    say "building better-sqlite3 $bsql for Node $version (once; cached in .node24/)"
    cp -a "$ROOT/node_modules/better-sqlite3" "$tree/node_modules/"
    (cd "$tree" && PATH="$dir/bin:$PATH" npm_config_nodedir="$dir" npm rebuild better-sqlite3) >"$OUT/node24-rebuild.log" 2>&1 ||
      { tail -20 "$OUT/node24-rebuild.log"; flock -u 9; return 1; }
    rm -rf "$cache.tmp" && cp -a "$tree/node_modules/better-sqlite3" "$cache.tmp" && mv "$cache.tmp" "$cache"
  else
    cp -al "$cache" "$tree/node_modules/better-sqlite3"
  fi
  flock -u 9

  local suites=()
  case "$NODE24_SUITES" in
    all) ;;
    *) read -r -a suites <<<"$NODE24_SUITES" ;;
  esac
  # Everything the tests spawn (node, npm, the gateway, the packaged release) finds Node 24 first.
  # Its failures are counted from its report; a non-zero return here means the set-up failed.
  (export PATH="$dir/bin:$PATH" npm_config_nodedir="$dir" && run_vitest node24 "$NODE24" "$tree" "${suites[@]}") || true
}

# better-sqlite3 12 aborts on Node 24.19+ when a statement is garbage-collected (fixed in 13, which
# crashes on the Node 20 the CI machines still run): until the journal moves to 13, the Node 24
# pass runs by default the suites that never open the journal. KLAXON_NODE24=all runs everything.
NODE24_SUITES=${KLAXON_NODE24:-test/domain test/settings test/modem test/channels/sms-text.test.ts test/channels/telegram-message.test.ts test/channels/email-message.test.ts}

if [ "$MACHINE_MAJOR" = 24 ]; then
  say "the machine's Node is 24: one vitest pass covers it"
elif [ "$NODE24_SUITES" = off ]; then
  say "KLAXON_NODE24=off: vitest did not run on Node 24"
else
  node24_started=$SECONDS
  node24_pass || record "vitest on Node 24 (setup)" failed
  say "the Node 24 pass took $((SECONDS - node24_started)) s"
fi

# --- 5. The Python SDK and the Go library, each against a real gateway started from this checkout
say "Python SDK (pytest)"
(cd sdk/python && "$KLAXON_PYTHON" -m pytest -q -p no:cacheprovider --junitxml="$OUT/pytest.xml")
[ -f "$OUT/pytest.xml" ] || record "pytest (no report)" failed

GO=$(command -v go || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true)
if [ -n "$GO" ]; then
  # GOTOOLCHAIN=local: never download a toolchain; the module needs only the standard library.
  say "Go library ($("$GO" version | awk '{print $3}'))"
  if (cd sdk/go && GOTOOLCHAIN=local "$GO" vet ./...); then record "go vet" passed; else record "go vet" failed; fi
  (cd sdk/go && GOTOOLCHAIN=local "$GO" test -count=1 -json ./... >"$OUT/go-test.json")
else
  say "go is not installed (Go 1.21 or newer, on PATH or in /usr/local/go): the Go library was NOT tested"
fi

say "all of it took $((SECONDS - started)) s; reports in .ci-out/"
summary
