#!/usr/bin/env bash
# Runs every Go benchmark of the module and the drain benchmark (bench/drain, which needs
# PostgreSQL and pgbench; without them its PostgreSQL part is reported as not run), the
# pacing, cluster, pt-archiver and partitioned-table benchmarks (each reported as not run
# without what it needs), and writes the results into docs/benchmarks.md after its fixed introduction.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
drain=$(mktemp)
pacing=$(mktemp)
heap=$(mktemp)
cluster=$(mktemp)
ptarchiver=$(mktemp)
partitions=$(mktemp)
trap 'rm -f "$out" "$drain" "$pacing" "$heap" "$cluster" "$ptarchiver" "$partitions"' EXIT
gocmd="go test -run '^\$' -bench . -benchmem -count ${BENCH_COUNT:-3} ./..."
eval "$gocmd" | tee "$out"
drain_args="-rows ${BENCH_ROWS:-1000000} -reps ${BENCH_REPS:-3}"
if [ -n "${BENCH_DRAIN_REPORT:-}" ]; then
  cp "$BENCH_DRAIN_REPORT" "$drain" # a report bench/drain wrote earlier
else
  go run ./bench/drain $drain_args -out "$drain"
fi
# Memory flat in the backlog: the peak heap of draining tables of these sizes (the
# largest takes a few minutes to build and about 150 MB of disk per million rows).
if [ -n "${BENCH_HEAP_REPORT:-}" ]; then
  cp "$BENCH_HEAP_REPORT" "$heap" # a report bench/drain -heap-rows wrote earlier
else
  go run ./bench/drain -heap-rows "${BENCH_HEAP_ROWS:-100000,10000000}" -reps "${BENCH_HEAP_REPS:-2}" -out "$heap"
fi
# The pacing benchmark (bench/pacing) makes clusters of its own: it needs root,
# PostgreSQL's server packages and pgbench; BENCH_PACING_ARGS are its flags (its run time
# is about 32 minutes at the defaults; -pairs and -window shorten it).
if [ -n "${BENCH_PACING_REPORT:-}" ]; then
  cp "$BENCH_PACING_REPORT" "$pacing" # a report bench/pacing wrote earlier
elif [ "$(id -u)" = 0 ] && command -v pg_createcluster >/dev/null && command -v pgbench >/dev/null; then
  go run ./bench/pacing ${BENCH_PACING_ARGS:-} -out "$pacing"
else
  printf '## Pacing (`bench/pacing`)\n\nNot run: it needs root, pg_createcluster and pgbench.\n' > "$pacing"
fi
# Cluster mode (bench/cluster): etcd from Debian's etcd-server and PostgreSQL; without
# them the section says it was not run.
if [ -n "${BENCH_CLUSTER_REPORT:-}" ]; then
  cp "$BENCH_CLUSTER_REPORT" "$cluster" # a report bench/cluster wrote earlier
elif ! go run ./bench/cluster -reps "${BENCH_CLUSTER_REPS:-5}" -out "$cluster"; then
  printf '## Cluster mode (`bench/cluster`)\n\nNot run: it needs etcd (Debian'"'"'s etcd-server) and PostgreSQL.\n' > "$cluster"
fi
# MariaDB beside pt-archiver (bench/ptarchiver): a MySQL/MariaDB server (BENCH_MYSQL_DSN,
# default retention_test@tcp(127.0.0.1:3306)/, a user that may create rt_mysql_* databases)
# and Debian's percona-toolkit; BENCH_PTARCHIVER_ARGS are its flags. The default bounds
# every purge to 40 s (about 27 minutes in all on two cores); with an empty value each
# variant drains the whole backlog, which at the rates measured here takes hours.
if [ -n "${BENCH_PTARCHIVER_REPORT:-}" ]; then
  cp "$BENCH_PTARCHIVER_REPORT" "$ptarchiver" # a report bench/ptarchiver wrote earlier
elif ! go run ./bench/ptarchiver ${BENCH_PTARCHIVER_ARGS--bound 40s -window 40s -idle 5s} -out "$ptarchiver"; then
  printf '## MariaDB: a table pass beside pt-archiver\n\nNot run (its error is in the output of make bench): it needs a MySQL or MariaDB server (BENCH_MYSQL_DSN) and pt-archiver (percona-toolkit).\n' > "$ptarchiver"
fi
# Partitioned tables (bench/partitions): a PostgreSQL database the benchmark may create
# tables in (BENCH_PG_DSN, else TEST_DATABASE_URL) with pg_partman installable for its
# pg_partman rows; BENCH_PARTITIONS_ARGS are its flags. At the default sizes (30 daily
# partitions of 100,000 rows and 10 of 1,000,000) the row path's runs take most of its time:
# the default stops each after 120 s and estimates the rest from its rate (about 16 minutes
# in all on two cores); with an empty value it runs to the end, which at 30 partitions took
# about 1,600 s a cutoff here.
if [ -n "${BENCH_PARTITIONS_REPORT:-}" ]; then
  cp "$BENCH_PARTITIONS_REPORT" "$partitions" # a report bench/partitions wrote earlier
elif [ -z "${BENCH_PG_DSN:-${TEST_DATABASE_URL:-}}" ] || ! go run ./bench/partitions ${BENCH_PARTITIONS_ARGS--row-bound 120s} -out "$partitions"; then
  printf '## Partitioned tables (`bench/partitions`)\n\nNot run (its error, if any, is in the output of make bench): it needs a PostgreSQL database in BENCH_PG_DSN or TEST_DATABASE_URL.\n' > "$partitions"
fi
{
  cat bench/benchmarks-intro.md
  echo
  echo "## Results"
  echo
  echo "Run on $(date -u +%Y-%m-%d) with $(go version | cut -d' ' -f3), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //' || echo unknown cpu))."
  echo
  echo "### Go benchmarks"
  echo
  echo "Produced by \`$gocmd\`."
  echo
  echo '```'
  grep -E '^(Benchmark|pkg:)' "$out"
  echo '```'
  echo
  sed 's/^## /### /; s/^### \(PostgreSQL\|SQLite\|The metadata\)/#### \1/' "$drain"
  echo
  sed 's/^### /#### /; s/^## /### /' "$heap"
  echo
  sed 's/^### /#### /; s/^## /### /' "$pacing"
  echo
  sed 's/^### /#### /; s/^## /### /' "$cluster"
  echo
  sed 's/^### /#### /; s/^## /### /' "$ptarchiver"
  echo
  sed 's/^### /#### /; s/^## /### /' "$partitions"
} > docs/benchmarks.md
echo "wrote docs/benchmarks.md"
