#!/usr/bin/env bash
# Builds the device CLI (sdk/go/cmd/klaxon) for every platform devices run:
#   dist/device-cli/klaxon-<os>-<arch>[.exe]
# Static (CGO_ENABLED=0), stripped, reproducible paths (-trimpath), with the version (package.json)
# and the commit (git) set by -X; each binary must stay under 10 MB, or the build fails.
# Usage: sdk/go/build-cli.sh [output-dir]   (KLAXON_VERSION / KLAXON_COMMIT override the stamps)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/dist/device-cli}
version=${KLAXON_VERSION:-$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")}
commit=${KLAXON_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
max_bytes=$((10 * 1000 * 1000))
# GOTOOLCHAIN=local: never download a toolchain; the module needs only the standard library.
export CGO_ENABLED=0 GOTOOLCHAIN=local
mkdir -p "$out"
for target in linux/amd64 linux/arm64 linux/arm/7 windows/amd64 darwin/arm64; do
  IFS=/ read -r os arch arm <<<"$target"
  name=klaxon-$os-$arch
  [ "$os" = windows ] && name=$name.exe
  (cd "$here" && GOOS=$os GOARCH=$arch GOARM=${arm:-} go build -trimpath \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$out/$name" ./cmd/klaxon)
  bytes=$(wc -c <"$out/$name")
  echo "$name $bytes bytes"
  [ "$bytes" -le "$max_bytes" ] || { echo "$name is over 10 MB" >&2; exit 1; }
done
# The man page beside them, written by the CLI itself from its command table (built for this machine).
(cd "$here" && go run ./cmd/klaxon man) >"$out/klaxon.1"
