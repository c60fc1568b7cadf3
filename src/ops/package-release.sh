#!/usr/bin/env bash
# `npm run package [-- --arch x64|arm64] [--out DIR]`: the release tarball that `install.sh
# --offline` installs on a box with no internet, dist/release/klaxon-<version>-linux-<arch>.tar.gz
# by default (x64). It carries everything the box runs, for that CPU architecture:
# - runtime/: Node 24, the npm registry's node-linux-<arch> package (the official build). The
#   unit and bin/klaxon-admin run the gateway and the CLI with it, so the box needs no Node.
# - dist/: the built app and its dashboard pages; dist/klaxon-admin.cjs, the bundled admin CLI.
# - node_modules/: the production dependencies. Two are native, and both npm packages carry
#   prebuilt binaries for linux-x64 and linux-arm64 (glibc): better-sqlite3's
#   prebuilds/linux-<arch>.node (Node-API, one binary for every Node) and
#   @serialport/bindings-cpp's prebuilds/linux-<arch>/*.glibc.node. The release keeps only the
#   target's, so nothing is compiled and an arm64 release is made on an x64 machine as is; every
#   .node file left must be an ELF for the target or the packaging fails.
# - the sample config, the systemd unit, install.sh, the docs and RELEASE.
# The arm64 release is proven under qemu by test/ops/release-arm64.test.ts (docs/operations.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

NODE_MAJOR=24
arch=x64
out=dist/release
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch=${2:?--arch needs x64 or arm64}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    *) echo "usage: npm run package [-- --arch x64|arm64] [--out DIR]" >&2; exit 2 ;;
  esac
done
# The ELF e_machine each architecture's binaries carry (62 x86-64, 183 AArch64).
case "$arch" in
  x64) elf_machine=62 ;;
  arm64) elf_machine=183 ;;
  *) echo "package: --arch $arch is not one Klaxon releases are made for (x64, arm64)" >&2; exit 2 ;;
esac
[ -d node_modules ] || { echo "node_modules is missing: run npm install first" >&2; exit 1; }
fail() { echo "package: $*" >&2; exit 1; }

version=$(node -p 'require("./package.json").version')
name="klaxon-$version"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/$name"
mkdir -p "$stage/config" "$stage/systemd" "$stage/docs" "$stage/runtime/bin"

# The Node runtime from the npm registry (npm's cache serves a repeat build offline); the headers
# and man pages are left out, the licence goes with the binary.
(cd "$work" && npm pack --silent --prefer-offline "node-linux-$arch@$NODE_MAJOR" >/dev/null && tar -xzf node-linux-"$arch"-*.tgz) ||
  fail "could not fetch node-linux-$arch@$NODE_MAJOR from the npm registry"
install -m 0755 "$work/package/bin/node" "$stage/runtime/bin/node"
install -m 0644 "$work/package/LICENSE" "$stage/runtime/LICENSE"
node_version=v$(node -p 'require(process.argv[1]).version' "$work/package/package.json")
rm -rf "$work/package" "$work"/node-linux-*.tgz

# Built straight into the release (not the checkout's dist/), with tsc: decorator metadata is
# what makes request validation work, and esbuild/tsx emit none.
npx --no-install tsc -p tsconfig.build.json --outDir "$stage/dist"
# tsc copies no assets (the dashboard's pages): everything under src/ that is not TypeScript.
(cd src && find . -type f ! -name '*.ts' ! -name '*.sh' -print0) | while IFS= read -r -d '' asset; do
  install -D -m 0644 "src/$asset" "$stage/dist/$asset"
done
# klaxon-admin: the CLI bundled into one file (its npm dependencies inside) that bin/klaxon-admin
# runs with the release's Node; the CLI's tsc output is not needed beside it.
rm -rf "$stage/dist/cli"
node src/cli/build.mjs --out "$stage/dist/klaxon-admin.cjs" >/dev/null
install -D -m 0755 src/ops/klaxon-admin.sh "$stage/bin/klaxon-admin"

cp package.json package-lock.json README.md install.sh install-roles.sh "$stage/"
cp config/klaxon.yaml "$stage/config/"
cp systemd/klaxon.service "$stage/systemd/"
cp docs/*.md "$stage/docs/"

# Production dependencies only: copy and prune (offline; the JavaScript is the same on every CPU).
cp -a node_modules "$stage/"
(cd "$stage" && npm prune --omit=dev --offline --no-audit --no-fund --loglevel=error >/dev/null)
modules="$stage/node_modules"
# better-sqlite3 loads build/Release/better_sqlite3.node before its prebuilds when one was compiled
# here (for this machine's CPU): only the target's prebuilt binary goes, without the sources.
sqlite="$modules/better-sqlite3"
[ -f "$sqlite/prebuilds/linux-$arch.node" ] || fail "better-sqlite3 has no prebuilds/linux-$arch.node"
rm -rf "$sqlite/deps" "$sqlite/src" "$sqlite/build"
find "$sqlite/prebuilds" -name '*.node' ! -name "linux-$arch.node" -delete
# serialport's node-gyp-build looks in build/ first too, then picks the glibc prebuild by its tags.
bindings="$modules/@serialport/bindings-cpp"
compgen -G "$bindings/prebuilds/linux-$arch/*.glibc.node" >/dev/null ||
  fail "@serialport/bindings-cpp has no prebuilds/linux-$arch/*.glibc.node"
rm -rf "$bindings/src" "$bindings/build"
find "$bindings/prebuilds" -mindepth 1 -maxdepth 1 ! -name "linux-$arch" -exec rm -rf {} +
find "$bindings/prebuilds" -name '*.node' ! -name '*.glibc.node' -delete
# prune leaves the emptied scope folders (@swc, @vitest...) behind.
find "$modules" -mindepth 1 -type d -empty -delete

# A native module this script does not know of (a new dependency, a binary compiled here) would
# load on no box of the other architecture: refuse to package it rather than ship it.
machine_of() { od -An -tu2 -j18 -N2 "$1" | tr -d ' '; }
while IFS= read -r -d '' binary; do
  [ "$(machine_of "$binary")" = "$elf_machine" ] || fail "${binary#"$stage/"} is not a linux-$arch binary"
done < <(find "$stage/runtime" "$modules" -type f \( -name '*.node' -o -path '*/runtime/bin/node' \) -print0)

# install.sh refuses a release built for another architecture.
cat >"$stage/RELEASE" <<EOF
version=$version
arch=$arch
node_version=$node_version
EOF
# The commit becomes klaxon_build_info's commit label; a tree that is not a git checkout has none.
commit=$(git rev-parse HEAD 2>/dev/null || true)
[ -z "$commit" ] || echo "commit=$commit" >>"$stage/RELEASE"

mkdir -p "$out"
tarball="$out/$name-linux-$arch.tar.gz"
# RELEASE first: install.sh reads it, and refuses a release for another CPU, before unpacking the rest.
tar -C "$work" -czf "$tarball" "$name/RELEASE" --exclude "$name/RELEASE" "$name"
echo "$tarball"
