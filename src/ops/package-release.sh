#!/usr/bin/env bash
# `npm run package [-- --out DIR]`: the release tarball that `install.sh --offline` installs on a
# box with no internet. It holds the built app (dist/, run with `node dist/main.js`), the box's
# admin CLI (bin/klaxon-admin, which runs dist/klaxon-admin.cjs), the production node_modules
# compiled for THIS machine's CPU architecture and Node ABI (better-sqlite3 is native), the sample
# config, the systemd unit and install.sh.
#
# For a Raspberry Pi (arm64) build on an arm64 machine with the same Node major as the box:
# the Pi itself, or `docker run --rm --platform linux/arm64 -v "$PWD":/src -w /src node:24-bookworm
# sh -c 'npm install && npm run package'` on an amd64 host with qemu-user-static.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=release
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    *) echo "usage: npm run package [-- --out DIR]" >&2; exit 2 ;;
  esac
done
[ -d node_modules ] || { echo "node_modules is missing: run npm install first" >&2; exit 1; }

version=$(node -p 'require("./package.json").version')
arch=$(node -p 'process.arch')
name="klaxon-$version"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/$name"
mkdir -p "$stage/config" "$stage/systemd" "$stage/docs"

# Built straight into the release (not the checkout's dist/), with tsc: decorator metadata is
# what makes request validation work, and esbuild/tsx emit none.
npx --no-install tsc -p tsconfig.build.json --outDir "$stage/dist"
# tsc copies no assets (the dashboard's pages): everything under src/ that is not TypeScript.
(cd src && find . -type f ! -name '*.ts' ! -name '*.sh' -print0) | while IFS= read -r -d '' asset; do
  install -D -m 0644 "src/$asset" "$stage/dist/$asset"
done
# klaxon-admin: the CLI bundled into one file (its npm dependencies inside) that bin/klaxon-admin
# runs with the box's Node; the CLI's tsc output is not needed beside it.
rm -rf "$stage/dist/cli"
node src/cli/build.mjs --out "$stage/dist/klaxon-admin.cjs" >/dev/null
install -D -m 0755 src/ops/klaxon-admin.sh "$stage/bin/klaxon-admin"

cp package.json package-lock.json README.md install.sh "$stage/"
cp config/klaxon.yaml "$stage/config/"
cp systemd/klaxon.service "$stage/systemd/"
cp docs/*.md "$stage/docs/"

# Production dependencies only, as compiled here: copy and prune (offline, nothing is rebuilt).
cp -a node_modules "$stage/"
(cd "$stage" && npm prune --omit=dev --offline --no-audit --no-fund --loglevel=error >/dev/null)
# better-sqlite3 ships its sources (SQLite's too) and prebuilt binaries for eight platforms; a
# Debian-like box (glibc) of this architecture loads only prebuilds/linux-<arch>.node.
rm -rf "$stage/node_modules/better-sqlite3/deps" "$stage/node_modules/better-sqlite3/src"
find "$stage/node_modules/better-sqlite3/prebuilds" -name '*.node' ! -name "linux-$arch.node" -delete
# prune leaves the emptied scope folders (@swc, @vitest...) behind.
find "$stage/node_modules" -mindepth 1 -type d -empty -delete

# install.sh refuses a release built for another architecture or Node ABI.
cat >"$stage/RELEASE" <<EOF
version=$version
arch=$arch
node_abi=$(node -p 'process.versions.modules')
node_version=$(node --version)
EOF
# The commit becomes klaxon_build_info's commit label; a tree that is not a git checkout has none.
commit=$(git rev-parse HEAD 2>/dev/null || true)
[ -z "$commit" ] || echo "commit=$commit" >>"$stage/RELEASE"

mkdir -p "$out"
tarball="$out/$name-linux-$arch.tar.gz"
tar -C "$work" -czf "$tarball" "$name"
echo "$tarball"
