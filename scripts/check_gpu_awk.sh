# awk functions that check-gpu's scripts put before their own awk
# programs (sourced: `. "$here/check_gpu_awk.sh"`, then
# awk "$check_awk"'...'). A GPU image may have no python3, and its awk
# may be mawk or busybox's as well as gawk: these use only POSIX awk
# (no intervals in regular expressions, no gawk built-ins), and run under
# LC_ALL=C, so that a locale's decimal comma never reads a CSV's number.
#
#   cell(name)       the current line's value in column NAME, where a
#                    header line set col[NAME] = its index; "-" where the
#                    header has no such column (awk reads $col[NAME] for
#                    an unset NAME as $0, the whole line)
#   isnum(v)         v is a decimal number as the CSVs write them. An
#                    empty cell (a NaN or infinity, which the CSV writer
#                    leaves empty), "-", "nan" and "inf" are not: gawk
#                    reads those last two as 0, mawk as NaN and infinity.
#   num(fmt, v)      sprintf(fmt, v) for a number, else "-": a figure only
#                    from a number, never the 0 that awk makes of text
#   first_row(path, side)
#                    the first data row of a results CSV ('#' lines
#                    skipped, names from its header) into got[side, NAME];
#                    1, or 0 where the file has no data row or cannot be
#                    read
#   value(side, name)
#                    that row's value in column NAME, "-" where the header
#                    has none
# shellcheck shell=sh disable=SC2034,SC2016 # check_awk is the sourcing script's; awk's $ are awk's
check_awk='
function cell(name) { return (name in col) ? $col[name] : "-" }
function isnum(v) { return v ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/ }
function num(fmt, v) { return isnum(v) ? sprintf(fmt, v) : "-" }
function first_row(path, side,    line, n, i, c, head, names) {
    head = 0
    while ((getline line < path) > 0) {
        if (line ~ /^#/) continue
        sub(/\r$/, "", line)
        n = split(line, c, ",")
        if (!head) { for (i = 1; i <= n; i++) names[i] = c[i]; head = n; continue }
        for (i = 1; i <= head; i++) got[side, names[i]] = i <= n ? c[i] : ""
        close(path)
        return 1
    }
    close(path)
    return 0
}
function value(side, name) { return ((side, name) in got) ? got[side, name] : "-" }
'
