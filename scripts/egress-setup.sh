#!/usr/bin/env bash
# guardian-proxy system-wide egress filter: redirect outgoing HTTP(S) of this machine's users to a
# guardian-proxy running in transparent mode (`guardian-proxy run --mode transparent`).
#
#   sudo scripts/egress-setup.sh install --proxy-user guardian-proxy [--user alice ...] [--port 8080]
#   sudo scripts/egress-setup.sh remove
#   sudo scripts/egress-setup.sh status
#
# No loops: the proxy's own connections (its user, --proxy-user) are never redirected, nor is traffic to
# loopback addresses. Without --user every other user's TCP to --ports is redirected; with --user only those
# users' (e.g. the account an AI agent runs as). QUIC (UDP 443) from the redirected users is dropped so
# browsers fall back to TCP, which the proxy sees (--allow-quic keeps it). Root's traffic is redirected too
# unless the proxy runs as root or --exclude-user root is given.
#
# Back end: nftables (`nft`) when present, else iptables/ip6tables (--backend to choose). Everything lives
# in one table (nft: inet guardian_proxy) or in GUARDIAN_* chains (iptables), so `remove` takes it all away.
# --dry-run prints the rules instead of installing them.
set -euo pipefail

ACTION="${1:-}"
[ $# -gt 0 ] && shift
PROXY_USER=""
USERS=()
EXCLUDE=()
PORT=8080
PORTS="80,443"
BACKEND=""
QUIC=drop
DRY=0
TABLE=guardian_proxy

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "egress-setup: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --proxy-user) PROXY_USER="$2"; shift 2 ;;
    --user) USERS+=("$2"); shift 2 ;;
    --exclude-user) EXCLUDE+=("$2"); shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --ports) PORTS="$2"; shift 2 ;;
    --backend) BACKEND="$2"; shift 2 ;;
    --allow-quic) QUIC=keep; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) usage 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

uid_of() {  # a user name or a numeric uid → uid
  if [[ "$1" =~ ^[0-9]+$ ]]; then echo "$1"; else id -u "$1" 2>/dev/null || die "no such user: $1"; fi
}

if [ -z "$BACKEND" ]; then
  if command -v nft >/dev/null 2>&1; then BACKEND=nft
  elif command -v iptables >/dev/null 2>&1; then BACKEND=iptables
  else die "neither nft nor iptables found (apt-get install nftables)"; fi
fi
[[ "$PORT" =~ ^[0-9]+$ ]] || die "--port must be a number"
[[ "$PORTS" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--ports must look like 80,443"

run() {  # run (or print) one command
  if [ "$DRY" = 1 ]; then printf '%q ' "$@"; echo; else "$@"; fi
}

# ------------------------------------------------------------------ nftables

nft_rules() {
  local proxy_uid="$1" who="" u
  if [ ${#USERS[@]} -gt 0 ]; then
    local uids=()
    for u in "${USERS[@]}"; do uids+=("$(uid_of "$u")"); done
    who="meta skuid { $(IFS=,; echo "${uids[*]}") } "
  fi
  local skip="meta skuid $proxy_uid return"
  cat <<EOF
table inet $TABLE {
  chain redirect_out {
    type nat hook output priority -100; policy accept;
    $skip
EOF
  for u in "${EXCLUDE[@]}"; do echo "    meta skuid $(uid_of "$u") return"; done
  cat <<EOF
    ip daddr 127.0.0.0/8 return
    ip6 daddr ::1 return
    ${who}meta l4proto tcp th dport { $PORTS } redirect to :$PORT
  }
EOF
  if [ "$QUIC" = drop ]; then
    cat <<EOF
  chain quic_out {
    type filter hook output priority 0; policy accept;
    $skip
EOF
    for u in "${EXCLUDE[@]}"; do echo "    meta skuid $(uid_of "$u") return"; done
    cat <<EOF
    ${who}udp dport 443 drop
  }
EOF
  fi
  echo "}"
}

nft_install() {
  local rules
  rules="$(nft_rules "$1")"
  if [ "$DRY" = 1 ]; then echo "$rules"; return; fi
  nft list table inet "$TABLE" >/dev/null 2>&1 && nft delete table inet "$TABLE"
  echo "$rules" | nft -f -
}

nft_remove() {
  if nft list table inet "$TABLE" >/dev/null 2>&1; then run nft delete table inet "$TABLE"; fi
}

nft_status() { nft list table inet "$TABLE" 2>/dev/null || { echo "not installed"; return 3; }; }

# ------------------------------------------------------------------ iptables

ipt_each() {  # ipt_each FUNCTION ARGS…: FUNCTION iptables ARGS…, then ip6tables when present
  local fn="$1" t
  shift
  for t in iptables ip6tables; do
    command -v "$t" >/dev/null 2>&1 || continue
    "$fn" "$t" "$@"
  done
}

ipt_install_one() {
  local ipt="$1" proxy_uid="$2" u lo="127.0.0.0/8"
  [ "$ipt" = ip6tables ] && lo="::1/128"
  ipt_remove_one "$ipt"
  run "$ipt" -t nat -N GUARDIAN_OUT
  run "$ipt" -t nat -A GUARDIAN_OUT -m owner --uid-owner "$proxy_uid" -j RETURN
  for u in "${EXCLUDE[@]}"; do run "$ipt" -t nat -A GUARDIAN_OUT -m owner --uid-owner "$(uid_of "$u")" -j RETURN; done
  run "$ipt" -t nat -A GUARDIAN_OUT -d "$lo" -j RETURN
  if [ ${#USERS[@]} -gt 0 ]; then
    for u in "${USERS[@]}"; do
      run "$ipt" -t nat -A GUARDIAN_OUT -p tcp -m multiport --dports "$PORTS" -m owner --uid-owner "$(uid_of "$u")" \
        -j REDIRECT --to-ports "$PORT"
    done
  else
    run "$ipt" -t nat -A GUARDIAN_OUT -p tcp -m multiport --dports "$PORTS" -j REDIRECT --to-ports "$PORT"
  fi
  run "$ipt" -t nat -A OUTPUT -p tcp -j GUARDIAN_OUT
  if [ "$QUIC" = drop ]; then
    run "$ipt" -N GUARDIAN_QUIC
    run "$ipt" -A GUARDIAN_QUIC -m owner --uid-owner "$proxy_uid" -j RETURN
    for u in "${EXCLUDE[@]}"; do run "$ipt" -A GUARDIAN_QUIC -m owner --uid-owner "$(uid_of "$u")" -j RETURN; done
    if [ ${#USERS[@]} -gt 0 ]; then
      for u in "${USERS[@]}"; do
        run "$ipt" -A GUARDIAN_QUIC -p udp --dport 443 -m owner --uid-owner "$(uid_of "$u")" -j DROP
      done
    else
      run "$ipt" -A GUARDIAN_QUIC -p udp --dport 443 -j DROP
    fi
    run "$ipt" -A OUTPUT -p udp -j GUARDIAN_QUIC
  fi
}

ipt_remove_one() {
  local ipt="$1"
  if "$ipt" -t nat -S GUARDIAN_OUT >/dev/null 2>&1; then
    while "$ipt" -t nat -C OUTPUT -p tcp -j GUARDIAN_OUT 2>/dev/null; do run "$ipt" -t nat -D OUTPUT -p tcp -j GUARDIAN_OUT; done
    run "$ipt" -t nat -F GUARDIAN_OUT
    run "$ipt" -t nat -X GUARDIAN_OUT
  fi
  if "$ipt" -S GUARDIAN_QUIC >/dev/null 2>&1; then
    while "$ipt" -C OUTPUT -p udp -j GUARDIAN_QUIC 2>/dev/null; do run "$ipt" -D OUTPUT -p udp -j GUARDIAN_QUIC; done
    run "$ipt" -F GUARDIAN_QUIC
    run "$ipt" -X GUARDIAN_QUIC
  fi
}

ipt_status() {
  if ! iptables -t nat -S GUARDIAN_OUT 2>/dev/null; then echo "not installed"; return 3; fi
  iptables -S GUARDIAN_QUIC 2>/dev/null || true
}

# ------------------------------------------------------------------ main

[ "$DRY" = 1 ] || [ "$(id -u)" = 0 ] || [ "$ACTION" = status ] || die "run as root (sudo)"
case "$ACTION" in
  install)
    [ -n "$PROXY_USER" ] || die "--proxy-user is required: the user guardian-proxy runs as (its traffic is never redirected)"
    proxy_uid="$(uid_of "$PROXY_USER")"
    if [ "$BACKEND" = nft ]; then nft_install "$proxy_uid"; else ipt_each ipt_install_one "$proxy_uid"; fi
    [ "$DRY" = 1 ] || echo "egress-setup: TCP ports $PORTS → 127.0.0.1:$PORT for ${USERS[*]:-every user but $PROXY_USER} ($BACKEND)"
    ;;
  remove)
    if [ "$BACKEND" = nft ]; then nft_remove; else ipt_each ipt_remove_one; fi
    [ "$DRY" = 1 ] || echo "egress-setup: rules removed ($BACKEND)"
    ;;
  status)
    if [ "$BACKEND" = nft ]; then nft_status; else ipt_status; fi
    ;;
  -h|--help|help|"") usage 0 ;;
  *) die "unknown action $ACTION (install | remove | status)" ;;
esac
