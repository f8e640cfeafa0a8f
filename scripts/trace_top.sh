#!/bin/sh
# Where a traced step's device time went, by kernel: the kernel events of
# a trace file that `accubench run --trace FILE` wrote (one step, Chrome
# trace events, one event a line), summed by name, largest first. C++
# names are demangled where c++filt is, and cut before their parameter
# list. Prints a line for the step, then the top N kernels (default 10)
# and one line for the rest:
#     ms  share  calls  kernel
# On the CPU backend a "kernel" is a dispatched operation (gemm,
# attention, ...). Exit 2: bad usage, an unreadable file, or no kernel
# events in it.
# Usage: scripts/trace_top.sh TRACE.json [N]
set -u
usage="usage: scripts/trace_top.sh TRACE.json [N]"
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "$usage" >&2; exit 2; }
file=$1 top=${2:-10}
case $top in '' | *[!0-9]* | 0) echo "trace_top: N must be a positive integer, got '$top'" >&2; exit 2 ;; esac
[ -f "$file" ] && [ -r "$file" ] || { echo "trace_top: cannot read $file" >&2; exit 2; }
demangle() { if command -v c++filt >/dev/null 2>&1; then c++filt; else cat; fi; }
config=$(sed -n 's/.*"config":"\([^"]*\)".*/\1/p' "$file" | head -n 1)
# "dur<TAB>name" per kernel event; the names summed first, demangled after
# (c++filt rewrites the mangled names inside each line it is given).
sums=$(sed -n 's/.*"name":"\(.*\)","cat":"kernel",.*"dur":\([0-9.]*\).*/\2	\1/p' "$file" |
    awk -F'\t' '{ ms[$2] += $1 / 1000; n[$2]++ } END { for (k in ms) printf "%.6f\t%d\t%s\n", ms[k], n[k], k }' |
    demangle | sed 's/\t\(void \)\{0,1\}\([^(\t]*\)(.*$/\t\2/' | sort -t'	' -k1,1 -g -r)
[ -n "$sums" ] || { echo "trace_top: no kernel events in $file" >&2; exit 2; }
echo "$sums" | awk -F'\t' -v top="$top" -v config="$config" '
    { ms[NR] = $1; n[NR] = $2; name[NR] = $3; total += $1; calls += $2 }
    END {
        printf "%.3f ms of device time in %d kernels%s\n", total, calls, config == "" ? "" : " (" config ")"
        printf "%10s %6s %6s  %s\n", "ms", "share", "calls", "kernel"
        for (i = 1; i <= NR && i <= top; i++)
            printf "%10.3f %5.1f%% %6d  %s\n", ms[i], 100 * ms[i] / total, n[i], name[i]
        for (i = top + 1; i <= NR; i++) { rest += ms[i]; rn += n[i]; kinds++ }
        if (kinds) printf "%10.3f %5.1f%% %6d  (%d other kernels)\n", rest, 100 * rest / total, rn, kinds
    }'
