# Sourced by run_unit.sh and run_e2e.sh: run_tests KIND TEST... runs the
# tests whose name holds $T, TEST_JOBS at a time, through run_one.sh, then
# prints PASS/FAIL per test in the order given (a failure's last 40 lines
# below it), the slowest, and "KIND: N passed, N failed".
run_tests() {
    kind=$1; shift
    logs=$(mktemp -d)
    jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
    for t in "$@"; do
        [ -f "$t" ] || continue
        case "$(basename "$t")" in *"${T:-}"*) printf '%s\n' "$t" ;; esac
    done >"$logs/list"
    xargs -P "$jobs" -I{} sh "$here/run_one.sh" "$logs" "$kind" {} <"$logs/list"
    passed=0; failed=0
    while IFS= read -r t; do
        name=$(basename "$t")
        if [ "$(cat "$logs/$name.rc" 2>/dev/null)" = 0 ]; then
            passed=$((passed + 1)); echo "PASS $name ($(cat "$logs/$name.s")s)"
        else
            failed=$((failed + 1)); echo "FAIL $name"
            sed 's/^/    /' "$logs/$name.out" | tail -n 40
        fi
    done <"$logs/list"
    rm -rf "$logs"
    echo "$kind: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
