# check-gpu's last table, and the figures each stage's table line carries,
# from the CSVs and logs in CHECK_OUT: sourced by scripts/check_gpu.sh
# (`. "$here/check_gpu_table.sh"`) before its first stage, so that a
# signal that ends the check early still prints what ran. It reads the
# script's settings ($here, $out, $sweep_dtype, $models_s, $gpt_model,
# $ratio_modes, $failed, $gpu_state) and its elapsed. A part whose stage
# wrote nothing this time (skipped, or cut short before its first row)
# prints nothing: the stage's own line says why. Each CSV's columns are
# read by its header's names (check_gpu_awk.sh's cell()): a column the
# header lacks, or a cell that is no number, prints as "-".
# shellcheck shell=sh disable=SC2154 # the settings are check_gpu.sh's
. "$here/check_gpu_awk.sh"

# The data rows of a results CSV with its header, '#' lines dropped; a
# missing file gives nothing (its stage already said why).
csv_rows() {
    [ -f "$1" ] && grep -v '^#' "$1"
    return 0
}
rows() { csv_rows "$1"; }
# meta FILE KEY: the value of a "# KEY: value" line.
meta() { [ -f "$1" ] && sed -n "s/^# $2: //p" "$1" | head -n 1; }

# figure NAME: the one figure a stage's table line carries, from its log
# or CSV (nothing where there is none).
figure() {
    case $1 in
    gpu-check | real-shapes) sed -n 's/^gpu-check: \([0-9]* checks, [0-9]* failed\)$/\1/p' "$out/$1.log" ;;
    noise) sed -n 's/^noise: //p' "$out/noise.log" ;;
    cupti-cost) sed -n 's/^check_gpu_cupti_cost: PASS: //p' "$out/cupti-cost.log" ;;
    kernels) grep -E '^check_gpu_kernels: (PASS|FAIL)' "$out/kernels.log" | tail -n 1 | sed 's/^check_gpu_kernels: //' ;;
    # an empty mfu_pct (no peak measured) is no figure, never 0%
    gpt-sweep) csv_rows "$out/gpt-$sweep_dtype.csv" | LC_ALL=C awk -F, "$check_awk"'
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        cell("status") == "ok" && cell("micro_batch") == 8 && isnum(cell("mfu_pct")) {
            printf "micro 8: %.1f%% of the measured peak", cell("mfu_pct")
            if (isnum(cell("mfu_datasheet_pct"))) printf ", %.1f%% of the datasheet", cell("mfu_datasheet_pct") }' ;;
    attention) attention_figure ;;
    hot-kernels) sed -n 's/^\([a-z]*\) attention:$/\1/p; s/^  \([0-9.]* ms\) of device time.*/\1/p' \
        "$out/hot-kernels.txt" | paste -d' ' - - | paste -sd';' - | sed 's/;/; /g' ;;
    esac
}

# "fused 38.1 ms, unfused 8.2 ms a step at micro 8: fused/unfused 4.65x":
# the micro-8 rows of gpt-sweep (the default arrangement) and of the
# attention stage (the other), each named by its CSV's # attention: line.
# Nothing unless both have one: a missing CSV (its stage skipped, cut
# short, or not rerun with CHECK_ONLY=attention) is no step of 0 ms.
attention_figure() {
    for f in "$out/gpt-$sweep_dtype.csv" "$out/gpt-attention-$sweep_dtype.csv"; do
        name=$(meta "$f" attention | cut -d' ' -f1)
        printf '%s\t' "${name:--}"
        csv_rows "$f" | LC_ALL=C awk -F, "$check_awk"'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            cell("status") == "ok" && cell("micro_batch") == 8 { ms = cell("step_ms_median") }
            END { print isnum(ms) ? ms : "-" }'
    done | LC_ALL=C awk -F'\t' '{ name[NR] = $1; ms[NR] = $2; t[$1] = $2 }
        END {
            if (NR < 2 || ms[1] == "-" || ms[2] == "-") exit
            printf "%s %.1f ms, %s %.1f ms a step at micro 8", name[1], ms[1], name[2], ms[2]
            if (("fused" in t) && ("unfused" in t) && t["unfused"] + 0 > 0)
                printf ": fused/unfused %.2fx", t["fused"] / t["unfused"]
        }'
}

# The table: awk reads each CSV's columns by their header names.
table() {
    echo
    echo "== check-gpu: $({ head -n 1 "$out/gpu-check.log" 2>/dev/null || echo "(gpu-check did not run)"; } |
        sed 's/^gpu-check: //')"
    [ -z "${gpu_state:-}" ] || echo "== as the check began: $gpu_state"
    echo "== correctness: relative L2 error against the CPU, by dtype and split"
    if [ -f "$out/gpu-check.csv" ]; then
        # gpu-check's own CSV, its columns fixed (check,dtype,split,error,
        # tolerance,status,note); a NaN error shows as written, not as 0
        grep -v '^#' "$out/gpu-check.csv" | LC_ALL=C awk -F, "$check_awk"'
            NR == 1 { next }
            $1 ~ /^(gpt )?(forward\+backward|window)$/ {
                key = ($1 ~ /^gpt/ ? "gpt " : "") $2; if (!(key in row)) { order[++n] = key; row[key] = sprintf("  %-5s", key) }
                row[key] = row[key] sprintf("  %s %s%s", $3, isnum($4) ? sprintf("%.1e", $4) : $4, $6 == "ok" ? "" : "!")
            }
            $6 != "ok" { nbad++; bad = bad sprintf("    FAIL %s %s %s: error %s (tol %s) %s\n", $1, $2, $3, $4, $5, $7) }
            END {
                for (i = 1; i <= n; i++) print row[order[i]]
                printf "  %d checks, %d failed\n", NR - 1, nbad
                printf "%s", bad
            }'
    else
        echo "  (no gpu-check.csv)"
    fi

    echo "== step time, ms (median): abc on $models_s, effective 64"
    rows "$out/abc-modes.csv" | LC_ALL=C awk -F, "$check_awk"'
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        {
            m = cell("mode"); u = cell("micro_batch")
            if (!(m in seen)) { seen[m] = 1; order[++n] = m }
            v = cell("status") == "ok" ? num("%.3f", cell("step_ms_median")) : cell("status")
            t[m, u] = v
        }
        END {
            printf "  %-12s %10s %10s %10s\n", "mode", "A 64x1", "B 16x4", "C 8x8"
            for (i = 1; i <= n; i++) {
                m = order[i]
                printf "  %-12s %10s %10s %10s\n", m, t[m, 64], t[m, 16], t[m, 8]
            }
        }'

    echo "== $sweep_dtype sweep, effective 256: MFU at the largest micro-batch that ran"
    rows "$out/sweep-$sweep_dtype.csv" | LC_ALL=C awk -F, "$check_awk"'
        function pct(v) { return isnum(v) ? sprintf("%5.1f", v) : "    -" }
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        cell("status") == "ok" && isnum(cell("micro_batch")) {
            m = cell("model"); u = cell("micro_batch") + 0
            if (!(m in best)) order[++n] = m
            if (!(m in best) || u > best[m]) {
                best[m] = u
                line[m] = sprintf("  %-5s micro %4d x %-4s %8s ms  %8s TFLOP/s  MFU %s%%",
                    m, u, cell("accum_steps"), num("%.3f", cell("step_ms_median")), num("%.3g", cell("tflops")),
                    pct(cell("mfu_pct")))
            }
        }
        cell("status") != "ok" { other = other sprintf("  %s micro %s: %s %s\n", cell("model"),
                                 cell("micro_batch"), cell("status"), cell("note")) }
        END { for (i = 1; i <= n; i++) print line[order[i]]; printf "%s", other }'

    echo "== $gpt_model $sweep_dtype, 16 sequences a step: step time, sequences/s, MFU (measured peak; datasheet)"
    rows "$out/gpt-$sweep_dtype.csv" | LC_ALL=C awk -F, "$check_awk"'
        function pct(v) { return isnum(v) ? sprintf("%5.1f", v) : "    -" }
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        cell("status") == "ok" {
            d = cell("mfu_datasheet_pct")
            printf "  micro %3s x %-3s %10s ms %10s seq/s  MFU %s%%  %s\n", cell("micro_batch"),
                cell("accum_steps"), num("%.3f", cell("step_ms_median")), num("%.1f", cell("samples_per_s")),
                pct(cell("mfu_pct")), isnum(d) ? sprintf("%5.1f%% of the datasheet", d) : "(no datasheet figure)"
        }
        cell("status") != "ok" { printf "  micro %s: %s %s\n", cell("micro_batch"), cell("status"), cell("note") }'

    if [ -f "$out/graph-ratio.csv" ]; then
        echo "== graph / async step time on $models_s (effective 64), micro 1..8"
        rows "$out/graph-ratio.csv" | LC_ALL=C awk -F, -v modes="$ratio_modes" "$check_awk"'
            NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            cell("status") == "ok" && isnum(cell("step_ms_median")) {
                t[cell("mode"), cell("micro_batch")] = cell("step_ms_median")
            }
            END {
                split(modes, m, ",")
                line = sprintf("  %s/%s:", m[2], m[1])
                for (u = 1; u <= 8; u *= 2) {
                    a = t[m[1], u] + 0; g = t[m[2], u] + 0
                    line = line sprintf("  micro %d %s", u, a > 0 && g > 0 ? sprintf("%.2f", g / a) : "-")
                }
                print line
            }'
    fi
    if [ -f "$out/dp.csv" ]; then
        echo "== data parallel, $models_s at effective 256 ($(sed -n 's/^# ranks: //p' "$out/dp.csv"))"
        rows "$out/dp.csv" | LC_ALL=C awk -F, "$check_awk"'
            NR == 1 {
                for (i = 1; i <= NF; i++) col[$i] = i
                printf "  %-4s %-8s %-10s %9s %10s %10s %10s %9s  %s\n", "dev", "sync", "shard",
                       "micro x K", "step ms", "all-red.", "exposed", "busbw", "checks"
                next
            }
            {
                ok = cell("status") == "ok"
                printf "  %-4s %-8s %-10s %9s %10s %10s %10s %9s  %s\n", cell("devices"), cell("sync"),
                       cell("shard"), cell("micro_batch") "x" cell("accum_steps"),
                       ok ? num("%.3f", cell("step_ms_median")) : "-", cell("allreduce_calls_per_step"),
                       ok ? num("%.3f", cell("comm_exposed_ms")) : "-", num("%.1f", cell("busbw_gbps")),
                       ok ? "grad " num("%.1e", cell("grad_rel_err")) ", weights equal" : cell("status") ": " cell("note")
            }'
    fi
    if [ -s "$out/frontier-plan.txt" ]; then
        echo "== frontier: plan --recommend from frontier.csv (each model's ranking, head)"
        grep -E '^(plan --recommend|rank| +1 |left out|      )' "$out/frontier-plan.txt" |
            head -n 24 | sed 's/^/  /'
    fi
    if [ -s "$out/hot-kernels.txt" ]; then
        echo "== hot kernels: one micro-batch of $gpt_model at micro 8, a traced step's device time by kernel"
        sed 's/^/  /' "$out/hot-kernels.txt"
    fi
    if [ -f "$out/kernels.log" ]; then
        echo "== kernels per step (scripts/check_gpu_kernels.sh; all of it in $out/kernels.log)"
        tail -n 4 "$out/kernels.log" | sed 's/^/  /'
    fi
    echo "== stages: pass, FAIL or skipped, and each one's figure"
    awk -F'\t' '{ printf "  %-12s %-8s %s\n", $1, $2, $3 }' "$out/stages.txt"
    echo "== $(elapsed)s; results in $out${failed:+; FAILED:$failed}"
}
