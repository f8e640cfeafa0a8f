#!/bin/sh
# Every command's help (--help, -h wherever it stands, `accubench help
# COMMAND`): its own usage on stdout, nothing on stderr, exit 0, nothing run
# or written. What the help lists is compared with what the program's
# tables hold (the hidden --list-options and --list-presets, the names an
# error message gives, the profiles/ folder), never with a list written here.
set -u
fail=0
expect_help() {
    want=$1; shift
    "$@" >stdout.txt 2>stderr.txt
    rc=$?
    if [ "$rc" -ne 0 ] || [ -s stderr.txt ] || ! grep -q -- "$want" stdout.txt; then
        echo "FAILED: $* -> exit $rc, stdout: $(head -n 1 stdout.txt), stderr: $(cat stderr.txt)"
        fail=1
    fi
}
for cmd in run plan report compare; do
    for h in --help -h; do
        expect_help "^usage: accubench $cmd" "$ACCUBENCH" $cmd $h
    done
    expect_help "^usage: accubench $cmd" "$ACCUBENCH" help $cmd
done
expect_help "^usage: accubench COMMAND" "$ACCUBENCH" help
expect_help "^usage: accubench run" "$ACCUBENCH" run --profile quick --effective 8 --help
expect_help "^usage: accubench run" "$ACCUBENCH" run --help --steps 0
expect_help "^usage: accubench plan" "$ACCUBENCH" plan --effective 64 --find-max-micro --help
expect_help "^usage: accubench report" "$ACCUBENCH" report some.csv --help
expect_help "^usage: accubench compare" "$ACCUBENCH" compare a.csv b.csv --help

"$ACCUBENCH" --help >all.txt 2>&1
"$ACCUBENCH" run --help >run.txt 2>&1
"$ACCUBENCH" plan --help >plan.txt 2>&1
# The text of one option's entry: its first line and the wrapped lines under it.
entry() {
    awk -v key="--$2" '
        index($0, "  " key " ") == 1 || $0 == "  " key { on = 1; print; next }
        on && /^                        / { print; next }
        { on = 0 }' "$1" | tr -s ' \n' '  '
}

# Every option in the table, with help text, in run's help and in the whole help.
keys=$("$ACCUBENCH" --list-options run)
[ "$(echo "$keys" | wc -l)" -gt 20 ] || { echo "FAILED: --list-options run: $keys"; fail=1; }
for k in $keys; do
    for f in run.txt all.txt; do
        [ "$(entry $f "$k" | wc -w)" -ge 3 ] ||
            { echo "FAILED: --$k has no entry with help in $f"; fail=1; }
    done
done
for k in $("$ACCUBENCH" --list-options plan); do
    [ "$(entry plan.txt "$k" | wc -w)" -ge 3 ] ||
        { echo "FAILED: plan --help has no entry for --$k"; fail=1; }
done

# plan answers for one model, with no default where it needs one named
check_model=$(entry plan.txt model)
echo "$check_model" | grep -q -- "--model LIST one model: " &&
    echo "$check_model" | grep -q "(default S where --recommend measures; none elsewhere)" ||
    { echo "FAILED: plan's --model entry: $check_model"; fail=1; }
"$ACCUBENCH" plan --find-max-micro --mem-cap 1G >/dev/null 2>err.txt
grep -q "needs one --model NAME" err.txt ||
    { echo "FAILED: plan --find-max-micro without --model: $(cat err.txt)"; fail=1; }

# The names an unknown value's refusal gives (the parser's own list).
known_of() {
    "$ACCUBENCH" run --$1 no-such-value >/dev/null 2>err.txt
    sed -n 's/.*(known: \([^)]*\)).*/\1/p' err.txt | tr ',' ' '
}
# Every axis of run (each key --list-values answers, so no list of axes
# here): its entry and its refusal of an unknown value name every row of
# its table.
axes=0
for k in $keys; do
    values=$("$ACCUBENCH" --list-values "$k" 2>/dev/null) || continue
    axes=$((axes + 1))
    known=$(known_of "$k")
    [ -n "$values" ] && [ "$(echo $known)" = "$(echo $values)" ] ||
        { echo "FAILED: --$k no-such-value names '$known'; its table: '$(echo $values)'"; fail=1; }
    for v in $values; do
        entry run.txt "$k" | grep -q -- "$v" ||
            { echo "FAILED: --$k's help lacks '$v': $(entry run.txt "$k")"; fail=1; }
    done
done
[ "$axes" -ge 7 ] || { echo "FAILED: --list-values answered for $axes keys of run"; fail=1; }
"$ACCUBENCH" --list-values lr >/dev/null 2>&1 && { echo "FAILED: --list-values lr answered"; fail=1; }
# The options that take one row of a table: their entry names every value
# the parser knows.
for axis in optimizer optimizer-at; do
    known=$(known_of "$axis")
    [ -n "$known" ] || { echo "FAILED: --$axis no-such-value does not list the names"; fail=1; }
    for name in $known; do
        entry run.txt "$axis" | grep -q -- "$name" ||
            { echo "FAILED: --$axis's help lacks '$name': $(entry run.txt "$axis")"; fail=1; }
    done
done

# Every model preset, in --model's entry and in the presets list.
presets=$("$ACCUBENCH" --list-presets)
[ -n "$presets" ] || { echo "FAILED: --list-presets printed nothing"; fail=1; }
for p in $presets; do
    entry run.txt model | grep -q -- " $p[,;]" ||
        { echo "FAILED: --model's help lacks the preset $p"; fail=1; }
    grep -q "^  $p  *[a-z]*:" all.txt || { echo "FAILED: --help lists no preset $p"; fail=1; }
done

# Every backend of the table (listed below the options) in --backend's entry.
for b in $(sed -n '/^backends/,/^$/s/^  \([a-z0-9]*\) .*/\1/p' run.txt); do
    entry run.txt backend | grep -q "[ |]$b[|:]" ||
        { echo "FAILED: --backend's help lacks $b: $(entry run.txt backend)"; fail=1; }
done

# Every profile in profiles/ with the first line of its comment.
for f in "$ACCUBENCH_ROOT"/profiles/*.profile; do
    name=$(basename "$f" .profile)
    first=$(grep -m 1 '^#' "$f" | sed 's/^# *//')
    grep -qF "  $name" all.txt && grep -qF -- "$first" all.txt ||
        { echo "FAILED: --help does not list the profile $name with '$first'"; fail=1; }
done

if [ -n "$(ls | grep -v '^std\|\.txt$')" ]; then
    echo "FAILED: --help left files: $(ls)"
    fail=1
fi
check=$(dirname "$ACCUBENCH")/gpu-check
if [ -x "$check" ]; then
    expect_help "^usage: gpu-check .*--device $(sed -n '/^backends/,/^$/s/^  \([a-z0-9]*\) .*/\1/p' run.txt | paste -sd'|')" "$check" --help
    expect_help "^usage: gpu-check" "$check" --device cpu -h
fi
exit $fail
