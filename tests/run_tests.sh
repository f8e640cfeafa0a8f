# Sourced by run_unit.sh and run_e2e.sh: run_tests KIND TEST... runs the
# tests whose name holds $T, TEST_JOBS at a time, through run_one.sh, then
# prints PASS/FAIL per test in the order given (wall and CPU seconds; a
# failure's last 40 lines below it) and "KIND: N passed, N failed".
#
# The slowest start first, so that the last one to finish is not a long
# one started late: the order comes from TEST_TIMES (NAME SECONDS lines,
# rewritten after each run with the times just measured) or, before the
# first run, from TEST_TIMES_SEED (the times checked in). A test with no
# time yet starts first. A test running past TEST_TIMEOUT seconds (default
# 1200) is stopped and fails, so one hung test cannot hang the whole run.
run_tests() {
    kind=$1; shift
    logs=$(mktemp -d)
    jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
    for t in "$@"; do
        [ -f "$t" ] || continue
        case "$(basename "$t")" in *"${T:-}"*) printf '%s\n' "$t" ;; esac
    done >"$logs/list"
    times=${TEST_TIMES:-}
    [ -n "$times" ] && [ -s "$times" ] || times=${TEST_TIMES_SEED:-}
    slowest_first "$times" <"$logs/list" >"$logs/order"
    # NUL-separated: xargs reads quotes and backslashes in its input as
    # its own quoting, so a tree whose path holds a ' (/tmp/it's/accubench)
    # ran no e2e test at all ("unmatched single quote").
    tr '\n' '\0' <"$logs/order" | xargs -0 -P "$jobs" -I{} sh "$here/run_one.sh" "$logs" "$kind" {}
    passed=0; failed=0
    while IFS= read -r t; do
        name=$(basename "$t")
        if [ "$(cat "$logs/$name.rc" 2>/dev/null)" = 0 ]; then
            passed=$((passed + 1))
            echo "PASS $name ($(cat "$logs/$name.s")s, CPU $(cat "$logs/$name.cpu" 2>/dev/null)s)"
        else
            failed=$((failed + 1)); echo "FAIL $name"
            sed 's/^/    /' "$logs/$name.out" | tail -n 40
        fi
    done <"$logs/list"
    [ -n "${TEST_TIMES:-}" ] && record_times "$logs" "$TEST_TIMES" <"$logs/list"
    rm -rf "$logs"
    # T matching nothing here is no failure (make test runs every pass with
    # one T), but it is said: a typo read as a green "0 passed" before
    if [ -n "${T:-}" ] && [ "$passed$failed" = 00 ]; then
        echo "$kind: 0 passed, 0 failed (no $kind test's name holds '$T')"
    else
        echo "$kind: $passed passed, $failed failed"
    fi
    [ "$failed" -eq 0 ]
}

# The paths on stdin, those with the most seconds in TIMES first (one with
# no time there first of all), ties in the order given.
slowest_first() {
    awk -v times="$1" '
        BEGIN { if (times != "") while ((getline line < times) > 0) {
                    split(line, f, " "); s[f[1]] = f[2] } }
        { name = $0; sub(/.*\//, "", name)
          printf "%012.1f %06d %s\n", (name in s) ? s[name] : 1e9, NR, $0 }
    ' | sort -k1,1nr -k2,2n | cut -d' ' -f3-
}

# TIMES with the seconds of the tests on stdin (those that passed) replaced
# by this run's, the others kept: a filtered run (T=...) updates its own.
record_times() {
    while IFS= read -r t; do
        name=$(basename "$t")
        [ "$(cat "$1/$name.rc" 2>/dev/null)" = 0 ] && echo "$name $(cat "$1/$name.s")"
    done >"$1/times.new"
    mkdir -p "$(dirname "$2")" &&
        { cat "$1/times.new"; [ -f "$2" ] && awk 'NR == FNR { new[$1] = 1; next } !($1 in new)' \
              "$1/times.new" "$2"; } | sort >"$1/times.all" &&
        mv "$1/times.all" "$2"
}
