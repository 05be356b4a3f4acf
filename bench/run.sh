#!/usr/bin/env bash
# Runs every benchmark of the module and writes the results into docs/benchmarks.md,
# after the page's fixed introduction (bench/benchmarks-intro.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
go test -run '^$' -bench . -benchmem -count "${BENCH_COUNT:-3}" ./... | tee "$out"
{
  cat bench/benchmarks-intro.md
  echo
  echo "## Results"
  echo
  echo "Run on $(date -u +%Y-%m-%d) with $(go version | cut -d' ' -f3), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //' || echo unknown cpu))."
  echo
  echo '```'
  grep -E '^(Benchmark|pkg:)' "$out"
  echo '```'
} > docs/benchmarks.md
rm -f "$out"
echo "wrote docs/benchmarks.md"
