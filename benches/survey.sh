#!/usr/bin/env bash
# Survey time bound (issue #24): how long `pgcost survey` takes for R = 1, 2, 3 routes of the
# demo API, against what its parts cost when each route is audited alone: R x (warm-up +
# burst) + (R + 1) settle waits is the bound, R x (warm-up + burst) + 2 waits the floor.
# Needs only the PostgreSQL server binaries (the demo starts its own cluster).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${PGCOST_BENCH_N:-200}"
cargo build --release -q
BIN="$PWD/target/release/pgcost"
WORK="$(mktemp -d)"
cleanup() {
    [ -n "${DEMO:-}" ] && kill -INT "$DEMO" 2>/dev/null && wait "$DEMO" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
"$BIN" demo --serve >"$WORK/serve.out" 2>&1 &
DEMO=$!
for _ in $(seq 120); do
    grep -q '^token' "$WORK/serve.out" && break
    sleep 1
done
DB="$(awk '$1 == "database" {print $2}' "$WORK/serve.out")"
TOKEN="$(awk '$1 == "token" {print $2}' "$WORK/serve.out")"
BASE="$(awk '$1 == "api" {print $3; exit}' "$WORK/serve.out" | sed -E 's#(https?://[^/]+)/.*#\1#')"
[ -n "$DB" ] && [ -n "$TOKEN" ] && [ -n "$BASE" ] || { cat "$WORK/serve.out"; exit 1; }
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "demo API $BASE, database $DB, -n $N per route"

# One route's lines: three at limit=20, one at limit=10 (one template, two URLs).
lines() {
    for limit in 20 20 20 10; do
        printf '127.0.0.1 - - [03/Dec/2026:10:00:00 +0000] "GET /%s/api/v1/projects?limit=%s HTTP/1.1" 200 99 "-" "bench"\n' "$1" "$limit"
    done
}
PIPELINES=(naive exists cached)
AUTH=(-H "Authorization: Bearer $TOKEN")
# Each route audited alone: its warm-up, burst and settle waits.
for p in "${PIPELINES[@]}"; do
    "$BIN" audit --url "$BASE/$p/api/v1/projects?limit=20" --db "$DB" "${AUTH[@]}" \
        -n "$N" --format json -q >"$WORK/audit-$p.json" || true
done
for r in 1 2 3; do
    : >"$WORK/access-$r.log"
    for p in "${PIPELINES[@]:0:$r}"; do lines "$p" >>"$WORK/access-$r.log"; done
    start=$(date +%s.%N)
    "$BIN" survey --access-log "$WORK/access-$r.log" --base-url "$BASE" --db "$DB" "${AUTH[@]}" \
        -n "$N" --format json -q >"$WORK/survey-$r.json" || true
    end=$(date +%s.%N)
    echo "$r $start $end" >>"$WORK/times"
done
python3 - "$WORK" <<'EOF'
import json, sys
work = sys.argv[1]
pipes = ["naive", "exists", "cached"]
parts = {}
for p in pipes:
    a = json.load(open(f"{work}/audit-{p}.json"))
    warm = (a["load"].get("warmup_done") or {}).get("seconds", 0.0)
    settle = a["settle"]
    parts[p] = (warm + a["load"]["wall_seconds"], settle["before_seconds"], settle["after_seconds"])
waits = [w for p in pipes for w in parts[p][1:]]
wait = sum(waits) / len(waits)
print(f"settle wait alone: mean {wait:.2f} s over {len(waits)} waits (min {min(waits):.2f}, max {max(waits):.2f})")
for p in pipes:
    print(f"  {p:7} warm-up + burst {parts[p][0]:.2f} s")
print(" R  survey s  R*(warm+burst) s  floor (+2 waits) s  bound (+(R+1) waits) s  survey/floor")
for line in open(f"{work}/times"):
    r, start, end = line.split()
    r = int(r)
    took = float(end) - float(start)
    work_s = sum(parts[p][0] for p in pipes[:r])
    floor, bound = work_s + 2 * wait, work_s + (r + 1) * wait
    doc = json.load(open(f"{work}/survey-{r}.json"))
    valid = sum(1 for x in doc["routes"] if x["valid"])
    print(f"{r:2}  {took:8.1f}  {work_s:16.1f}  {floor:18.1f}  {bound:22.1f}  {took / floor:11.2f}   ({valid}/{r} routes valid)")
EOF
