# ratio.awk: a ratio as every answer of the program prints it,
# "1.089x [1.088..1.091]" (harness/util/ratio_text.c; its header says
# why): fixed decimals shared by the ratio and its bounds, three within 10%
# of 1, two elsewhere below 10, fewer above, up to two more where fewer
# would print a figure that is not 1 as "1.00" or the two bounds as one
# number, while the interval spans under ten units of the last decimal.
# The wall-clock chart's labels printed "%.2f" of their own: the report's
# 1.089x [1.088..1.091] read "1.09x [1.09..1.09]" beside its point.
# The program formats each figure as the CSV writes it, so the cells read
# here give its text.
#
# As a filter over pick.awk's rows (awk -f ratio.awk): each row with a last
# column, ratio: its vs_ref with vs_ref_lo..vs_ref_hi, empty where the row
# has no vs_ref. POSIX awk.
function ratio_floor(x) { return x == int(x) || x > 0 ? int(x) : int(x) - 1 }
function ratio_fixed(v, d) { return sprintf("%." d "f", v) }
function ratio_base(r,    e) {
    if (r > 0.9 && r < 1.1) return 3
    if (r >= 100) return 0
    if (r >= 10) return 1
    if (r >= 0.1 || !(r > 0)) return 2
    # floor(log10(r)), exact at a power of ten where log() / log(10) is not
    e = ratio_floor(log(r) / log(10))
    if (10 ^ (e + 1) <= r) e++
    if (10 ^ e > r) e--
    return 1 - e < 6 ? 1 - e : 6
}
function ratio_reads_one(v, d) { return v != 1 && ratio_fixed(v, d) == ratio_fixed(1, d) }
function ratio_reads_same(a, b, d) { return a != b && ratio_fixed(a, d) == ratio_fixed(b, d) }
# r, lo and hi as numbers; interval 0 where the row has no bounds.
function ratio_text(r, lo, hi, interval,    base, d) {
    if (interval && (r >= 1e6 || r < 1e-6))
        return sprintf("%.3gx [%.3g..%.3g]", r, lo, hi)
    if (r >= 1e6 || r < 1e-6)
        return sprintf("%.3gx", r)
    base = ratio_base(r)
    for (d = base; d < base + 2; d++) {
        if (interval && (hi - lo) * 10 ^ d >= 10)
            break
        if (!ratio_reads_one(r, d) &&
            !(interval && (ratio_reads_one(lo, d) || ratio_reads_one(hi, d) ||
                           ratio_reads_same(lo, hi, d))))
            break
    }
    if (!interval)
        return ratio_fixed(r, d) "x"
    return ratio_fixed(r, d) "x [" ratio_fixed(lo, d) ".." ratio_fixed(hi, d) "]"
}
BEGIN { FS = "," }
NR == 1 {
    for (i = 1; i <= NF; i++) col[$i] = i
    print $0 ",ratio"
    next
}
{
    r = ("vs_ref" in col) ? $(col["vs_ref"]) : ""
    lo = ("vs_ref_lo" in col) ? $(col["vs_ref_lo"]) : ""
    hi = ("vs_ref_hi" in col) ? $(col["vs_ref_hi"]) : ""
    print $0 "," (r == "" ? "" : ratio_text(r + 0, lo + 0, hi + 0, lo != "" && hi != ""))
}
