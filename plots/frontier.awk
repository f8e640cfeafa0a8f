# frontier.awk: the points of plots/frontier.gp from accubench CSV rows (the
# header and the rows pick.awk chose), by column name.
#
#   awk -f split.awk -f levers.awk -f frontier.awk -v want=WHAT [-v levers=LINE] [FILE]
#
# WHAT:
#   points  mem_mib,step_ms,lo,hi,label,clean: one line per row with a memory
#           figure, memory ascending (a header line first)
#   front   the same for the Pareto front alone: rows no other row beats at
#           once in memory and time, memory ascending (a flag explains a
#           figure and keeps no row off the front, as in plan --recommend)
#   count   how many points there are; clean: how many of them carry no flag
#   xmin, xmax  the least and largest memory in MiB, the cap among them
#   cap     the cap in bytes: $ACCUBENCH_MEM_CAP (a whole number: what
#           accubench report --mem-cap hands down), else the file's
#           `# mem_cap_bytes:` line; nothing for none (0 is none)
# Memory per device is mem_peak_bytes where measured, else mem_need_bytes.
# A point's label: its split, the levers that set it apart (LINE: the CSV's
# `# levers:` line, levers.awk; a file without a lever's column ran without
# it) and its sync.
# POSIX awk only.
function whole(s) { return s ~ /^[0-9]+$/ && s + 0 > 0 }
function cap_bytes() {
    if (whole(ENVIRON["ACCUBENCH_MEM_CAP"])) return ENVIRON["ACCUBENCH_MEM_CAP"]
    return whole(meta_cap) ? meta_cap : ""
}
BEGIN { FS = "," }
/^#/ {
    line = $0
    if (sub(/^# mem_cap_bytes:[ \t]*/, "", line)) { sub(/[ \t\r]+$/, "", line); meta_cap = line }
    next
}
/^[ \t\r]*$/ { next }
!header {
    header = 1
    sub(/\r$/, "")
    for (i = 1; i <= NF; i++) col[$i] = i
    levers_read(levers)
    next
}
{
    sub(/\r$/, "")
    if (want == "cap") next
    if ($(col["status"]) != "ok" || $(col["step_ms_median"]) == "") next
    if (("arm" in col) && $(col["arm"]) == 2) next # an A/A check's second arm: the same point
    peak = ("mem_peak_bytes" in col) ? $(col["mem_peak_bytes"]) : ""
    need = ("mem_need_bytes" in col) ? $(col["mem_need_bytes"]) : ""
    mem = (peak != "" && peak + 0 > 0) ? peak : need
    if (mem == "" || mem + 0 <= 0) next
    sy = ("sync" in col) ? $(col["sync"]) : "" # data parallel: when it all-reduced
    n++
    m[n] = mem / 1048576; t[n] = $(col["step_ms_median"]) + 0
    lo[n] = ("step_ms_ci_lo" in col && $(col["step_ms_ci_lo"]) != "") ? $(col["step_ms_ci_lo"]) : t[n]
    hi[n] = ("step_ms_ci_hi" in col && $(col["step_ms_ci_hi"]) != "") ? $(col["step_ms_ci_hi"]) : t[n]
    fl = ("flags" in col) ? $(col["flags"]) : ""
    clean[n] = fl == "" ? 1 : 0
    label[n] = split_text($(col["micro_batch"]), $(col["accum_steps"]), \
                          ("last_micro_batch" in col) ? $(col["last_micro_batch"]) : "") \
               levers_said(col, " ", "") (sy != "" ? " sync " sy : "")
    dt[n] = $(col["dtype"])
    if (!(dt[n] in seen_dt)) { seen_dt[dt[n]] = 1; n_dt++ }
}
END {
    if (want == "cap") { print cap_bytes(); exit }
    if (want == "count") { print n + 0; exit }
    c = 0
    for (i = 1; i <= n; i++) c += clean[i]
    if (want == "clean") { print c; exit }
    cap = cap_bytes()
    if (want == "xmin") {
        x = cap != "" ? cap / 1048576 : m[1]
        for (i = 1; i <= n; i++) if (m[i] < x) x = m[i]
        print x + 0; exit
    }
    if (want == "xmax") {
        x = cap != "" ? cap / 1048576 : 0
        for (i = 1; i <= n; i++) if (m[i] > x) x = m[i]
        print x; exit
    }
    # memory ascending (insertion sort: a chart holds tens of points)
    for (i = 1; i <= n; i++) order[i] = i
    for (i = 2; i <= n; i++) {
        k = order[i]
        for (j = i - 1; j >= 1 && m[order[j]] > m[k]; j--) order[j + 1] = order[j]
        order[j + 1] = k
    }
    print "mem_mib,step_ms,lo,hi,label,clean"
    for (r = 1; r <= n; r++) {
        i = order[r]
        if (want == "front") {
            beaten = 0
            for (j = 1; j <= n && !beaten; j++)
                if (j != i && m[j] <= m[i] && t[j] <= t[i] && (m[j] < m[i] || t[j] < t[i]))
                    beaten = 1
            if (beaten) continue
        }
        # (the parentheses keep > from reading as a redirection)
        printf "%.6g,%.6g,%.6g,%.6g,%s%s,%d\n", m[i], t[i], lo[i], hi[i], label[i],
               (n_dt > 1 ? " " dt[i] : ""), clean[i]
    }
}
