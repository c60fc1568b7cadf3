#!/usr/bin/env bash
# `npm test`: every check this repository has, from a fresh clone, ending with ONE line
# "N passed, N failed" that sums them all (CI reads only that line). Exits non-zero if anything failed.
#
#  1. System packages the tests drive for real (socat, espeak-ng, opus-tools, Alertmanager, Chromium,
#     systemd-analyze, qemu-aarch64 and zsh for the device CLI, mosquitto and snmptrap for device
#     integrations, the aarch64 cross compiler's libraries for the arm64 release): installed with apt-get when run as root; otherwise it stops at once and prints
#     the exact `sudo apt-get install` line.
#  2. A Python virtual environment in .venv/ (gitignored) with schemathesis (the fuzz test) and pytest
#     (the Python SDK); nothing is installed into the system's Python.
#  3. Checks, one count each: `npm run typecheck`, and `npm run lint` / `npm run depcheck` when
#     package.json defines them (add such a script and it runs here, no change to this file needed).
#  4. Every vitest suite on Node 22, and on Node 24 the suites where the two LTS lines can differ
#     (native modules, process life cycle, the HTTP edge; `npm run test:full` runs every suite on
#     both): the machine's Node for its line, the npm registry's node-linux-<arch> package for the
#     other (see "Node" below; KLAXON_NODE24=off skips the Node 24 pass). Each pass prints its ten
#     slowest files.
#  5. The Python SDK's tests (pytest from the venv) and the Go library's (go vet, go test).
#  3 to 5 run in two streams: the Node 22 pass, and beside it the checks, the Node 24 pass (one
#  worker), the install tests and the SDKs one after the other (see there). The run ends with each
#  pass's ten slowest files and the count.
#
# `npm test -- test/api/auth.test.ts -t "refuses"`: arguments go to vitest, and only vitest runs
# (on the machine's Node, or Node 22 when the machine's is older than 22.14); `npm run test:unit`
# is plain `vitest run`.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.ci-out
mkdir -p "$OUT"
rm -f "$OUT"/vitest-*.json "$OUT"/checks.tsv "$OUT"/pytest.xml "$OUT"/go-test.json
started=$SECONDS

say() { echo "[npm test] $*"; }

# The run's temp dir on tmpfs. The tests make every data dir, journal, peer spool and browser
# profile under the temp dir, and the journal and the config store fsync what they commit: on a disk
# that the run's other writers share, those waits took more than half of an in-process test's time
# (test/services/escalation-model.test.ts: 48 s on /tmp, 18 s on /dev/shm, measured side by side).
# What the tests prove does not rest on the disk: a process killed with SIGKILL (the crash suite,
# the two boxes' "power cut") leaves its writes in the kernel's page cache on either, and the
# journal's flush order is tested with a held-back fsync of its own. A folder of the run's own on
# /dev/shm when that is a tmpfs that lets programs run (tests run scripts and binaries they write
# there) with 4 GiB free and the machine 4 GiB of free memory, else the usual temp dir; removed when
# the run ends.
shm_scratch() {
  [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || return 1
  awk '$2 == "/dev/shm" && $4 ~ /(^|,)noexec(,|$)/ {found = 1} END {exit found}' /proc/mounts || return 1
  [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -ge $((4 * 1024 * 1024)) ] || return 1
  [ "$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)" -ge $((4 * 1024 * 1024)) ] || return 1
  mktemp -d /dev/shm/klaxon-tests.XXXXXX
}
if scratch=$(shm_scratch); then
  export TMPDIR=$scratch
  # Quietly: the run ends with its count line, and a leftover (a mount a killed test left) is no failure.
  trap 'rm -rf "$scratch" 2>/dev/null' EXIT
fi
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
# The device CLI's arm64 binary runs under qemu-aarch64; its zsh completion is tried in a real zsh.
command -v qemu-aarch64-static >/dev/null 2>&1 || command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user-static)
command -v zsh >/dev/null 2>&1 || missing+=(zsh)
# Device integrations talk to real peers: Debian's MQTT broker and its publisher, net-snmp's snmptrap.
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || missing+=(mosquitto)
command -v mosquitto_pub >/dev/null 2>&1 || missing+=(mosquitto-clients)
command -v snmptrap >/dev/null 2>&1 || missing+=(snmp)
# Two boxes replicate over SFTP: the takeover test runs Debian's sshd on loopback as each box's replica target.
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
# The arm64 release's Node runs under qemu-aarch64 on the arm64 glibc and libstdc++ that the cross
# compiler brings (/usr/aarch64-linux-gnu); its native modules are the npm packages' prebuilt ones.
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || missing+=(g++-aarch64-linux-gnu)
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
  # sshd, mosquitto and Alertmanager are daemons their packages would start and enable at boot; the
  # tests run their own copies on loopback and stop them. A policy-rc.d that answers 101 ("action
  # forbidden") holds the start off during the install (unless the machine has one of its own), and
  # the units the install enabled are disabled again: the machine is left with programs, no service.
  held_off=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && held_off=1
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >"$OUT/apt.log" 2>&1
  installed=$?
  [ -z "$held_off" ] || rm -f /usr/sbin/policy-rc.d
  [ $installed = 0 ] || { tail -20 "$OUT/apt.log"; abort "apt-get install ${missing[*]} failed (log: .ci-out/apt.log)"; }
  for package_unit in openssh-server:ssh.service openssh-server:ssh.socket mosquitto:mosquitto.service \
    prometheus-alertmanager:prometheus-alertmanager.service; do
    case " ${missing[*]} " in *" ${package_unit%%:*} "*) ;; *) continue ;; esac
    command -v systemctl >/dev/null 2>&1 && systemctl disable --quiet "${package_unit#*:}" >>"$OUT/apt.log" 2>&1
  done
fi

# --- 2. Python virtual environment -------------------------------------------------------------
# Schemathesis 4.32.5 is the version the fuzz test's config and seed were written for.
# pymodbus and asyncua are the independent Modbus and OPC UA servers the PLC tests talk to.
PY_REQUIREMENTS="schemathesis==4.32.5 pytest==9.2.0 pymodbus==3.16.1 pyserial==3.5 asyncua==2.1.0"
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

# --- Litestream ----------------------------------------------------------------------------------
# The two-box tests (test/replication) run the real Litestream an install uses, built once from the
# Go module proxy into .tools/ (gitignored; several minutes on a small machine), then reused.
LITESTREAM_VERSION=v0.5.18
if [ ! -x .tools/litestream ] || [ "$(cat .tools/litestream.version 2>/dev/null)" != "$LITESTREAM_VERSION" ]; then
  go_for_tools=$(command -v go || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true)
  [ -n "$go_for_tools" ] || abort "go is needed to build Litestream for the replication tests (on PATH or in /usr/local/go)"
  say "building Litestream $LITESTREAM_VERSION into .tools/ (once)"
  GOBIN=$ROOT/.tools "$go_for_tools" install "github.com/benbjohnson/litestream/cmd/litestream@$LITESTREAM_VERSION" \
    >"$OUT/litestream-build.log" 2>&1 ||
    { tail -20 "$OUT/litestream-build.log"; abort "could not build Litestream (log: .ci-out/litestream-build.log)"; }
  echo "$LITESTREAM_VERSION" >.tools/litestream.version
fi

# --- Node ----------------------------------------------------------------------------------------
# The journal's better-sqlite3 13 is a Node-API 10 addon (one prebuilt binary for every Node, nothing
# to compile), and Node has Node-API 10 from 22.14 on: an older Node, such as the end-of-life Node 20
# some machines still run, crashes (SIGSEGV) at the first open. Missing lines come from the npm
# registry's node-linux-<arch> package (the official build: bin/node and the headers), extracted once
# into .nodes/<major>/ (gitignored; delete it to take a newer release). Prints the node binary.
registry_node() { # major
  local major=$1 dir=$ROOT/.nodes/$1 pkg
  pkg="node-linux-$(node -p process.arch)"
  mkdir -p "$ROOT/.nodes"
  (
    flock 9
    [ -x "$dir/bin/node" ] && exit 0
    say "fetching Node $major ($pkg@$major from the npm registry)" >&2
    tmp=$(mktemp -d "$ROOT/.nodes/fetch.XXXXXX")
    (cd "$tmp" && npm pack --silent "$pkg@$major" >/dev/null && tar -xzf "$pkg"-*.tgz) >"$OUT/node$major-fetch.log" 2>&1 &&
      rm -rf "$dir" && mv "$tmp/package" "$dir"
    status=$?
    rm -rf "$tmp"
    [ $status = 0 ] || tail "$OUT/node$major-fetch.log" >&2
    exit $status
  ) 9>"$ROOT/.nodes/lock" && echo "$dir/bin/node"
}
major_of() { "$1" -p 'process.versions.node.split(".")[0]'; }

# The Node for everything but the Node 24 pass (checks, the Node 22 pass or a filtered run, the SDK
# tests and the gateways they start): the machine's when it has Node-API 10, otherwise Node 22 from
# the registry, first on PATH from here on.
MACHINE_NODE=$(command -v node)
if "$MACHINE_NODE" -e 'process.exit(Number(process.versions.napi) >= 10 ? 0 : 1)'; then
  MAIN_NODE=$MACHINE_NODE
else
  MAIN_NODE=$(registry_node 22) || abort "could not fetch Node 22 from the npm registry (log: .ci-out/node22-fetch.log)"
  say "the machine's Node $("$MACHINE_NODE" --version) is older than 22.14: the tests run on Node 22 from the npm registry"
  PATH="$(dirname "$MAIN_NODE"):$PATH"
  export PATH
fi

# vitest on a given node binary, first on PATH so that everything the tests spawn (node, npm, the
# gateway, the packaged release) runs on it too; the JSON report is kept for the count.
run_vitest() { # label node-binary [vitest args...]
  local label=$1 node=$2
  shift 2
  say "vitest on $("$node" --version) ($label)"
  (PATH="$(dirname "$node"):$PATH" && export PATH &&
    "$node" node_modules/vitest/vitest.mjs run --reporter=default --reporter=json --outputFile="$OUT/vitest-$label.json" "$@")
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
  run_vitest "node$(major_of "$MAIN_NODE")" "$MAIN_NODE" "$@"
  summary
  exit $?
fi

# --- 3. to 5., in two streams -------------------------------------------------------------------
# On a 2-core machine vitest's two workers spend much of their time waiting (on timers, sockets and
# the processes they start), so the rest runs beside them rather than after: the main stream is the
# Node 22 pass (every suite but the install tests), the side stream the checks, the Node 24 pass on
# one worker, the install tests on Node 22, the Python SDK and the Go library, one after the other. The side stream's output is kept in
# .ci-out/side-stream.log and printed once the Node 22 pass has ended.
has_script() { node -e 'process.exit(require("./package.json").scripts?.[process.argv[1]] ? 0 : 1)' "$1"; }
checks() {
  for check in typecheck lint depcheck; do
    has_script "$check" || continue
    say "npm run $check"
    if npm run --silent "$check"; then record "$check" passed; else record "$check" failed; fi
  done
}

# Node 22 runs every suite. Node 24 runs what can differ between the two lines (better-sqlite3 13's
# one binary serves both): the native modules (the journal, serialport on a pty), the process life
# cycle (signals, systemd, SIGKILL and restart, start-up refusals) and the HTTP edge. Everything else
# is plain JavaScript that a second line only runs again, at minutes a pass. KLAXON_NODE24: "all"
# (`npm run test:full`) runs every suite on Node 24 too (after the Node 22 pass, with both workers),
# "off" skips the pass, a space-separated list of test paths runs only those. A line's Node is the
# machine's when it is on that line (and has Node-API 10), otherwise the registry's.
NODE24_SUITES="test/store test/crash test/api/process.test.ts test/ops/systemd.test.ts test/ops/start-state.test.ts
  test/ops/backup-restore.test.ts test/modem/modem-dialects.test.ts test/channels/voice-call-in.test.ts
  test/api/one-door.test.ts test/api/problem.test.ts test/api/auth.test.ts test/security/idle-connections.test.ts
  test/security/availability.test.ts"
vitest_pass() { # label major [vitest args...]
  local label=$1 major=$2 node pass_started=$SECONDS
  shift 2
  if [ "$(major_of "$MAIN_NODE")" = "$major" ]; then node=$MAIN_NODE
  else node=$(registry_node "$major") || { record "vitest on Node $major (setup)" failed; return; }
  fi
  run_vitest "$label" "$node" "$@"
  say "vitest on Node $major ($label) took $((SECONDS - pass_started)) s"
}

# The install tests package a release and run the release's own Node 24 (under qemu for arm64),
# whatever Node runs vitest, one after the other (install-roles waits for the x64 release that
# install packages). They run on Node 22 as before, but in the side stream: taken out of the Node 22
# pass they shorten the long pole by about a minute (two minutes of one worker's time, measured),
# and the side stream had that minute to spare.
INSTALL_SUITES="test/ops/install.test.ts test/ops/install-roles.test.ts test/ops/release-arm64.test.ts"
read -r -a install_suites <<<"$(echo $INSTALL_SUITES)"
install_excluded=()
for suite in "${install_suites[@]}"; do install_excluded+=(--exclude "$suite"); done

# The ten test files that took longest in a pass, printed at the end of the run: where the next
# minutes of CI are to be won.
slowest_files() { # label
  [ -f "$OUT/vitest-$1.json" ] || return 0
  node - "$OUT/vitest-$1.json" "$1" <<'EOF2'
const report = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const files = report.testResults.map((f) => [(f.endTime - f.startTime) / 1000, f.name.replace(process.cwd() + "/", "")]);
console.log(`[npm test] the ten slowest files on ${process.argv[3]}:`);
for (const [seconds, name] of files.sort((a, b) => b[0] - a[0]).slice(0, 10)) console.log(`  ${seconds.toFixed(1).padStart(6)} s  ${name}`);
EOF2
}

node24_side=()
node24_after=""
case ${KLAXON_NODE24:-subset} in
  off) ;;
  subset) read -r -a node24_side <<<"$(echo $NODE24_SUITES)" ;;
  # The release and install tests run the release's own Node 24 (under qemu for arm64), whatever
  # Node runs vitest, and take minutes each: once, in the Node 22 pass, proves them.
  all) node24_after=1 ;;
  *) read -r -a node24_side <<<"$KLAXON_NODE24" ;;
esac

# --- 5. The Python SDK and the Go library, each against a real gateway started from this checkout
sdk_tests() {
  say "Python SDK (pytest)"
  (cd sdk/python && "$KLAXON_PYTHON" -m pytest -q -p no:cacheprovider --junitxml="$OUT/pytest.xml")
  [ -f "$OUT/pytest.xml" ] || record "pytest (no report)" failed

  local go
  go=$(command -v go || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true)
  if [ -n "$go" ]; then
    # GOTOOLCHAIN=local: never download a toolchain; the module needs only the standard library.
    say "Go library ($("$go" version | awk '{print $3}'))"
    if (cd sdk/go && GOTOOLCHAIN=local "$go" vet ./...); then record "go vet" passed; else record "go vet" failed; fi
    # 20 minutes: the device CLI's test cross-builds five release binaries, slow on a cold build cache.
    (cd sdk/go && GOTOOLCHAIN=local "$go" test -count=1 -timeout 20m -json ./... >"$OUT/go-test.json")
  else
    say "go is not installed (Go 1.21 or newer, on PATH or in /usr/local/go): the Go library was NOT tested"
  fi
}

side_stream() {
  local side_started=$SECONDS
  checks
  if [ ${#node24_side[@]} -gt 0 ]; then vitest_pass node24 24 --maxWorkers=1 "${node24_side[@]}"; fi
  vitest_pass node22-install 22 --maxWorkers=1 "${install_suites[@]}"
  sdk_tests
  say "the side stream took $((SECONDS - side_started)) s"
}
say "the side stream (checks, vitest on Node 24, the install tests, the Python SDK, the Go library) runs beside vitest on Node 22"
side_stream >"$OUT/side-stream.log" 2>&1 &
side_pid=$!

vitest_pass node22 22 "${install_excluded[@]}"
wait "$side_pid"
say "the side stream's output (.ci-out/side-stream.log):"
cat "$OUT/side-stream.log"
if [ -n "$node24_after" ]; then
  vitest_pass node24 24 "${install_excluded[@]}"
fi
[ "${KLAXON_NODE24:-subset}" != off ] || say "KLAXON_NODE24=off: vitest did not run on Node 24"

for pass in node22 node24 node22-install; do slowest_files "$pass"; done
say "all of it took $((SECONDS - started)) s; reports in .ci-out/"
summary
