# Sourced by install.sh: `--role active|standby --peer URL` sets a box up as one of two
# (docs/high-availability.md#install). Litestream runs as the gateway's child, supervised by it, so
# klaxon.service is its unit: this installs only the binary. Each box gets
# - replication.* in /etc/klaxon/klaxon.yaml (the one file the gateway reads: KLAXON_CONFIG);
# - an SSH key pair for the klaxon user, with which its Litestream ships to the peer over SFTP;
# - a klaxon-replica user that may only SFTP into /var/lib/klaxon-replica/incoming, where the
#   peer's Litestream ships and which this box follows while it stands by.

LITESTREAM_BIN=/usr/local/bin/litestream
REPLICA_USER=klaxon-replica
REPLICA_HOME=/var/lib/klaxon-replica
INCOMING_DIR=$REPLICA_HOME/incoming
AUTHORIZED_KEYS=$REPLICA_HOME/.ssh/authorized_keys
SFTP_KEY=$CONFIG_DIR/replication_ed25519
SSHD_SNIPPET=/etc/ssh/sshd_config.d/klaxon-replica.conf
HOST_KEY_PATTERN='^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa) [A-Za-z0-9+/]+=*( .*)?$'

ROLE=""
PEER=""
BOX_NAME=""
REPLICA=""
LITESTREAM_SOURCE=""
PEER_HOST_KEY=""
PEER_KEY=""

# Sets $ROLE_USED when $1 is one of the role options (and consumes its value).
role_option() { # option value
  ROLE_USED=1
  case "$1" in
    --role) ROLE=$2 ;;
    --peer) PEER=$2 ;;
    --box-name) BOX_NAME=$2 ;;
    --replica) REPLICA=$2 ;;
    --litestream) LITESTREAM_SOURCE=$2 ;;
    --peer-host-key) PEER_HOST_KEY=$2 ;;
    --peer-key) PEER_KEY=$2 ;;
    *) ROLE_USED=0 ;;
  esac
}

# The value of a replication setting in a config file written by this script or the sample.
replication_setting() { # file key
  [ -f "$1" ] || return 0
  sed -n "/^replication:/,/^[^ #]/s/^  $2:[[:space:]]*\"\{0,1\}\([^\"]*\)\"\{0,1\}[[:space:]]*$/\1/p" "$1" | head -1
}

# Refuses a bad role, peer or key before anything is installed.
check_role_options() {
  if [ -z "$ROLE" ]; then
    [ -z "$PEER$BOX_NAME$REPLICA$LITESTREAM_SOURCE$PEER_HOST_KEY$PEER_KEY" ] ||
      die "--peer, --box-name, --replica, --litestream, --peer-host-key and --peer-key go with --role active|standby"
    return 0
  fi
  [ "$ACTION" = install ] || die "--role goes with an install, not --uninstall"
  case "$ROLE" in active | standby) ;; *) die "--role takes active or standby, not \"$ROLE\"" ;; esac
  [ -n "$PEER" ] || die "--role $ROLE needs --peer, the other box's base URL (e.g. --peer http://10.0.0.12:8080)"
  [[ "$PEER" =~ ^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]+)?/?$ ]] ||
    die "--peer takes the other box's base URL, such as http://10.0.0.12:8080, not \"$PEER\""
  PEER=${PEER%/}
  local peer_host=${BASH_REMATCH[1]}
  REPLICA=${REPLICA:-sftp://$REPLICA_USER@$peer_host:22$INCOMING_DIR}
  [[ "$REPLICA" =~ ^sftp://[^@/]+@[^/]+(:[0-9]+)?/.+ ]] ||
    die "--replica takes sftp://user@host:port/path on the peer, not \"$REPLICA\" (a NAS folder is set by hand: docs/high-availability.md)"
  [ -z "$BOX_NAME" ] || [[ "$BOX_NAME" =~ ^[A-Za-z0-9._-]+$ ]] ||
    die "--box-name takes letters, digits, dots, dashes and underscores, not \"$BOX_NAME\""
  # Re-running without --peer-host-key keeps the key recorded before.
  PEER_HOST_KEY=${PEER_HOST_KEY:-$(replication_setting "$(at "$CONFIG_DIR")/klaxon.yaml" sftp_host_key)}
  [ -n "$PEER_HOST_KEY" ] ||
    die "--role $ROLE needs --peer-host-key: the peer's SSH host key, which Litestream checks before it ships (on the peer: cat /etc/ssh/ssh_host_ed25519_key.pub)"
  [[ "$PEER_HOST_KEY" =~ $HOST_KEY_PATTERN ]] ||
    die "--peer-host-key takes a public key as in the peer's /etc/ssh/ssh_host_ed25519_key.pub (\"ssh-ed25519 AAAA...\"), not \"$PEER_HOST_KEY\""
  [ -z "$PEER_KEY" ] || [[ "$PEER_KEY" =~ $HOST_KEY_PATTERN ]] ||
    die "--peer-key takes the peer's klaxon public key as the peer's install.sh printed it (\"ssh-ed25519 AAAA... klaxon@...\"), not \"$PEER_KEY\""
  if [ -z "$LITESTREAM_SOURCE" ]; then
    LITESTREAM_SOURCE=$(command -v litestream || true)
    [ -n "$LITESTREAM_SOURCE" ] || [ ! -x "$(at "$LITESTREAM_BIN")" ] || LITESTREAM_SOURCE=$(at "$LITESTREAM_BIN")
  fi
  [ -n "$LITESTREAM_SOURCE" ] ||
    die "--role $ROLE needs Litestream v0.5 and it is not on this box: give --litestream PATH to its binary (install.sh downloads nothing)"
  [ -f "$LITESTREAM_SOURCE" ] && [ -x "$LITESTREAM_SOURCE" ] ||
    die "--litestream $LITESTREAM_SOURCE is not an executable file"
}

yaml_string() { local value=${1//\\/\\\\}; printf '"%s"' "${value//\"/\\\"}"; }

# The replication settings of this role, one "key: value" a line.
role_settings() {
  echo "role: $(yaml_string "$ROLE")"
  [ -z "$BOX_NAME" ] || echo "box_name: $(yaml_string "$BOX_NAME")"
  echo "peer: $(yaml_string "$PEER")"
  echo "litestream: $(yaml_string "$LITESTREAM_BIN")"
  echo "replica: $(yaml_string "$REPLICA")"
  echo "sftp_key_file: $(yaml_string "$SFTP_KEY")"
  echo "sftp_host_key: $(yaml_string "$PEER_HOST_KEY")"
  echo "incoming: $(yaml_string "$INCOMING_DIR")"
}

# Writes config file $1 with the role's settings in its replication: section to $2: each key's
# line is replaced where it is, a key the section lacks is added at its end, a missing section is
# appended. Comments and every other setting stay as they are.
with_role_settings() { # from to
  role_settings | awk '
    NR == FNR { key = substr($0, 1, index($0, ":") - 1); want[key] = $0; order[++n] = key; next }
    function add_missing() { for (i = 1; i <= n; i++) if (!(order[i] in done)) print "  " want[order[i]] }
    /^replication:/ { inside = 1; seen = 1; print; next }
    inside && /^[^ #]/ { add_missing(); inside = 0 }
    inside && match($0, /^  [a-z_]+:/) {
      key = substr($0, 3, RLENGTH - 3)
      if (key in want) { print "  " want[key]; done[key] = 1; next }
    }
    { print }
    END { if (inside) add_missing(); if (!seen) { print "replication:"; add_missing() } }
  ' - "$1" >"$2"
}

install_litestream() {
  local target
  target=$(at "$LITESTREAM_BIN")
  mkdir -p "$(dirname "$target")"
  cmp -s "$LITESTREAM_SOURCE" "$target" || install -m 0755 "$LITESTREAM_SOURCE" "$target"
  chmod 0755 "$target"
}

# The klaxon user's key for shipping to the peer's klaxon-replica user; made once, kept after.
install_sftp_key() {
  local key comment
  key=$(at "$SFTP_KEY")
  comment="klaxon@${BOX_NAME:-$(hostname)}"
  [ -f "$key" ] || ssh-keygen -q -t ed25519 -N "" -C "$comment" -f "$key" ||
    die "cannot make the SSH key $SFTP_KEY (is openssh-client installed?)"
  chmod 0600 "$key"
  chmod 0644 "$key.pub"
  act chown "$SERVICE_USER:$SERVICE_USER" "$SFTP_KEY" "$SFTP_KEY.pub"
}

# The folder the peer ships into: klaxon-replica writes it, over SFTP only; files it creates
# take the folder's group (setgid) and sftp's umask 027, so the klaxon user can read and follow them.
install_incoming() {
  if [ -n "$ROOT" ] || ! getent passwd "$REPLICA_USER" >/dev/null; then
    # Password "*": no password login, but not locked either (a locked account is refused even a key).
    act useradd --system --user-group --home-dir "$REPLICA_HOME" --no-create-home --shell /usr/sbin/nologin --password '*' "$REPLICA_USER"
  fi
  mkdir -p "$(at "$INCOMING_DIR")" "$(dirname "$(at "$AUTHORIZED_KEYS")")"
  # sshd wants the home and .ssh owned by root or the user and writable by no one else.
  chmod 0755 "$(at "$REPLICA_HOME")" "$(dirname "$(at "$AUTHORIZED_KEYS")")"
  chmod 2750 "$(at "$INCOMING_DIR")"
  act chown root:root "$REPLICA_HOME" "$(dirname "$AUTHORIZED_KEYS")"
  act chown "$REPLICA_USER:$SERVICE_USER" "$INCOMING_DIR"
  local keys
  keys=$(at "$AUTHORIZED_KEYS")
  [ -f "$keys" ] || install -m 0644 /dev/null "$keys"
  # "restrict": the key opens SFTP (the Match block's ForceCommand) and nothing else.
  [ -z "$PEER_KEY" ] || grep -qxF "restrict $PEER_KEY" "$keys" || echo "restrict $PEER_KEY" >>"$keys"
  act chown root:root "$AUTHORIZED_KEYS"
}

install_sshd_snippet() {
  local snippet
  snippet=$(at "$SSHD_SNIPPET")
  mkdir -p "$(dirname "$snippet")"
  cat >"$snippet" <<EOF
# Klaxon (install.sh --role): the peer box's Litestream ships its journal into
# $INCOMING_DIR as $REPLICA_USER, with its key, over SFTP, and may do nothing else.
Match User $REPLICA_USER
    ForceCommand internal-sftp -u 0027
    AuthenticationMethods publickey
    PasswordAuthentication no
    AllowTcpForwarding no
    AllowAgentForwarding no
    AllowStreamLocalForwarding no
    PermitTunnel no
    PermitTTY no
    X11Forwarding no
EOF
  chmod 0644 "$snippet"
  if [ -n "$ROOT" ] || command -v sshd >/dev/null; then
    act sshd -t
    act systemctl reload ssh.service
  else
    say "sshd is not installed: install openssh-server, which reads $SSHD_SNIPPET; the peer ships over it"
  fi
}

install_role() {
  install_litestream
  install_sftp_key
  install_incoming
  install_sshd_snippet
}

# --uninstall: the peer may no longer ship here; --purge also drops what it shipped and its user.
# The Litestream binary stays: it may have been on the box before.
uninstall_role() {
  if [ -f "$(at "$SSHD_SNIPPET")" ]; then
    rm -f "$(at "$SSHD_SNIPPET")"
    act systemctl reload ssh.service
  fi
  if [ "$PURGE" = 1 ] && [ -d "$(at "$REPLICA_HOME")" ]; then
    rm -rf "$(at "$REPLICA_HOME")"
    act userdel "$REPLICA_USER"
  fi
}

# What the admin carries to the peer: this box's klaxon key and its host key.
print_role_steps() {
  local host_key
  say "role $ROLE, peer $PEER, shipping to $REPLICA; the peer ships into $INCOMING_DIR"
  say "on the peer, let this box ship (or give the peer's install.sh --peer-key '<the key>'):"
  echo "  echo 'restrict $(cat "$(at "$SFTP_KEY").pub")' | sudo tee -a $AUTHORIZED_KEYS"
  host_key=$(at /etc/ssh/ssh_host_ed25519_key.pub)
  [ ! -f "$host_key" ] || say "the peer's --peer-host-key for this box: '$(cut -d' ' -f1,2 "$host_key")'"
  say "then run the failover drill: docs/high-availability.md#failover-drill"
}
