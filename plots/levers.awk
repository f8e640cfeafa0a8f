# levers.awk: the levers beside accumulation a chart's label names, from
# the results CSV's `# levers:` line, which accubench writes from its own
# table of them (harness/results/levers.c), one lever after another:
#
#   # levers: recompute=none "recompute" keyed; shard=none "shard" keyed; grad_dtype=fp32 "gradient in"
#
# each its column, its default, the words a chart says it by, and "keyed"
# where a label that spells out a series' key names it even at its
# default. A chart script loads this file (awk -f levers.awk -f ...), calls
# levers_read with the line's value, and names a row's levers with
# levers_said, never a lever of its own:
#   levers_read(line)   nlever, lever_col[i], lever_off[i], lever_title[i],
#                       lever_keyed[i], from the line; "" (a file from
#                       before it) reads as the levers such a file ran
#                       with, below: a lever added since has no column there
#   lever_set(i, v)     v sets its row apart: neither empty nor the default
#   levers_said(at, sep, only)
#                       sep TITLE VALUE for each lever of the current row
#                       that sets it apart, in the line's order; `at` maps
#                       the header's names to fields (a column the file
#                       lacks: not given). only = "keyed" or "unkeyed": those
#                       alone, a keyed one wherever its cell is not empty
#   levers_key(at)      every lever's cell of the current row, joined: what
#                       tells two series of the same other columns apart
# POSIX awk only.
function levers_read(line,    n, item, i, q1, q2, head, eq) {
    if (line == "")
        line = "recompute=none \"recompute\" keyed; shard=none \"shard\" keyed; grad_dtype=fp32 \"gradient in\""
    nlever = 0
    n = split(line, item, ";")
    for (i = 1; i <= n; i++) {
        q1 = index(item[i], "\"")
        q2 = q1 ? q1 + index(substr(item[i], q1 + 1), "\"") : 0
        head = q1 ? substr(item[i], 1, q1 - 1) : ""
        gsub(/^[ \t]+|[ \t]+$/, "", head)
        eq = index(head, "=")
        if (q2 <= q1 || eq < 2) continue # not a lever: a later version's part, read past
        nlever++
        lever_col[nlever] = substr(head, 1, eq - 1)
        lever_off[nlever] = substr(head, eq + 1)
        lever_title[nlever] = substr(item[i], q1 + 1, q2 - q1 - 1)
        gsub(/,/, " ", lever_title[nlever]) # a label is a field of frontier.awk's CSV
        lever_keyed[nlever] = substr(item[i], q2 + 1) ~ /(^|[ \t])keyed([ \t]|$)/
    }
}
function lever_set(i, v) { return v != "" && v != lever_off[i] }
function levers_said(at, sep, only,    i, v, t) {
    t = ""
    for (i = 1; i <= nlever; i++) {
        if (only != "" && lever_keyed[i] != (only == "keyed")) continue
        v = (lever_col[i] in at) ? $(at[lever_col[i]]) : ""
        if (only == "keyed" ? v != "" : lever_set(i, v)) t = t sep lever_title[i] " " v
    }
    return t
}
function levers_key(at,    i, k) {
    k = ""
    for (i = 1; i <= nlever; i++) k = k SUBSEP ((lever_col[i] in at) ? $(at[lever_col[i]]) : "")
    return k
}
