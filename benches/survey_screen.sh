#!/usr/bin/env bash
# Issue 41's benchmark: the survey fixture's whole access log and HAR (tests/support/survey_app.rs:
# the tracker as a web app, UI pages by session cookie, REST and GraphQL by token, 404s, static
# files) surveyed twice on the same app, at -n 100 -c 4: with screening (--exact auto) and with
# every route in an exact window (--exact all). Prints the load average first, each run's time and
# routes, their ratio, and the top five by db time and by blocks of each.
# Needs what .ci/run installs (the PostgreSQL server binaries, Django, DRF, graphene-django).
# PGCOST_BENCH_PROFILE=release builds optimised (slower to build; the runs are mostly waits).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=()
[[ ${PGCOST_BENCH_PROFILE:-debug} == release ]] && profile=(--release)
cargo test "${profile[@]}" --test survey_drf -- --ignored --nocapture \
    bench_screening_against_exact_windows
