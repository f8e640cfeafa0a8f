#!/bin/sh
# gemm-bench: one line per shape with its median, p10 and rate; bad input
# refused with one line and exit 2. peer_gemm.py: the shapes read from a
# run CSV's gemm_shapes (single products only), and its own bad input;
# with PyTorch, its table. No timing is judged.
set -u
bench=$(dirname "${ACCUBENCH:?}")/gemm-bench
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$bench" ] || fail "$bench not built"

out=$("$bench" --reps 3 130x67x33 64x300x20:TN 1x1x1:TT) || fail "exit $? on good shapes: $out"
echo "$out"
echo "$out" | head -1 | grep -q "^# " || fail "no BLAS line first"
[ "$(echo "$out" | grep -c "median")" -eq 3 ] || fail "want 3 shape lines"
for want in "130x67x33 NN" "64x300x20 TN" "1x1x1 TT"; do
    echo "$out" | grep -Eq "^$want  median [0-9.]+ ms  p10 [0-9.]+ ms  [0-9.]+ GFLOP/s$" ||
        fail "no line for $want"
done
for bad in "12x3" "1x1x1:NX" "0x4x4" "4x4x4x" "--reps 0 4x4x4" ""; do
    # shellcheck disable=SC2086
    "$bench" $bad >/dev/null 2>err.txt; rc=$?
    [ "$rc" -eq 2 ] || fail "'$bad': exit $rc, want 2"
    [ "$(head -1 err.txt | grep -c '^gemm-bench: ')" -eq 1 ] || fail "'$bad': $(cat err.txt)"
done
# A shape over the host's memory (A, B and C of 65536^3, the largest the
# sides allow: 48 GiB) is refused at once with one line, instead of filling
# memory page by page; a host of 48 GiB or more would run it: skipped there.
[ "$(awk '/^MemTotal:/ { print ($2 < 48 * 1024 * 1024) }' /proc/meminfo)" = 1 ] && {
    timeout 20 "$bench" 65536x65536x65536 >out.txt 2>err.txt; rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "over the host's" err.txt &&
        [ ! -s out.txt ] || fail "65536x65536x65536: exit $rc, $(cat err.txt)"
}
echo "ok: gemm-bench's lines and its refusals"

peer="${ACCUBENCH_ROOT:?}/bench/peers/peer_gemm.py"
cat > run.csv <<'CSV'
# device: test cpu
backend,model,micro_batch,gemm_shapes,note
cpu,"gpt:d=128,layers=4",16,128x512x1024 NT: 4/step 4.76 ms 54.3%; 64x64x32 x64 NN: 8/step 1.2 ms 20%; 2048x128x128 TN: 8/step 4.17 ms 61.9%; 7 more,
cpu,S,8,,
CSV
python3 - "$peer" <<'PY' || fail "peer_gemm's CSV shapes"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("peer_gemm", sys.argv[1])
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
got = g.shapes_of_csv("run.csv", 0)
assert got == [(128, 512, 1024, "NT"), (2048, 128, 128, "TN")], got
assert g.parse_shape("3x4x5") == (3, 4, 5, "NN")
for bad in ("3x4", "3x4x5:NQ", "x4x5"):
    try:
        g.parse_shape(bad)
        raise SystemExit(f"{bad} accepted")
    except g.ShapeError:
        pass
for row in (1, 5):
    try:
        g.shapes_of_csv("run.csv", row)
        raise SystemExit(f"row {row} accepted")
    except g.ShapeError as e:
        print(e)
PY
python3 "$peer" --gemm-bench "$bench" >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] && grep -q "^peer_gemm: give the shapes" err.txt || fail "no shapes: exit $rc $(cat err.txt)"
python3 "$peer" --gemm-bench "$bench" --csv run.csv --row 1 >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] && grep -q "row 1 has no gemm_shapes" err.txt || fail "empty row: exit $rc $(cat err.txt)"
echo "ok: peer_gemm's shapes and refusals"

if python3 -c "import torch" 2>/dev/null; then
    out=$(python3 "$peer" --gemm-bench "$bench" --shapes 64x64x64,32x96x16:TN --reps 3 --rounds 2) ||
        fail "peer_gemm: exit $?: $out"
    echo "$out"
    echo "$out" | grep -Eq "^\| 32x96x16 TN \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \|$" || fail "no row"
    echo "$out" | grep -Eq "^\| all 2 \| " || fail "no total"
    echo "ok: peer_gemm's table"
else
    echo "skip: peer_gemm's table needs PyTorch"
fi
