#!/usr/bin/env bash
# Load-driver benchmark: pgcost against wrk and oha on the same loopback server.
# Installs wrk and nginx (Debian) and builds oha into a cache directory outside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${PGCOST_BENCH_CACHE:-$HOME/.cache/pgcost-bench}"
if ! command -v wrk >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk
fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    # The static 204 target of the driver comparison: one worker, outside pgcost's process.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light
fi
# The targets alone (PGCOST_BENCH_TARGETS_ONLY=1) are judged against wrk: oha is used when it
# was built before, and not built for them.
if [ ! -x "$CACHE/oha/bin/oha" ] && [ -z "${PGCOST_BENCH_TARGETS_ONLY:-}" ]; then
    cargo install oha --version 1.16.0 --locked --root "$CACHE/oha"
fi
if [ -x "$CACHE/oha/bin/oha" ]; then
    export OHA="$CACHE/oha/bin/oha"
fi
cargo bench --bench compare
