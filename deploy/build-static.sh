#!/usr/bin/env bash
# Builds the static retention binary: the one deploy/Dockerfile ships and `make static`
# checks. The flags live here only, so both build the same thing:
#   CGO_ENABLED=0     pure Go (SQLite through modernc.org/sqlite), no libc to link
#   -tags timetzdata  the time zone database inside the binary (timestamp_zone works on
#                     an image with no /usr/share/zoneinfo)
#   -trimpath         no build machine paths in the binary
#   -buildvcs=auto    the revision goes in when built from a git checkout (retention version)
#   -ldflags '-s -w'  no symbol table or DWARF: a smaller image
# Usage: deploy/build-static.sh OUTPUT
set -euo pipefail
out=${1:?usage: deploy/build-static.sh OUTPUT}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$(dirname "$0")/.."
CGO_ENABLED=0 exec go build -trimpath -buildvcs=auto -tags timetzdata -ldflags='-s -w' -o "$out" ./cmd/node
