#!/bin/sh
# The PyTorch peer's Llama: its module, names, counts and bf16 window
# (tests/peers/test_peer_llama.py, against Hugging Face's LlamaForCausalLM
# where transformers imports); accubench's Llama dumps (tied with one KV
# head, and llama-tiny, in bf16 and with a bf16 accumulator too on a ragged
# split) checked by the peer's --verify, an fp32 gradient nudged by 1e-4
# named as the mismatch; and the peer's rows joined to accubench's llama-tiny run: the same model
# name and parameter count, measured, the accumulated gradient the full
# batch's, a ratio per split in the report.
# Skipped with a message where PyTorch does not import.
set -u
root=${ACCUBENCH_ROOT:?}
py=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1
if ! "$py" -c "import torch" >/dev/null 2>&1; then
    echo "SKIP e2e_peer_llama: PyTorch is not installed for $py (pip install torch)"
    exit 0
fi
peer="$root/bench/peers/torch_accum.py"
fail() { echo "FAIL: $*"; exit 1; }
col() { # col FILE NAME: the values of column NAME, one per row
    awk -F, -v name="$2" '/^#/ || !NF { next } !h { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } { print $c }' "$1"
}

"$py" "$root/tests/peers/test_peer_llama.py" >unit.out 2>&1
tail -n 1 unit.out | grep -q '^OK' || fail "tests/peers/test_peer_llama.py: $(tail -n 30 unit.out)"
"$py" -c "import transformers" >/dev/null 2>&1 ||
    echo "note: transformers is not importable for $py: the peer's Llama was not checked against Hugging Face's"

for model in "llama:d=16,layers=2,heads=4,kv_heads=1,ffn=24,seq=8,vocab=64,tied=1 --effective 5 --micro 2" \
        "llama-tiny --dtype bf16 --effective 10 --micro 4" \
        "llama-tiny --grad-dtype bf16 --effective 10 --micro 4" "llama-tiny --effective 4 --micro 3"; do
    rm -rf dump
    "$ACCUBENCH" run --backend cpu --model $model --steps 1 --warmup 0 --no-cupti --quiet \
        --noise-windows 0 --csv dump.csv --replace --dump dump >/dev/null 2>&1 ||
        fail "accubench --dump ($model)"
    "$py" "$peer" --verify dump >verify.out 2>&1 || fail "verify ($model): $(cat verify.out)"
    grep -q '^verify: PASS' verify.out || fail "verify ($model) says: $(cat verify.out)"
    [ "$(grep -c '^ok ' verify.out)" -eq "$(grep -c '"role": "grad"' dump/manifest.json)" ] ||
        fail "not one ok line per gradient ($model): $(cat verify.out)"
done
"$py" -c "import numpy as np; f='dump/grad.model.layers.1.mlp.gate_proj.weight.npy'; np.save(f, np.load(f) * np.float32(1.0001))"
"$py" "$peer" --verify dump >verify.out 2>&1
[ $? -eq 1 ] || fail "a nudged gradient passed: $(cat verify.out)"
grep -q '^MISMATCH model.layers.1.mlp.gate_proj.weight ' verify.out ||
    fail "the mismatch is not named: $(cat verify.out)"

split="--model llama-tiny --effective 4 --micro 1,4 --budget-s 0.2"
"$ACCUBENCH" run --backend cpu $split --csv run.csv --quiet --no-cupti >/dev/null 2>&1 ||
    fail "accubench run"
"$py" "$peer" --device cpu $split --mode eager-fused --warmup 1 --min-samples 2 --csv run.csv \
    --quiet >peer.out 2>&1 || fail "peer run: $(cat peer.out)"
[ "$(col run.csv backend | grep -c '^torch$')" -eq 2 ] || fail "not 2 torch rows: $(cat peer.out)"
[ "$(col run.csv model | sort -u)" = llama-tiny ] || fail "model names: $(col run.csv model | sort -u)"
[ "$(col run.csv params | sort -u)" = 158016 ] || fail "parameter counts: $(col run.csv params | sort -u)"
awk -F, '
    /^#/ || !NF { next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    $c["backend"] != "torch" { next }
    {
        if ($c["status"] != "ok" || $c["step_ms_median"] == "") { print "not measured: " $0; bad = 1 }
        if (!($c["grad_rel_err"] + 0 < 1e-5)) { print "grad err: " $0; bad = 1 }
    }
    END { exit bad }' run.csv || fail "torch rows wrong"
"$ACCUBENCH" report run.csv --no-charts >/dev/null || fail "report of the joined CSV"
grep -Eq '^\| 1x4 +\| +[0-9.]+ +\| +[0-9.]+ +\| +[0-9.]+x \[[0-9.]+\.\.[0-9.]+\] +\|' run.md ||
    fail "no ratio row for 1x4: $(sed -n '/## Against/,/## The fastest/p' run.md)"
echo "e2e_peer_llama: ok"
