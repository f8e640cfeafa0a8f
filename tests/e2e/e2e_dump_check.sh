#!/bin/sh
# tests/run/dump_check.py as a person meets it: no argument or --help gives
# its usage, never a traceback; a dump of a model kind it has no reference
# for is refused by name in one line (exit 2), not checked as a GPT; every
# check ends with a last line PASS or FAIL. The noise pass's windows in
# DIR/noise/ (checked with the standard library alone): the manifest's
# fields, W x E rows, a split of W x K summing to them, noise_windows and
# grad_noise_scale those of the CSV row, a gradient file per parameter in
# its shape; none where the row has no noise scale, the top manifest saying
# why. With NumPy ($PYTHON's where it has it): an MLP dump passes (its noise
# scale recomputed from the windows), and the same dump with its loss or its
# noise scale changed fails (exit 1); bf16 dumps of the MLP and of a GPT on
# a ragged split pass against the exact gradient, one gradient 10% off
# fails; a bf16 accumulator's (--grad-dtype) manifest says so, and its
# gradient is checked for shapes only; the linear classifier passes, and
# fails with a gradient 10% off. The Llama, with $PYTHON (python3 by default): where PyTorch and
# transformers import, a tied GQA dump and llama-tiny's pass against
# Hugging Face's LlamaForCausalLM and one gradient nudged by 1e-4 fails by
# its name; where they do not, the dump is refused in one line (exit 2)
# and the check is skipped with a note.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
dc="$ACCUBENCH_ROOT/tests/run/dump_check.py"

python3 "$dc" >out.txt 2>&1
rc=$?
check "[ $rc -eq 2 ] && grep -q '^usage: dump_check.py DIR' out.txt && ! grep -q Traceback out.txt && tail -n 1 out.txt | grep -q '^FAIL'" \
    "no argument: exit $rc, $(cat out.txt)"
python3 "$dc" --help >out.txt 2>&1
rc=$?
check "[ $rc -eq 0 ] && grep -q '^usage: dump_check.py DIR' out.txt && ! grep -q Traceback out.txt" \
    "--help: exit $rc, $(cat out.txt)"
python3 "$dc" a b >out.txt 2>&1
check "[ $? -eq 2 ] && tail -n 1 out.txt | grep -q '^FAIL.*not 2 arguments'" "two arguments: $(cat out.txt)"
python3 "$dc" missing >out.txt 2>&1
check "[ $? -eq 2 ] && [ \$(wc -l <out.txt) -eq 1 ] && grep -q '^FAIL: missing/manifest.json' out.txt" \
    "no manifest: $(cat out.txt)"

# A kind with no reference here: refused by its name before NumPy is needed.
mkdir other
printf '{"kind": "resmlp", "model": "resmlp:hidden=8,layers=2,classes=4", "tensors": []}\n' \
    >other/manifest.json
python3 "$dc" other >out.txt 2>&1
rc=$?
check "[ $rc -eq 2 ] && [ \$(wc -l <out.txt) -eq 1 ] && grep -q \"^FAIL: .*model kind 'resmlp'\" out.txt && grep -q 'knows mlp' out.txt" \
    "unknown kind: exit $rc, $(cat out.txt)"

# The noise pass's windows: 8 windows of 16 examples at micro-batch 4, all
# of them run (the budget leaves the pass its time).
"$ACCUBENCH" run --backend cpu --model tiny --effective 16 --micro 4 --steps 2 --warmup 1 \
    --trace-steps 0 --noise-windows 8 --budget-s 1000 --csv dump.csv --dump mdump \
    >/dev/null 2>err.txt
check '[ $? -eq 0 ] && [ -f mdump/manifest.json ] && [ -f mdump/noise/manifest.json ]' \
    "mlp dump with its noise windows written: $(cat err.txt)"
cat >noise_fields.py <<'PY'
import csv, json, os, sys
root, table = sys.argv[1], sys.argv[2]
top = json.load(open(os.path.join(root, "manifest.json")))
m = json.load(open(os.path.join(root, "noise", "manifest.json")))
row = next(csv.DictReader(l for l in open(table) if not l.startswith("#")))
bad = []
if top.get("noise_dump") != "noise" or "no_noise_dump" in top:
    bad.append("top manifest does not name noise/")
w, e = m["noise_windows"], m["window_effective"]
k = top["accum"]
if w != int(row["noise_windows"]) or e != int(row["effective_batch"]):
    bad.append(f"noise_windows {w} x {e}, row {row['noise_windows']} x {row['effective_batch']}")
gns = float(row["grad_noise_scale"])
if not abs(m["grad_noise_scale"] - gns) <= 1e-5 * gns:
    bad.append(f"grad_noise_scale {m['grad_noise_scale']}, row {gns}")
err = float(row["grad_noise_scale_err"])
if not abs(m["grad_noise_scale_err"] - err) <= 1e-5 * err:
    bad.append(f"grad_noise_scale_err {m['grad_noise_scale_err']}, row {err}")
if m["effective"] != w * e or sum(m["split"]) != w * e or len(m["split"]) != w * k \
        or m["accum"] != w * k or m["split"] != top["split"] * w:
    bad.append(f"effective {m['effective']}, split {m['split']}, accum {m['accum']}")
if not (0 < m["valid_items"] <= w * e) or "loss_sum" not in m or "loss" not in m:
    bad.append("valid_items, loss, loss_sum")
shapes = {(t["role"], t["name"]): t for t in m["tensors"]}
for (role, name), t in shapes.items():
    if role == "param":
        g = shapes.get(("grad", name))
        if not g or g["shape"] != t["shape"] or not os.path.isfile(os.path.join(root, "noise", g["file"])):
            bad.append(f"grad of {name}")
for name in ("inputs", "labels", "mask"):
    t = [t for t in m["tensors"] if t["name"] == name][0]
    if t["shape"][0] != w * e or not os.path.isfile(os.path.join(root, "noise", t["file"])):
        bad.append(f"{name} shape {t['shape']}")
print("; ".join(bad) if bad else "ok")
PY
python3 noise_fields.py mdump dump.csv >out.txt 2>&1
check '[ "$(cat out.txt)" = ok ]' "the noise windows' manifest against the row: $(cat out.txt)"

# No noise scale, no noise/: one micro-batch per window, and --noise-windows 0.
for args in "--micro 4 --noise-windows 8:one micro-batch per window" \
        "--micro 2 --noise-windows 0:--noise-windows 0"; do
    rm -rf none none.csv
    "$ACCUBENCH" run --backend cpu --model tiny --effective 4 ${args%%:*} --steps 2 --warmup 1 \
        --trace-steps 0 --csv none.csv --dump none >/dev/null 2>err.txt
    check "[ \$? -eq 0 ] && [ -f none/manifest.json ] && [ ! -e none/noise ] && grep -q '\"no_noise_dump\": \"no noise scale: ${args#*:}' none/manifest.json" \
        "$args: no noise/, the manifest says why: $(grep no_noise none/manifest.json) $(cat err.txt)"
done

py=${PYTHON:-python3}
have_hf=0
"$py" -c 'import numpy, torch, transformers' >/dev/null 2>&1 && have_hf=1
for model in "llama:d=16,layers=2,heads=4,kv_heads=1,ffn=24,seq=8,vocab=64,tied=1 --effective 5 --micro 2" \
        "llama-tiny --effective 4 --micro 3"; do
    rm -rf ldump ldump.csv
    "$ACCUBENCH" run --backend cpu --model $model --steps 1 --warmup 0 --trace-steps 0 \
        --noise-windows 0 --csv ldump.csv --dump ldump >/dev/null 2>err.txt
    check '[ $? -eq 0 ] && [ -f ldump/manifest.json ]' "llama dump ($model): $(cat err.txt)"
    if [ $have_hf -eq 0 ]; then
        "$py" "$dc" ldump >out.txt 2>&1
        check '[ $? -eq 2 ] && [ $(wc -l <out.txt) -eq 1 ] && grep -q "^FAIL: ldump: " out.txt' \
            "the Llama without transformers: one line, exit 2: $(cat out.txt)"
        echo "note: PyTorch or transformers is not importable for $py; no Llama dump was checked"
        break
    fi
    PYTHONDONTWRITEBYTECODE=1 "$py" "$dc" ldump >out.txt 2>&1
    check '[ $? -eq 0 ] && [ "$(tail -n 1 out.txt)" = PASS ] && grep -q "gradients against Hugging Face" out.txt' \
        "the Llama dump ($model) against Hugging Face's: $(cat out.txt)"
done
if [ $have_hf -eq 1 ] && [ -f ldump/grad.model.layers.1.self_attn.k_proj.weight.npy ]; then
    "$py" -c "import numpy as np; f='ldump/grad.model.layers.1.self_attn.k_proj.weight.npy'; np.save(f, np.load(f) * np.float32(1.0001))"
    PYTHONDONTWRITEBYTECODE=1 "$py" "$dc" ldump >out.txt 2>&1
    check '[ $? -eq 1 ] && grep -q "FAILED: ldump: grad model.layers.1.self_attn.k_proj.weight: relative error" out.txt && [ "$(tail -n 1 out.txt)" = FAIL ]' \
        "a nudged Llama gradient fails by its name: $(cat out.txt)"
fi

# A bf16 accumulator (--grad-dtype): the manifest says so (checked below
# with NumPy: shapes only).
rm -rf gdump gdump.csv
"$ACCUBENCH" run --backend cpu --model tiny --grad-dtype bf16 --effective 10 --micro 4 \
    --steps 1 --warmup 0 --trace-steps 0 --noise-windows 0 --csv gdump.csv --dump gdump \
    >/dev/null 2>err.txt
check 'grep -q "\"dtype\": \"fp32\", \"grad_dtype\": \"bf16\"," gdump/manifest.json' \
    "the bf16 accumulator's manifest: $(cat err.txt) $(head -c 600 gdump/manifest.json)"

# The NumPy checks under the first python with NumPy (numpy_python.sh).
. "$ACCUBENCH_ROOT/tests/e2e/numpy_python.sh"
if [ -z "$np_py" ]; then
    echo "note: numpy is not importable; no dump was checked in NumPy"
    exit $fail
fi
"$np_py" "$dc" mdump >out.txt 2>&1
check '[ $? -eq 0 ] && [ "$(tail -n 1 out.txt)" = PASS ] && grep -q "mdump/noise: .*noise scale .* recomputed over 8 windows of 16" out.txt' \
    "the dump holds, and its noise scale: $(cat out.txt)"
cp -r mdump ndump
sed 's/"grad_noise_scale": [0-9.e+-]*/"grad_noise_scale": 1.5/' mdump/noise/manifest.json >ndump/noise/manifest.json
"$np_py" "$dc" ndump >out.txt 2>&1
check '[ $? -eq 1 ] && grep -q "FAILED: ndump/noise: grad_noise_scale" out.txt && [ "$(tail -n 1 out.txt)" = FAIL ]' \
    "a changed noise scale fails: $(cat out.txt)"
sed 's/"loss": [0-9.e+-]*/"loss": 9.5/' mdump/manifest.json >m.json && mv m.json mdump/manifest.json
"$np_py" "$dc" mdump >out.txt 2>&1
check '[ $? -eq 1 ] && grep -q "FAILED: mdump: loss" out.txt && [ "$(tail -n 1 out.txt)" = FAIL ]' \
    "a changed loss fails: $(cat out.txt)"
# bf16 dumps of a ragged split (E=10, micro 4: 4+4+2) against the exact
# gradient, a GPT's against GPT2LMHeadModel where transformers imports for
# $np_py (else by central differences) and the MLP's by backpropagation:
# bf16's own error passes, an MLP gradient 10% off does not.
gpt_ref="by central differences"
"$np_py" -c 'import torch, transformers' >/dev/null 2>&1 &&
    gpt_ref="gradients against Hugging Face's GPT2LMHeadModel"
for model in "gpt:d=16,layers=1,heads=2,seq=8,vocab=64" tiny; do
    rm -rf bdump bdump.csv
    # the MLP's with its noise pass: its estimate held to bf16's error
    noise="--noise-windows 0"
    [ "$model" = tiny ] && noise=""
    # shellcheck disable=SC2086
    "$ACCUBENCH" run --backend cpu --model $model --dtype bf16 --effective 10 --micro 4 \
        --steps 1 --warmup 0 --trace-steps 0 $noise --csv bdump.csv --dump bdump \
        >/dev/null 2>err.txt
    check '[ $? -eq 0 ] && [ -f bdump/manifest.json ]' "bf16 dump ($model): $(cat err.txt)"
    "$np_py" "$dc" bdump >out.txt 2>&1
    check '[ $? -eq 0 ] && [ "$(tail -n 1 out.txt)" = PASS ]' "the bf16 dump of $model: $(cat out.txt)"
    [ "$model" = tiny ] && check 'grep -q "noise scale .* recomputed over" out.txt' \
        "the bf16 MLP's noise scale checked: $(cat out.txt)"
    case $model in gpt*)
        check 'grep -q "$gpt_ref" out.txt' "the GPT checked $gpt_ref: $(cat out.txt)"
        cp -r bdump gpt_bdump ;;
    esac
done
# A GPT gradient 10% off fails by its name, whichever reference checks it
# (the attention's projection: in Hugging Face's layout a Conv1D,
# transposed; against central differences a small tensor beside the
# embedding).
"$np_py" -c "import numpy as np; f='gpt_bdump/grad.transformer.h.0.attn.c_attn.weight.npy'; np.save(f, np.load(f) * np.float32(1.1))"
"$np_py" "$dc" gpt_bdump >out.txt 2>&1
check '[ $? -eq 1 ] && [ "$(tail -n 1 out.txt)" = FAIL ] && grep -q "FAILED: gpt_bdump: grad transformer.h.0.attn.c_attn.weight: relative error" out.txt' \
    "a GPT gradient 10% off fails by its name: $(cat out.txt)"
# The bf16 accumulator's dump (above): shapes only, its roundings are not
# reproduced here.
"$np_py" "$dc" gdump >out.txt 2>&1
check '[ $? -eq 0 ] && grep -q "held in bf16 between micro-batches (--grad-dtype): shapes only" out.txt' \
    "a bf16 accumulator's dump: $(cat out.txt)"
"$np_py" -c "import numpy as np; f='bdump/grad.layers.1.weight.npy'; np.save(f, np.load(f) * np.float32(1.1))"
"$np_py" "$dc" bdump >out.txt 2>&1
check '[ $? -eq 1 ] && grep -q "FAILED: bdump: grad layers.1.weight: relative error" out.txt' \
    "a bf16 gradient 10% off passed: $(cat out.txt)"
# The linear classifier (one nn.Linear) on a ragged split passes, and its
# weight's gradient 10% off fails by its own name.
"$ACCUBENCH" run --backend cpu --model linear:in=16,classes=5 --effective 10 --micro 4 \
    --steps 1 --warmup 0 --trace-steps 0 --noise-windows 0 --csv lin.csv --dump lin \
    >/dev/null 2>err.txt
"$np_py" "$dc" lin >out.txt 2>&1
check '[ $? -eq 0 ] && [ "$(tail -n 1 out.txt)" = PASS ] && grep -q "every gradient by backpropagation" out.txt' \
    "the linear dump: $(cat err.txt) $(cat out.txt)"
"$np_py" -c "import numpy as np; f='lin/grad.linear.weight.npy'; np.save(f, np.load(f) * np.float32(1.1))"
"$np_py" "$dc" lin >out.txt 2>&1
check '[ $? -eq 1 ] && grep -q "FAILED: lin: grad linear.weight: relative error" out.txt' \
    "a linear gradient 10% off: $(cat out.txt)"
exit $fail
