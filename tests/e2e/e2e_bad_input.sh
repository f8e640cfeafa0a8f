#!/bin/sh
# Every bad input: exit 2, exactly one line on stderr naming the problem,
# and no file written.
set -u
fail=0
mkdir out
expect_error() {
    pattern=$1; shift
    "$ACCUBENCH" "$@" >stdout.txt 2>stderr.txt
    rc=$?
    lines=$(wc -l <stderr.txt)
    if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$pattern" stderr.txt; then
        echo "FAILED: accubench $* -> exit $rc, $lines stderr lines:"; cat stderr.txt
        fail=1
    fi
    if [ -n "$(ls out)" ]; then
        echo "FAILED: accubench $* left files:"; ls out; rm -rf out/*
        fail=1
    fi
}
run() { expect_error "$@"; }
base="--out out --profile quick"
run "effective" run $base --effective 0
run "effective" run $base --effective -4
run "effective" run $base --effective abc
run "effective" run $base --effective 99999999999999999999
run "micro" run $base --micro 8x
run "micro" run $base --micro 1,,2
run "larger than the effective" run $base --effective 8 --micro 16
run "micro-batch 32 is larger than every effective batch (the largest is 16)" run $base --effective 8,16 --micro 4,32
run "unknown model 'Q'" run $base --model Q
run "model 'mlp:hidden=0,layers=2,classes=4': hidden must be" run $base --model mlp:hidden=0,layers=2,classes=4
run "gives no classes" run $base --model S,mlp:hidden=8,layers=2
run "model 'mlp:hidden=8,layers=1:,classes=2': layers must be a whole number, got '1:'" run $base --model 'mlp:hidden=8,layers=1:,classes=2'
# A Llama's shape: each cross-key constraint named in one line.
llama="layers=2,ffn=16,seq=8,vocab=64,tied=0"
run "kv_heads=3 does not divide heads=4" run $base --model "llama:d=64,heads=4,kv_heads=3,$llama"
run "heads=5 does not divide d=64" run $base --model "llama:d=64,heads=5,kv_heads=5,$llama"
run "head dimension d/heads=3 is odd" run $base --model "llama:d=24,heads=8,kv_heads=2,$llama"
run "ffn must be between 1 and" run $base --model "llama:d=64,heads=4,kv_heads=2,layers=2,ffn=0,seq=8,vocab=64,tied=0"
run "tied must be between 0 and 1" run $base --model "llama:d=64,heads=4,kv_heads=2,layers=2,ffn=8,seq=8,vocab=64,tied=2"
run "unknown model 'Q'" plan --find-max-micro --model Q
run "unknown dtype" run $base --dtype fp8
run "unknown backend" run $base --backend tpu
run "unknown profile" run --out out --profile nosuch
run "unknown option" run $base --frobnicate 3
run "unknown command" frobnicate
run "needs a value" run $base --steps
run "steps" run $base --steps 0
run "mem-cap" run $base --mem-cap 12Q
run "mode" run $base --mode warp
run "reduction" run $base --reduction median
run "budget-s" run $base --budget-s -1
run "--append needs --csv FILE: without it the run writes a new file of a name of its own" run $base --append
run "--replace needs --csv FILE" run $base --replace
run "--lr-grid sqrt scales --lr, which is 0: give --lr above 0" run $base --train-steps 5 --lr 0 --lr-grid sqrt
run "max-micro" plan --effective 64
run "effective" plan --effective 0 --max-micro 8
run "a device would have none" plan --effective 2 --max-micro 8 --devices 3
printf 'effective = 16\nmicro = 4\nmodel tiny\n' > broken.profile
run "broken.profile:3" run --out out --profile ./broken.profile
printf 'effective = 16\nmicro = 4\nwibble = 3\n' > unknown.profile
run "unknown.profile:3: unknown option 'wibble'" run --out out --profile ./unknown.profile
printf 'effective = 16\nmicro = 4\n# a second look\neffective = 32\n' > twice.profile
run "twice.profile:4: effective is set again (first on line 1): give it once" run --out out --profile ./twice.profile
# an option's whole reason, as on the command line (a 300-byte buffer
# cut the unknown model's list of names mid-word)
printf 'model = tiny, S\n' > long.profile
run "long.profile:1: unknown model ' S' .*did you mean 'S'? (see accubench help run)$" run --out out --profile ./long.profile
printf '# nothing set\n\n' > empty.profile
run "profile ./empty.profile sets no option" run --out out --profile ./empty.profile
# an option named twice on the command line (the last would win without
# a word), on every command; the hint where the option takes a list
run "--model given twice (S, then M); name it once (it takes a list: --model S,M)" \
    run $base --model S --model M
run "--steps given twice (2, then 3); name it once (see accubench help run)" run $base --steps 2 --steps=3
run "--no-cupti given twice; name it once" run $base --no-cupti --no-cupti
run "--model given twice (S, then M); name it once" plan --find-max-micro --model S --model M
run "--out given twice (a, then b); name it once" report some.csv --out a --out b
run "--min-diff given twice (1, then 2); name it once" compare a.csv b.csv --min-diff 1 --min-diff 2
# a profile's key given on the command line is an override, not a repeat
printf 'effective = 16\nmicro = 4\n' > override.profile
run "micro-batch 32 is larger than the effective batch 8" \
    run --out out --profile ./override.profile --effective 8 --micro 32
# the CSVs report and compare read: too few or too many, each named
run "report: no CSV named (usage: accubench report FILE.csv" report
run "report: one CSV at a time, got 'a.csv' and then 'b.csv'" report a.csv b.csv
run "compare: no CSVs named (usage: accubench compare BASE.csv.*NEW.csv" compare
run "compare: two sides, got only 'a.csv'" compare a.csv
run "compare: two sides, got a third: 'c.csv' after 'a.csv' and 'b.csv'" compare a.csv b.csv c.csv
# a CSV no run wrote (a header without the columns of a result row):
# refused as report and compare refuse it, not read as a run without
# a noise scale or curves
printf 'a,b,c\n1,2,3\n' > foreign.csv
run "foreign.csv: missing column backend" plan --noise foreign.csv
run "foreign.csv: missing column backend" plan --time-to-target foreign.csv
# plan --recommend with no --csv writes into results/: what is in the way
# is named as that folder, not as an option never given
touch results
run "the measured rows' default folder results is a regular file, not a folder" \
    plan --recommend --backend cpu --effective 16 --model tiny --mem-cap 90M
rm results
# a near miss names what was meant: a key, an axis's value, a preset, a
# command, a key in a profile
run "unknown option 'efective'; did you mean 'effective'?" run $base --efective 8
run "unknown mode 'asyn' (known: .*); did you mean 'async'?" run $base --mode asyn
run "did you mean 'S'?" run $base --model s
run "unknown command 'rn'; did you mean 'run'?" rn
run "unknown command 'plna'.*did you mean 'plan'?" help plna
run "help takes one command, got 'run' and then 'plan'" help run plan
run "unknown plan option '--max-mirco'; did you mean '--max-micro'?" plan --max-mirco 8
run "unknown option 'no-cupt'; did you mean 'no-cupti'?" run $base --no-cupt
run "unknown option 'no-chart'; did you mean 'no-charts'?" report some.csv --no-chart
run "unknown option 'min-dif'; did you mean 'min-diff'?" compare a.csv b.csv --min-dif 2
printf 'effective = 16\nmicro = 4\nwramup = 3\n' > typo.profile
run "typo.profile:3: unknown option 'wramup'; did you mean 'warmup'?" run --out out --profile ./typo.profile
# --devices 2 without mpirun: the hint is a command that works as typed,
# with this program's own path, and as root Open MPI's permission
run "run it as  mpirun -np 2 .*$ACCUBENCH run" run $base --devices 2
if [ "$(id -u)" -eq 0 ]; then
    grep -q -- '--allow-run-as-root.*OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1' \
        stderr.txt || { echo "FAILED: as root the hint does not say how:"; cat stderr.txt; fail=1; }
fi
# an unwritable output directory (a file in the way)
touch notadir
run "output directory" run --profile quick --out notadir/sub
# the cpu backend refuses a precision it has no hardware mode for (tf32 is
# a tensor-core mode) instead of pretending
run "computes in fp32 or bf16; --dtype tf32 needs --backend cuda" run $base --backend cpu --dtype tf32
# What the backend cannot do is refused the same way, before anything runs:
# the CPU backend has no graph capture.
run "mode graph needs graph capture, which the cpu backend lacks" run $base --backend cpu --mode async,graph
# --dump is one process's window: beside what needs ranks it says so, not
# an mpirun command that would refuse the --dump in turn.
for needs in "--shard optimizer" "--sync micro" "--devices 2"; do
    run "^accubench: --dump out/d writes one process's window, without ranks, and $needs needs ranks under mpirun: run them apart$" \
        run $base $needs --dump out/d
done
exit $fail
