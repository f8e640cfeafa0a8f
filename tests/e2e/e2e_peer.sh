#!/bin/sh
# The PyTorch peer (bench/peers/torch_accum.py): --verify against window
# dumps (tests/peers/test_peer_verify.py), its peak GEMM probe's sizing
# (tests/peers/test_peer_timing.py), rows joined into accubench's own CSV
# on a ragged split (its rows and header kept, the peer's rows in the same
# schema, the same data semantics: the sum reduction matches the full
# batch, mean-of-means does not), the report's ratio per split, the chart,
# compare reading the joined file, a CSV of the peer alone, and bad input.
# Skipped with a message where PyTorch does not import.
set -u
root=${ACCUBENCH_ROOT:?}
py=${PYTHON:-python3}
if ! "$py" -c "import torch" >/dev/null 2>&1; then
    echo "SKIP e2e_peer: PyTorch is not installed for $py (pip install torch)"
    exit 0
fi
peer="$root/bench/peers/torch_accum.py"
fail() { echo "FAIL: $*"; exit 1; }
col() { # col FILE NAME: the values of column NAME, one per row
    awk -F, -v name="$2" '/^#/ || !NF { next } !h { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } { print $c }' "$1"
}

"$py" "$root/tests/peers/test_peer_verify.py" 2>&1 | tail -n 3 | grep -q '^OK' ||
    fail "tests/peers/test_peer_verify.py: $("$py" "$root/tests/peers/test_peer_verify.py" 2>&1 | tail -n 20)"
"$py" "$root/tests/peers/test_peer_timing.py" >timing.out 2>&1
tail -n 1 timing.out | grep -q '^OK' || fail "tests/peers/test_peer_timing.py: $(tail -n 20 timing.out)"

# accubench's own dumps (an MLP and the linear classifier on a ragged split,
# a GPT) checked by PyTorch; one gradient nudged by 1e-4 is a mismatch.
for model in "tiny --effective 10 --micro 3" "linear:in=6,classes=4 --effective 10 --micro 3" \
        "gpt-tiny --effective 6 --micro 4"; do
    rm -rf dump
    "$ACCUBENCH" run --backend cpu --model $model --steps 1 --warmup 0 --no-cupti --quiet \
        --csv dump.csv --replace --dump dump >/dev/null 2>&1 || fail "accubench --dump ($model)"
    "$py" "$peer" --verify dump >verify.out 2>&1 || fail "verify ($model): $(cat verify.out)"
    grep -q '^verify: PASS' verify.out || fail "verify ($model) says: $(cat verify.out)"
    [ "$(grep -c '^ok ' verify.out)" -eq "$(grep -c '"role": "grad"' dump/manifest.json)" ] ||
        fail "not one ok line per gradient ($model): $(cat verify.out)"
done
"$py" -c "import numpy as np; f='dump/grad.transformer.h.1.mlp.c_fc.weight.npy'; np.save(f, np.load(f) * np.float32(1.0001))"
"$py" "$peer" --verify dump >verify.out 2>&1
[ $? -eq 1 ] || fail "a nudged gradient passed: $(cat verify.out)"
grep -q '^MISMATCH transformer.h.1.mlp.c_fc.weight ' verify.out || fail "the mismatch is not named: $(cat verify.out)"

split="--model tiny --effective 10 --micro 3,10 --budget-s 0.2"
"$ACCUBENCH" run --backend cpu $split --reduction sum,mean-of-means --csv run.csv --quiet \
    --no-cupti >/dev/null 2>&1 || fail "accubench run"
head_before=$(grep -v '^#' run.csv | head -n 1)
rows_before=$(grep -v '^#' run.csv | tail -n +2)
"$py" "$peer" --device cpu $split --reduction sum,mean-of-means --mode eager,eager-fused \
    --warmup 1 --csv run.csv --quiet >peer.out 2>&1 || fail "peer run: $(cat peer.out)"
grep -qE 'rows? written to run.csv' peer.out || fail "peer says nothing of its rows: $(cat peer.out)"

[ "$(grep -v '^#' run.csv | head -n 1)" = "$head_before" ] || fail "the header changed"
[ "$(grep -v '^#' run.csv | tail -n +2 | head -n 4)" = "$rows_before" ] ||
    fail "accubench's rows changed"
awk '/^#/ { if (h) bad = 1; next } { h = 1 } END { exit bad }' run.csv ||
    fail "a metadata line after the header (the reader ignores those)"
grep -q '^# backend: cpu$' run.csv || fail "accubench's backend line lost"
grep -q '^# peers: torch$' run.csv || fail "no peers line"
grep -q '^# torch_version: ' run.csv || fail "no torch version"
grep -q '^# torch_library: .*threads' run.csv || fail "no torch BLAS / threads line"
[ "$(col run.csv backend | grep -c '^torch$')" -eq 8 ] || fail "not 8 torch rows"

# per torch row: backend,mode,reduction,micro,accum,last,status,step,dispatches,kernels,err
col_list="backend mode reduction micro_batch accum_steps last_micro_batch status step_ms_median dispatches_per_step kernels_per_step grad_rel_err"
awk -F, -v want="$col_list" '
    /^#/ || !NF { next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    $c["backend"] != "torch" { next }
    {
        if ($c["status"] != "ok" || $c["step_ms_median"] == "") { print "not measured: " $0; bad = 1 }
        if ($c["dispatches_per_step"] != "" || $c["kernels_per_step"] != "") { print "invented: " $0; bad = 1 }
        # One process, as accubench writes it: one device, no all-reduce.
        if ($c["devices"] != 1 || $c["sync"] != "") { print "devices/sync: " $0; bad = 1 }
        if ($c["micro_batch"] == 3 && ($c["accum_steps"] != 4 || $c["last_micro_batch"] != 1)) { print "split: " $0; bad = 1 }
        e = $c["grad_rel_err"] + 0
        if ($c["reduction"] == "sum" && !(e < 1e-5)) { print "sum err: " $0; bad = 1 }
        if ($c["reduction"] == "mean-of-means" && $c["micro_batch"] == 3 && !(e > 1e-3)) { print "mean-of-means err: " $0; bad = 1 }
    }
    END { exit bad }' run.csv || fail "torch rows wrong"

"$ACCUBENCH" report run.csv --no-charts >/dev/null || fail "report of the joined CSV"
grep -q '^## Against torch' run.md || fail "no Against torch section"
grep -Eq '^\| K=4: 3\+3\+3\+1 +\| +[0-9.]+ +\| +[0-9.]+ +\| +[0-9.]+x \[[0-9.]+\.\.[0-9.]+\] +\| +[0-9.]+ +\| +[0-9.]+x \[[0-9.]+\.\.[0-9.]+\] +\|' run.md ||
    fail "no ratio row for K=4: 3+3+3+1: $(sed -n '/## Against/,/## The fastest/p' run.md)"
"$ACCUBENCH" compare run.csv run.csv >/dev/null || fail "compare of the joined CSV"
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "csv='run.csv'" "$root/plots/peers.gp" 2>chart.err || fail "peers.gp: $(cat chart.err)"
    [ -s run.peers.png ] && [ -s run.peers.svg ] || fail "no peers chart"
fi

# The peer alone: a CSV of its own that the report reads.
"$py" "$peer" --device cpu --model tiny --effective 4 --micro 2 --mode eager --budget-s 0.1 \
    --warmup 0 --out alone --quiet >/dev/null 2>&1 || fail "peer alone"
alone=$(ls alone/torch-*.csv 2>/dev/null | head -n 1)
[ -n "$alone" ] || fail "no CSV in alone/"
"$ACCUBENCH" report "$alone" --no-charts >/dev/null || fail "report of the peer's own CSV"

# Bad input: exit 2, one line naming it.
for bad in "--model nope" "--mode graph" "--micro 11 --effective 10" "--bogus 1"; do
    "$py" "$peer" --device cpu $bad --csv bad.csv >bad.out 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "'$bad' exited $rc: $(cat bad.out)"
    [ "$(wc -l <bad.out)" -eq 1 ] || fail "'$bad' said more than one line: $(cat bad.out)"
    [ ! -e bad.csv ] || fail "'$bad' left a CSV"
done
echo "e2e_peer: ok"
