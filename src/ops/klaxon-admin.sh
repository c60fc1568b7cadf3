#!/bin/sh
# klaxon-admin: the box's own admin commands (doctor, backup, restore, keys, ...; `klaxon-admin
# --help`), run with the Node the gateway runs on: the release's own, runtime/bin/node. npm run
# package puts this in the release as bin/klaxon-admin; install.sh links /usr/local/bin/klaxon-admin
# here. Devices use the Go `klaxon` binary instead (docs/clients.md).
# The installed gateway's settings and data dir, as its systemd unit sets them, unless given.
export KLAXON_CONFIG="${KLAXON_CONFIG:-/etc/klaxon/klaxon.yaml}"
export KLAXON_DATA_DIR="${KLAXON_DATA_DIR:-/var/lib/klaxon}"
app=$(dirname "$(dirname "$(readlink -f "$0")")")
exec "$app/runtime/bin/node" "$app/dist/klaxon-admin.cjs" "$@"
