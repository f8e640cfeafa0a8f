# split.awk: how a chart writes a split, as the console table, the CSV's
# note and the report do (harness/results/split_text.c; its header says
# why): "16x4" where micro x K is the examples, else led by K with the
# passes summed, "K=3: 24+24+16", past four passes or 14 characters with
# the equal ones counted, "K=11: 24x10+16". A ragged split written "24x3"
# read as 72 examples at E = 64. Loaded before the script that uses it
# (awk -f split.awk -f pick.awk); POSIX awk.
function split_text(micro, accum, last,    s, k) {
    if (last == "" || last + 0 <= 0 || last + 0 == micro + 0 || accum + 0 < 2)
        return micro "x" accum
    s = "K=" accum ": "
    for (k = 1; k <= accum + 0 && length(s) <= 14; k++)
        s = s (k == accum + 0 ? last : micro) (k == accum + 0 ? "" : "+")
    if (accum + 0 <= 4 && length(s) <= 14)
        return s
    return "K=" accum ": " micro "x" (accum - 1) "+" last
}
