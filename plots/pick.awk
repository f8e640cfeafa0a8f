# pick.awk: what the chart scripts ask of an accubench CSV, by column name.
#
#   awk -f split.awk -f levers.awk -f pick.awk -v want=WHAT [-v where=FILTER] [-v col=NAME]
#       [-v key=K] [-v levers=LINE] FILE.csv
#
# FILTER is `name=value` or `name!=value` terms joined by `;` ("status=ok;
# effective_batch=256"); `name!=` means "not empty", i.e. measured. A value
# may hold `;` and `=` itself (a custom model, "gpt:d=32;layers=2;..." as
# the CSV writes it): after a value with a ":", a piece `key=N` whose key
# is no column's name continues that value.
# WHAT:
#   meta      the value of metadata line `# KEY: value`
#   rows      the header and the rows matching FILTER (what gnuplot plots),
#             each with a last column, split: how the split is written
#             (split.awk, loaded before this file)
#   distinct  the distinct values of COL in matching rows, in file order
#             (with -v max=N: the first N of them)
#   ndistinct how many distinct values COL has in matching rows
#   most      the value of COL with the most distinct values of PER (-v
#             per=NAME) in matching rows (ties: the first in the file)
#   count     how many matching rows have COL measured (not empty)
#   common    the most frequent value of COL in matching rows (ties: larger)
#   range     "LO HI": the least and greatest positive value of the columns
#             named in -v cols="A B ..." over matching rows (nothing when
#             none): the extent of a log axis
#   notrun    "model SPLIT mode: status" (split.awk) for matching rows that are
#             not ok, joined by "; " (so a chart can say what is missing);
#             the first six, then "and N more"
#   repeats   how many matching rows are a config run again (below)
#   lever_sets the distinct sets of lever values (levers.awk) of matching
#             rows, in file order (with -v max=N: the first N), each one
#             word: a FILTER of every lever column the file has,
#             "recompute=gelu;shard=;grad_dtype=fp32"; "-" for a file with
#             none of them. A chart draws rows of one set at a time: two
#             sets are two configs, never one line through both.
#   lever_title the words that say set KEY (one of lever_sets') among the
#             sets of matching rows: " TITLE VALUE" for each lever whose
#             value differs among them ("-" for an empty cell) or is not
#             its default; nothing for defaults alone in one set
#   series    what sets a series of a goodput table (plan --time-to-target
#             --table or --curve-table, FILTER "series=N") apart from
#             another of its model, from its first matching row's key
#             columns: "async, cpu, fp32, 2 devices, sync window", the
#             defaults left unsaid; nothing from a table older than them.
#             Its levers are those of LINE, the `# levers:` line of the CSV
#             the table is of (levers.awk; the file's own where not given)
# A row equal to an earlier one in every column the `# config_key:` line
# names is its config run again (--append), whatever FILTER says of the
# earlier one: every WHAT reads a config's first row only, as the report,
# compare and plan do, and `repeats` counts the rows so left out. A file without that line (from before it) is read
# whole.
# POSIX awk only (mawk, gawk and busybox all run it).
BEGIN { FS = "," }
# The FILTER's terms, once the header has named the columns: each split at
# its first operator, so that a value keeps its own `=`.
# A goodput table's series in words (want=series), from the current row.
function series_key(    t) {
    t = $(colnum["mode"]) ", " $(colnum["backend"]) ", " $(colnum["dtype"])
    if ($(colnum["devices"]) + 0 > 1) t = t ", " ($(colnum["devices"]) + 0) " devices"
    if ($(colnum["sync"]) != "") t = t ", sync " $(colnum["sync"])
    return t levers_said(colnum, ", ", "")
}
# The current row's lever_sets word.
function lever_fragment(    i, f) {
    f = ""
    for (i = 1; i <= nlever; i++)
        if (lever_col[i] in colnum)
            f = f (f == "" ? "" : ";") lever_col[i] "=" $(colnum[lever_col[i]])
    return f == "" ? "-" : f
}
function parse_where(    n, piece, i, eq, ne, name, at) {
    n = split(where, piece, ";")
    nterms = 0
    for (i = 1; i <= n; i++) {
        eq = index(piece[i], "="); ne = index(piece[i], "!=")
        at = ne && ne < eq ? ne : eq
        name = at ? substr(piece[i], 1, at - 1) : ""
        if (nterms && index(tval[nterms], ":") && !(name in colnum) &&
            piece[i] ~ /^[a-z_]+=[0-9]+$/) { # the shape before goes on
            tval[nterms] = tval[nterms] ";" piece[i]
            continue
        }
        nterms++
        term[nterms] = piece[i]
        tname[nterms] = name
        tneg[nterms] = at == ne && ne > 0
        tval[nterms] = substr(piece[i], at + (tneg[nterms] ? 2 : 1))
    }
}
/^#/ {
    line = $0
    if (!header && sub(/^#[ \t]*config_key:[ \t]*/, "", line)) {
        sub(/[ \t\r]+$/, "", line)
        nkey = split(line, keyname, " ")
    }
    line = $0
    if (!header && sub(/^#[ \t]*levers:[ \t]*/, "", line)) {
        sub(/[ \t\r]+$/, "", line)
        file_levers = line
    }
    if (want == "meta" && !header) {
        line = substr($0, 2)
        sub(/^[ \t]+/, "", line)
        if (index(line, key ":") == 1) {
            v = substr(line, length(key) + 2)
            sub(/^[ \t]+/, "", v); sub(/[ \t\r]+$/, "", v)
            if (!found) { found = 1; print v }
        }
    }
    next
}
/^[ \t\r]*$/ { next }
!header {
    header = 1
    sub(/\r$/, "")
    for (i = 1; i <= NF; i++) colnum[$i] = i
    for (i = 1; i <= nkey; i++) if (!(keyname[i] in colnum)) nkey = 0 # not this header's line
    levers_read(levers != "" ? levers : file_levers)
    parse_where()
    if (want == "rows") print $0 ",split"
    next
}
{
    sub(/\r$/, "")
    again = 0
    if (nkey) {
        k = ""
        for (i = 1; i <= nkey; i++) k = k SUBSEP $(colnum[keyname[i]])
        again = k in config_seen
        config_seen[k] = 1
    }
    for (i = 1; i <= nterms; i++) {
        if (term[i] == "") continue
        v = (tname[i] in colnum) ? $(colnum[tname[i]]) : ""
        if (tneg[i] ? v == tval[i] : v != tval[i]) next
    }
    if (again) { repeats++; next }
    c = (col in colnum) ? $(colnum[col]) : ""
    if (want == "rows")
        print $0 "," split_text($(colnum["micro_batch"]), $(colnum["accum_steps"]),
                                ("last_micro_batch" in colnum) ? $(colnum["last_micro_batch"]) : "")
    else if (want == "count") { if (c != "") n++ }
    else if (want == "distinct" || want == "ndistinct") {
        if (c != "" && !(c in seen)) {
            seen[c] = 1
            if (want == "distinct" && (max == "" || nd < max + 0)) list = list (list == "" ? "" : " ") c
            nd++
        }
    } else if (want == "most") {
        p = (per in colnum) ? $(colnum[per]) : ""
        if (c != "" && p != "" && !((c, p) in pair)) {
            pair[c, p] = 1
            if (++kinds[c] > best_n) { best = c; best_n = kinds[c] }
        }
    } else if (want == "common") {
        if (c != "") {
            freq[c]++
            if (freq[c] > best_n || (freq[c] == best_n && c + 0 > best + 0)) { best = c; best_n = freq[c] }
        }
    } else if (want == "range") {
        nc = split(cols, cn, " ")
        for (i = 1; i <= nc; i++) {
            if (!(cn[i] in colnum)) continue
            v = $(colnum[cn[i]])
            if (v == "" || v + 0 <= 0) continue
            v += 0
            if (!have || v < lo) lo = v
            if (!have || v > hi) hi = v
            have = 1
        }
    } else if (want == "lever_sets") {
        c = lever_fragment()
        if (!(c in seen)) {
            seen[c] = 1
            if (max == "" || nd < max + 0) list = list (list == "" ? "" : " ") c
            nd++
        }
    } else if (want == "lever_title") {
        for (i = 1; i <= nlever; i++)
            if ((lever_col[i] in colnum) && !((i, $(colnum[lever_col[i]])) in lever_seen)) {
                lever_seen[i, $(colnum[lever_col[i]])] = 1
                lever_kinds[i]++
            }
    } else if (want == "series") {
        if (!said++ && ("mode" in colnum) && $(colnum["mode"]) != "") print series_key()
    } else if (want == "notrun") {
        if ($(colnum["status"]) != "ok") {
            s = $(colnum["model"]) " " split_text($(colnum["micro_batch"]), $(colnum["accum_steps"]),
                    ("last_micro_batch" in colnum) ? $(colnum["last_micro_batch"]) : "") \
                " " $(colnum["mode"]) ": " $(colnum["status"])
            if (++nr <= 6) list = list (list == "" ? "" : "; ") s
        }
    }
}
END {
    if (want == "count") print n + 0
    else if (want == "repeats") print repeats + 0
    else if (want == "distinct" || want == "lever_sets") print list
    else if (want == "lever_title") {
        n = split(key, kv, ";")
        for (i = 1; i <= n; i++) {
            eq = index(kv[i], "=")
            key_value[substr(kv[i], 1, eq - 1)] = substr(kv[i], eq + 1)
        }
        t = ""
        for (i = 1; i <= nlever; i++)
            if ((lever_col[i] in key_value) &&
                (lever_kinds[i] > 1 || lever_set(i, key_value[lever_col[i]])))
                t = t " " lever_title[i] " " (key_value[lever_col[i]] == "" ? "-" : key_value[lever_col[i]])
        print t
    }
    else if (want == "ndistinct") print nd + 0
    else if (want == "most") print best
    else if (want == "notrun") print list (nr > 6 ? sprintf("; and %d more", nr - 6) : "")
    else if (want == "common") print best
    else if (want == "range") { if (have) printf "%.9g %.9g\n", lo, hi }
}
