#!/bin/sh
# Every command's --help (or -h), wherever it stands among the options: its
# own usage on stdout, nothing on stderr, exit 0, nothing run or written.
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
for h in --help -h; do
    expect_help "^usage: accubench run" "$ACCUBENCH" run $h
    expect_help "^usage: accubench plan" "$ACCUBENCH" plan $h
    expect_help "^usage: accubench report" "$ACCUBENCH" report $h
    expect_help "^usage: accubench compare" "$ACCUBENCH" compare $h
done
expect_help "^usage: accubench run" "$ACCUBENCH" run --profile quick --effective 8 --help
expect_help "^usage: accubench run" "$ACCUBENCH" run --help --steps 0
expect_help "^usage: accubench plan" "$ACCUBENCH" plan --effective 64 --find-max-micro --help
expect_help "^usage: accubench report" "$ACCUBENCH" report some.csv --help
expect_help "^usage: accubench compare" "$ACCUBENCH" compare a.csv b.csv --help
# the choices of every axis come from its table: the backends from the
# program's, the rest from the harness's
expect_help "^  --backend NAME  *auto|cpu|cuda$" "$ACCUBENCH" run --help
expect_help "^  --backend NAME  *auto|cpu|cuda$" "$ACCUBENCH" --help
# known AXIS: the rows the parser knows, as its error names them
known() { "$ACCUBENCH" run --"$1" no-such-row 2>&1 | sed -n "s/.*(known: \([^)]*\)).*/\1/p"; }
expect_help "^  --mode LIST  *$(known mode)$" "$ACCUBENCH" run --help
expect_help "^  --dtype NAME  *auto|fp32|tf32|bf16 (default auto: fp32 on cpu, bf16 on cuda)$" "$ACCUBENCH" run --help
expect_help "^  --model LIST  *tiny, S, M, L, XL, gpt-tiny, gpt-small, gpt-medium, gpt-large, gpt-xl; or mlp:hidden=N,layers=N,classes=N; or gpt:d=N,layers=N,heads=N,seq=N,vocab=N$" "$ACCUBENCH" run --help
expect_help "^  --optimizer NAME  *adamw|sgd$" "$ACCUBENCH" run --help
expect_help "^  --reduction LIST  *$(known reduction) (.* right; the others are known bugs)$" "$ACCUBENCH" run --help
if [ -n "$(ls | grep -v '^std')" ]; then
    echo "FAILED: --help left files: $(ls)"
    fail=1
fi
check=$(dirname "$ACCUBENCH")/gpu-check
if [ -x "$check" ]; then
    expect_help "^usage: gpu-check .*--device cpu|cuda" "$check" --help
    expect_help "^usage: gpu-check" "$check" --device cpu -h
fi
exit $fail
