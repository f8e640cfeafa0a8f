#!/bin/sh
# The charts cost the same passes over the CSV whatever it holds: each
# line a chart draws is a pass (awk), so a chart draws at most a fixed
# number (the models past them counted under it); 12 models and 300 run
# awk the same number of times, where each model was once a pass per
# chart (1000 models took 36 s, 3000 over 120 s).
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
root=${ACCUBENCH_ROOT:?}
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP e2e_plots_bounded: gnuplot not installed"
    exit 0
fi
# An awk first on PATH that counts its runs, then runs the real one.
real_awk=$(command -v awk)
mkdir bin
cat >bin/awk <<SH
#!/bin/sh
echo run >>"$PWD/awk.count"
exec "$real_awk" "\$@"
SH
chmod +x bin/awk
passes() { # passes N: awk runs of the charts of a CSV of N models
    "$real_awk" -v rows=$(($1 * 7)) -f "$root/scripts/gen_results_csv.awk" >m$1.csv
    : >awk.count
    PATH="$PWD/bin:$PATH" sh "$root/scripts/plots.sh" m$1.csv >plots$1.out 2>&1 ||
        echo "FAILED: plots.sh on $1 models: $(cat plots$1.out)"
    wc -l <awk.count | tr -d ' '
}
few=$(passes 12)
many=$(passes 300)
check "[ \"$few\" -gt 0 ] && [ \"$few\" -eq \"$many\" ]" \
    "awk ran $few times for 12 models, $many for 300: a pass per model"
check "grep -q '288 more models not drawn (the first 12 in the CSV are' m300.throughput.svg" \
    "the throughput chart does not say which models it left out"
check "grep -q '288 more models not drawn' m300.wallclock.svg" "nor the wall-clock chart"
check "! grep -q 'more models not drawn' m12.throughput.svg" "12 models are said to be cut"
exit $fail
