#!/usr/bin/env bash
# Klaxon installer for Debian, Ubuntu and Raspberry Pi OS (amd64, arm64). Run as root.
#
#   sudo ./install.sh                      install or upgrade from this release (or checkout)
#   sudo ./install.sh --offline FILE       install or upgrade from a release tarball (npm run package)
#   sudo ./install.sh --uninstall          remove the app; keep config and data
#   sudo ./install.sh --uninstall --purge  remove config, data and the klaxon user as well
#   sudo ./install.sh --role active|standby --peer URL --peer-host-key KEY [--litestream PATH]
#                     [--box-name NAME] [--replica sftp://user@host:port/path] [--peer-key KEY]
#                                          one of two boxes (docs/high-availability.md#install)
#   ./install.sh --root DIR [...]          stage everything into DIR instead of /: no systemctl,
#                                          no useradd, no apt; the commands are written to
#                                          DIR/klaxon-install.plan (tests, image builders)
#   ./install.sh --root DIR --arch arm64 --offline FILE   stage for a box of another CPU (x64,
#                                          arm64), such as a Raspberry Pi's image built on a PC
#
# A release carries its own Node (runtime/bin/node) and runs only on the CPU it was made for
# (npm run package -- --arch x64|arm64): the box needs no Node of its own.
#
# Running it again upgrades: the app is replaced, an edited /etc/klaxon/klaxon.yaml is kept (the
# new sample goes next to it as klaxon.yaml.dist), the data in /var/lib/klaxon is never touched.
set -euo pipefail

APP_DIR=/opt/klaxon
CONFIG_DIR=/etc/klaxon
DATA_DIR=/var/lib/klaxon
UNIT_FILE=/etc/systemd/system/klaxon.service
UDEV_RULE=/etc/udev/rules.d/77-klaxon-modem.rules
SYSCTL_FILE=/etc/sysctl.d/90-klaxon.conf
# The listen queue a storm of devices connecting at once needs: the gateway listens with the
# system's net.core.somaxconn (docs/operations.md); kernels before 5.4 default to 128.
SOMAXCONN=4096
ADMIN_LINK=/usr/local/bin/klaxon-admin
SERVICE_USER=klaxon
PACKAGES=(espeak-ng opus-tools)

ROOT=""
OFFLINE=""
TARGET_ARCH=""
ACTION=install
PURGE=0

die() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "klaxon: $*"; }

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

# shellcheck source=install-roles.sh
. "$(dirname "$0")/install-roles.sh"

while [ $# -gt 0 ]; do
  role_option "$1" "${2-}"
  if [ "$ROLE_USED" = 1 ]; then
    [ $# -ge 2 ] || die "$1 needs a value"
    shift 2
    continue
  fi
  case "$1" in
    --root) ROOT=${2:?--root needs a directory}; shift 2 ;;
    --offline) OFFLINE=${2:?--offline needs a release tarball}; shift 2 ;;
    --arch) TARGET_ARCH=${2:?--arch needs x64 or arm64}; shift 2 ;;
    --uninstall) ACTION=uninstall; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option $1" ;;
  esac
done
[ "$PURGE" = 1 ] && [ "$ACTION" != uninstall ] && die "--purge goes with --uninstall"
case "$TARGET_ARCH" in "" | x64 | arm64) ;; *) die "--arch takes x64 or arm64, not $TARGET_ARCH" ;; esac
[ -z "$TARGET_ARCH" ] || [ -n "$ROOT" ] || die "--arch goes with --root: a real install is for this box's own CPU"

if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT"
  ROOT=$(cd "$ROOT" && pwd)
  PLAN="$ROOT/klaxon-install.plan"
  : >"$PLAN"
elif [ "$(id -u)" != 0 ]; then
  die "run me as root: sudo $0"
fi

# A path on the target system (inside --root when staging).
at() { printf '%s%s' "$ROOT" "$1"; }

# Commands that change users, services or packages: run them, or write them to the plan.
act() {
  if [ -n "$ROOT" ]; then echo "$*" >>"$PLAN"; else "$@"; fi
}

check_role_options

check_os() {
  [ -r /etc/os-release ] || die "cannot tell which OS this is (/etc/os-release is missing); Klaxon supports Debian, Ubuntu and Raspberry Pi OS"
  # shellcheck disable=SC1091
  local id id_like
  id=$(. /etc/os-release && echo "${ID:-}")
  id_like=$(. /etc/os-release && echo "${ID_LIKE:-}")
  case " $id $id_like " in
    *" debian "*|*" ubuntu "*|*" raspbian "*) ;;
    *) die "this is $id; install.sh supports Debian, Ubuntu and Raspberry Pi OS (see docs/operations.md to install by hand elsewhere)" ;;
  esac
  if [ -z "$ROOT" ] && [ ! -d /run/systemd/system ]; then
    die "systemd is not running on this machine; Klaxon runs as a systemd service"
  fi
}

# This machine's CPU as Klaxon's releases name it. dpkg's architecture, not uname's: a Raspberry
# Pi with a 64-bit kernel under 32-bit Raspberry Pi OS says aarch64 but runs armhf programs.
machine_arch() {
  local arch
  arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
  case "$arch" in
    amd64|x86_64) echo x64 ;;
    arm64|aarch64) echo arm64 ;;
    armhf|armel|armv7l|armv6l) die "this box runs 32-bit ARM programs ($arch); Klaxon needs a 64-bit OS (arm64): on a Raspberry Pi, Raspberry Pi OS Lite (64-bit)" ;;
    *) die "this box's CPU architecture is $arch; Klaxon releases are for x64 (amd64) and arm64" ;;
  esac
}

install_packages() {
  if [ -n "$OFFLINE" ]; then
    [ -z "$ROOT" ] || return 0
    local missing=()
    command -v espeak-ng >/dev/null || missing+=(espeak-ng)
    command -v opusenc >/dev/null || missing+=(opus-tools)
    [ ${#missing[@]} -eq 0 ] || say "offline install: ${missing[*]} not installed; Telegram voice notes need them (apt-get install ${missing[*]} from a local mirror or .deb files)"
    return
  fi
  # Two boxes ship to each other's sshd over SFTP.
  [ -z "$ROLE" ] || PACKAGES+=(openssh-server)
  act env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PACKAGES[@]}"
}

# The release to install, unpacked: --offline's tarball, this folder when it is a release, or a
# release packaged from this checkout.
SOURCE=""
WORK=""
prepare_source() {
  local here
  here=$(cd "$(dirname "$0")" && pwd)
  WORK=$(mktemp -d)
  trap '[ -n "$WORK" ] && rm -rf "$WORK"' EXIT
  local tarball="$OFFLINE"
  if [ -z "$tarball" ]; then
    if [ -f "$here/RELEASE" ] && [ -f "$here/dist/main.js" ]; then
      SOURCE=$here
      check_arch "$SOURCE/RELEASE"
      return
    fi
    [ -f "$here/package.json" ] && [ -d "$here/src" ] || die "$here is neither a Klaxon release nor a checkout; use --offline FILE"
    say "packaging this checkout (npm run package -- --arch $BOX_ARCH)"
    tarball=$(cd "$here" && npm run --silent package -- --arch "$BOX_ARCH" --out "$WORK" | tail -1)
  fi
  [ -f "$tarball" ] || die "no release tarball at $tarball"
  local not_a_release="$tarball is not a Klaxon release (made by npm run package)"
  # A release for another CPU is refused before its 190 MB are unpacked: npm run package puts
  # RELEASE first, where tar stops reading.
  tar -xzf "$tarball" -C "$WORK" --wildcards --occurrence=1 'klaxon-*/RELEASE' 2>/dev/null || die "$not_a_release"
  check_arch "$WORK"/klaxon-*/RELEASE
  tar -xzf "$tarball" -C "$WORK"
  SOURCE=$(find "$WORK" -mindepth 1 -maxdepth 1 -type d -name 'klaxon-*' | head -1)
  [ -n "$SOURCE" ] && [ -f "$SOURCE/RELEASE" ] && [ -f "$SOURCE/dist/main.js" ] || die "$not_a_release"
}

check_arch() { # RELEASE file
  local arch
  arch=$(sed -n 's/^arch=//p' "$1")
  [ "$arch" = "$BOX_ARCH" ] || die "this release is for linux-$arch, but this box is $BOX_ARCH; install klaxon-$(sed -n 's/^version=//p' "$1")-linux-$BOX_ARCH.tar.gz (npm run package -- --arch $BOX_ARCH)"
}

check_release() {
  local node="$SOURCE/runtime/bin/node"
  [ -x "$node" ] || die "this release has no Node runtime (runtime/bin/node): it was made by an older npm run package; make it again"
  # The release's Node and the journal's SQLite binding need glibc 2.34 or newer: on an older
  # system they fail to load, which would otherwise show only as a service that keeps failing.
  # (Staging for another CPU cannot run them here.)
  [ "$BOX_ARCH" = "$(machine_arch)" ] || return 0
  local loaded
  loaded=$(cd "$SOURCE" && "$node" -e 'new (require("better-sqlite3"))(":memory:").close()' 2>&1) ||
    die "the release's Node cannot open the journal's SQLite on this system; Klaxon needs glibc 2.34 or newer (Debian 12, Ubuntu 22.04, Raspberry Pi OS bookworm): ${loaded:0:400}"
}

create_user() {
  if [ -n "$ROOT" ] || ! getent passwd "$SERVICE_USER" >/dev/null; then
    act useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
  fi
  act usermod --append --groups dialout "$SERVICE_USER"
}

install_app() {
  local target next old
  target=$(at "$APP_DIR")
  next="$target.new"
  old="$target.old"
  rm -rf "$next" "$old"
  mkdir -p "$(dirname "$target")"
  cp -a "$SOURCE" "$next"
  # Read-only for the service: the app is root's, and nothing under it is secret.
  chmod -R u=rwX,go=rX "$next"
  act chown -R root:root "$APP_DIR"
  # The swap keeps the old app whole until the new one is complete.
  [ -d "$target" ] && mv "$target" "$old"
  mv "$next" "$target"
  rm -rf "$old"
  mkdir -p "$(dirname "$(at "$ADMIN_LINK")")"
  ln -sfn "$APP_DIR/bin/klaxon-admin" "$(at "$ADMIN_LINK")"
}

# An unedited config is replaced by the new sample; an edited one is kept, with the new sample
# beside it. "Unedited" means byte-identical to the sample the previous install put there. With
# --role, "the sample" is the sample with the role's settings, and an edited config gets them too.
install_config() {
  local dir config sample previous
  dir=$(at "$CONFIG_DIR")
  config="$dir/klaxon.yaml"
  sample="$SOURCE/config/klaxon.yaml"
  previous="$1"
  if [ -n "$ROLE" ]; then
    with_role_settings "$sample" "$WORK/role-sample.yaml"
    sample="$WORK/role-sample.yaml"
    [ -z "$previous" ] || { with_role_settings "$previous" "$WORK/role-previous.yaml" && previous="$WORK/role-previous.yaml"; }
  fi
  mkdir -p "$dir"
  chmod 0750 "$dir"
  act chown root:"$SERVICE_USER" "$CONFIG_DIR"
  if [ ! -f "$config" ] || { [ -n "$previous" ] && cmp -s "$config" "$previous"; }; then
    install -m 0640 "$sample" "$config"
    rm -f "$config.dist"
  elif ! cmp -s "$config" "$sample"; then
    install -m 0640 "$sample" "$config.dist"
    say "kept your edited $CONFIG_DIR/klaxon.yaml; the new release's sample is $CONFIG_DIR/klaxon.yaml.dist"
  fi
  if [ -n "$ROLE" ]; then
    with_role_settings "$config" "$WORK/role-config.yaml"
    # cat, not mv: the file keeps its mode and owner.
    cmp -s "$WORK/role-config.yaml" "$config" || cat "$WORK/role-config.yaml" >"$config"
  fi
  act chown root:"$SERVICE_USER" "$CONFIG_DIR/klaxon.yaml"
  if [ ! -f "$dir/klaxon.env" ]; then
    install -m 0600 /dev/null "$dir/klaxon.env"
    cat >"$dir/klaxon.env" <<'EOF'
# Secrets for the klaxon service, read by systemd (root only). One KEY=value per line, e.g.
# KLAXON_SMTP_PASSWORD=...
# KLAXON_TELEGRAM_BOT_TOKEN=...
# KLAXON_MODEM_PIN=...
EOF
  fi
}

install_data_dir() {
  mkdir -p "$(at "$DATA_DIR")"
  chmod 0700 "$(at "$DATA_DIR")"
  act chown "$SERVICE_USER:$SERVICE_USER" "$DATA_DIR"
}

install_udev_rule() {
  mkdir -p "$(dirname "$(at "$UDEV_RULE")")"
  cat >"$(at "$UDEV_RULE")" <<'EOF'
# Klaxon: a stable name for the GSM modem's AT port (/dev/klaxon-modem, for modem.port), and
# ModemManager told to keep off the modem, which Klaxon drives itself (docs/modem.md#modemmanager).
# Numbered 77 to run before ModemManager's 80-mm-candidate.rules, which read the tag.
# More than one matching device? Add ATTRS{serial}=="..." (udevadm info -a /dev/ttyUSB2) to pick one.
ACTION!="add|change|move|bind", GOTO="klaxon_modem_end"

# SIMCom (1e0e: SIM7500/SIM7600) and Quectel (2c7c: EC25/EG25/EC200) modems. ModemManager takes
# the tag from the USB device (the whole modem: its QMI and network ports too, which it would
# otherwise still drive) and from each port.
SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", ATTR{idVendor}=="1e0e", ENV{ID_MM_DEVICE_IGNORE}="1"
SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", ATTR{idVendor}=="2c7c", ENV{ID_MM_DEVICE_IGNORE}="1"
SUBSYSTEM=="tty", ATTRS{idVendor}=="1e0e", ENV{ID_MM_DEVICE_IGNORE}="1"
SUBSYSTEM=="tty", ATTRS{idVendor}=="2c7c", ENV{ID_MM_DEVICE_IGNORE}="1"
# Their AT commands are on USB interface 2 (ttyUSB2 when nothing else is plugged in).
SUBSYSTEM=="tty", ATTRS{idVendor}=="1e0e", ENV{ID_USB_INTERFACE_NUM}=="02", SYMLINK+="klaxon-modem"
SUBSYSTEM=="tty", ATTRS{idVendor}=="2c7c", ENV{ID_USB_INTERFACE_NUM}=="02", SYMLINK+="klaxon-modem"

# SIM800 boards behind a USB-serial adapter: CH340, CP210x, FTDI, PL2303. ModemManager's strict
# filter, the default in current releases, leaves such adapters alone already; the tag also
# covers one set to the older probing filter. It hides any other device on such an adapter from
# ModemManager too, which on a Klaxon box is what we want.
SUBSYSTEM=="tty", ATTRS{idVendor}=="1a86", ATTRS{idProduct}=="7523", ENV{ID_MM_DEVICE_IGNORE}="1", SYMLINK+="klaxon-modem"
SUBSYSTEM=="tty", ATTRS{idVendor}=="10c4", ATTRS{idProduct}=="ea60", ENV{ID_MM_DEVICE_IGNORE}="1", SYMLINK+="klaxon-modem"
SUBSYSTEM=="tty", ATTRS{idVendor}=="0403", ATTRS{idProduct}=="6001", ENV{ID_MM_DEVICE_IGNORE}="1", SYMLINK+="klaxon-modem"
SUBSYSTEM=="tty", ATTRS{idVendor}=="067b", ATTRS{idProduct}=="2303", ENV{ID_MM_DEVICE_IGNORE}="1", SYMLINK+="klaxon-modem"

LABEL="klaxon_modem_end"
EOF
  chmod 0644 "$(at "$UDEV_RULE")"
  act udevadm control --reload-rules
  act udevadm trigger --subsystem-match=tty --action=change
}

# Raises net.core.somaxconn where the kernel's is lower (read from the target: --root DIR's own
# proc/sys/net/core/somaxconn when staging, which is left alone when it has none).
install_sysctl() {
  local current
  current=$(cat "$(at /proc/sys/net/core/somaxconn)" 2>/dev/null || echo "")
  if [ -z "$current" ] || [ "$current" -ge "$SOMAXCONN" ]; then return 0; fi
  mkdir -p "$(dirname "$(at "$SYSCTL_FILE")")"
  printf '%s\n' "# Klaxon: room in the listen queue for a storm of devices connecting at once (the kernel said $current)." \
    "net.core.somaxconn = $SOMAXCONN" >"$(at "$SYSCTL_FILE")"
  chmod 0644 "$(at "$SYSCTL_FILE")"
  act sysctl --load "$SYSCTL_FILE"
}

install_unit() {
  mkdir -p "$(dirname "$(at "$UNIT_FILE")")"
  install -m 0644 "$SOURCE/systemd/klaxon.service" "$(at "$UNIT_FILE")"
  act systemctl daemon-reload
  act systemctl enable klaxon.service
  # Type=notify: this returns once the new gateway serves (or failed to start).
  act systemctl restart klaxon.service
}

config_port() {
  local port
  port=$(sed -n 's/^port:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$(at "$CONFIG_DIR")/klaxon.yaml" | head -1)
  echo "${port:-8080}"
}

do_install() {
  check_os
  BOX_ARCH=${TARGET_ARCH:-$(machine_arch)}
  prepare_source
  check_release
  # The sample the previous release installed decides whether the config was edited.
  local previous_sample=""
  if [ -f "$(at "$APP_DIR")/config/klaxon.yaml" ]; then
    previous_sample="$WORK/previous-sample.yaml"
    cp "$(at "$APP_DIR")/config/klaxon.yaml" "$previous_sample"
  fi
  install_packages
  create_user
  install_app
  install_config "$previous_sample"
  install_data_dir
  [ -z "$ROLE" ] || install_role
  install_udev_rule
  install_sysctl
  install_unit
  local host
  host=$( (hostname -I 2>/dev/null || true) | awk '{print $1}')
  say "installed $(sed -n 's/^version=//p' "$SOURCE/RELEASE") to $APP_DIR"
  say "dashboard: http://${host:-<this box>}:$(config_port)/dashboard"
  say "initial admin API key (first install only): sudo cat $DATA_DIR/initial-admin-key"
  say "settings: $CONFIG_DIR/klaxon.yaml, secrets: $CONFIG_DIR/klaxon.env; then: systemctl restart klaxon"
  say "check the installation: sudo -u $SERVICE_USER KLAXON_CONFIG=$CONFIG_DIR/klaxon.yaml klaxon-admin doctor"
  [ -z "$ROLE" ] || print_role_steps
  [ -z "$ROOT" ] || say "staged into $ROOT; the commands an install would run are in $PLAN"
}

do_uninstall() {
  act systemctl disable --now klaxon.service
  rm -f "$(at "$UNIT_FILE")" "$(at "$UDEV_RULE")" "$(at "$SYSCTL_FILE")" "$(at "$ADMIN_LINK")"
  act systemctl daemon-reload
  act udevadm control --reload-rules
  rm -rf "$(at "$APP_DIR")"
  uninstall_role
  if [ "$PURGE" = 1 ]; then
    rm -rf "$(at "$CONFIG_DIR")" "$(at "$DATA_DIR")"
    act userdel "$SERVICE_USER"
    say "removed Klaxon, its settings, its data and the $SERVICE_USER user"
  else
    say "removed Klaxon; kept $CONFIG_DIR (settings) and $DATA_DIR (journal, config store, backups): --uninstall --purge deletes them"
  fi
}

if [ "$ACTION" = install ]; then do_install; else do_uninstall; fi
