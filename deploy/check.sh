#!/usr/bin/env bash
# Checks the deployment examples with the tools that read them:
#   rules    promtool check rules + promtool test rules (deploy/prometheus)
#   static   the static binary deploy/Dockerfile builds (deploy/build-static.sh), checked
#            static (no ELF interpreter, no shared libraries) and run: `retention version`
#   systemd  systemd-analyze verify on deploy/systemd/retention.service
# With no argument, all three (`make deploy-check`; `make static` is the second alone).
# A missing tool is installed from Debian's packages when running as root with CI=true
# (promtool from `prometheus`, whose daemon is kept from starting); otherwise it is an
# error saying what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

STATIC_BIN=${STATIC_BIN:-bin/retention-static}
apt_updated=

say() { echo "deploy-check: $*"; }
fail() { echo "deploy-check: FAIL: $*" >&2; exit 1; }

# install_debian PACKAGE: apt-get install, without recommends and without starting any
# service the package ships (policy-rc.d answering 101 is Debian's way to say "don't").
install_debian() {
  local pkg=$1 policy=/usr/sbin/policy-rc.d made_policy=
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  local status=0
  if [ -z "$apt_updated" ]; then
    apt-get update -q && apt_updated=1 || status=$?
  fi
  [ "$status" != 0 ] || apt-get install -y -q --no-install-recommends "$pkg" || status=$?
  [ -z "$made_policy" ] || rm -f "$policy"
  return "$status"
}

# need COMMAND PACKAGE: COMMAND is on PATH, installed from PACKAGE under CI as root.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ]; then
    say "installing $2 (for $1)"
    install_debian "$2" || fail "apt-get could not install $2"
    command -v "$1" >/dev/null 2>&1 && return 0
  fi
  fail "$1 is missing: install Debian's $2 package (run as root with CI=true to have it installed)"
}

check_rules() {
  need promtool prometheus
  (cd deploy/prometheus && promtool check rules retention-rules.yml && promtool test rules retention-rules_test.yml)
}

check_static() {
  say "building $STATIC_BIN (deploy/build-static.sh)"
  bash deploy/build-static.sh "$STATIC_BIN"
  if command -v readelf >/dev/null 2>&1; then
    ! readelf -lW "$STATIC_BIN" | grep -q 'INTERP' || fail "$STATIC_BIN asks for an ELF interpreter (dynamically linked)"
    ! readelf -dW "$STATIC_BIN" 2>/dev/null | grep -q 'NEEDED' || fail "$STATIC_BIN needs shared libraries"
  fi
  # ldd (libc-bin, always there) says so in words for a static binary, and exits 1.
  local ldd_out
  ldd_out=$(ldd "$STATIC_BIN" 2>&1 || true)
  case "$ldd_out" in
    *"not a dynamic executable"* | *"statically linked"*) ;;
    *) fail "$STATIC_BIN is not static: ldd says: $ldd_out" ;;
  esac
  local version
  version=$("$STATIC_BIN" version) || fail "$STATIC_BIN version exited $?"
  grep -q '^retention ' <<<"$version" && grep -q '^go: go' <<<"$version" || fail "unexpected version output: $version"
  # From a git checkout (.git a directory: Go does not stamp from a worktree's .git
  # file), the binary names the checkout's revision, and whether it had changes.
  if [ -d .git ] && rev=$(git rev-parse HEAD 2>/dev/null); then
    local want="revision: $rev"
    [ -z "$(git status --porcelain 2>/dev/null)" ] || want="$want (modified)"
    grep -qxF "$want" <<<"$version" || fail "retention version does not say \"$want\": $version"
  fi
  say "static, and runs:"
  sed 's/^/  /' <<<"$version"
}

check_systemd() {
  need systemd-analyze systemd
  [ -x "$STATIC_BIN" ] || bash deploy/build-static.sh "$STATIC_BIN"
  # ExecStart must name an existing executable: verify a copy pointing at the binary.
  local dir out
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' RETURN
  sed "s#^ExecStart=/usr/local/bin/retention #ExecStart=$(realpath "$STATIC_BIN") #" \
    deploy/systemd/retention.service >"$dir/retention.service"
  # Unknown keys and bad values are printed, but exit 0: any output fails.
  out=$(systemd-analyze verify "$dir/retention.service" 2>&1) || fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify: $out"
  say "systemd-analyze verify: clean"
}

case "${1:-all}" in
  rules) check_rules ;;
  static) check_static ;;
  systemd) check_systemd ;;
  all) check_rules; check_static; check_systemd ;;
  *) fail "usage: deploy/check.sh [rules|static|systemd|all]" ;;
esac
