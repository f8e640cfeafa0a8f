#!/bin/sh
# Every ratio the program prints is the one formatter's (ratio_text.h):
# compare's new/base and the report's peer column carry the interval their
# verdict is drawn from, a ratio that is not 1 does not read as 1, and a
# ratio and its bounds share their decimals. Read back as numbers. And a
# range whose two ends are one figure is said as that figure.
set -u
root=$ACCUBENCH_ROOT
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }

# longer IN OUT: every step time of IN 0.5% longer (columns found by name)
longer() {
    awk -F, -v OFS=, '/^#/ { print; next }
        !h { for (i = 1; i <= NF; i++) if ($i ~ /^step_ms_(median|ci_lo|ci_hi|p10|p90)$/) s[i] = 1
             h = 1; print; next }
        { for (i in s) if ($i != "") $i = $i * 1.005; print }' "$1" >"$2"
}

# NEW: every step time of abc.csv 0.5% longer
cp "$root/tests/fixtures/abc.csv" base.csv
longer base.csv new.csv
"$ACCUBENCH" compare base.csv new.csv >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 0 ]' "compare of a 0.5% change inside the noise: exit $rc: $(cat err.txt)"
# the new/base cells: "R.RRRx [L.LLL..H.HHH]"
awk -F'|' 'NR == 1 { next } /^\| model/ { for (i = 1; i <= NF; i++) if ($i ~ /new\/base/) c = i; next }
    c && /^\| [^:-]/ { v = $c; gsub(/^ +| +$/, "", v); print v }' out.txt >cells.txt
check '[ "$(wc -l <cells.txt)" -eq 4 ]' "four ratio cells: $(cat out.txt)"
# each ratio reads as 1.005 (not "1x" or "1.00x"), its bounds apart and on
# either side of it, the three with as many decimals
awk '{
    if (!match($0, /^[0-9.]+x \[[0-9.]+\.\.[0-9.]+\]$/)) { print "not a ratio with its interval: " $0; bad = 1; next }
    split($0, p, /x \[|\.\.|\]/); r = p[1]; lo = p[2]; hi = p[3]
    if (r - 1.005 > 0.0006 || 1.005 - r > 0.0006) { print "ratio " r " is not 1.005: " $0; bad = 1 }
    if (!(lo + 0 < hi + 0) || !(lo + 0 <= r + 0) || !(r + 0 <= hi + 0)) { print "bounds: " $0; bad = 1 }
    d = length(r) - index(r, ".")
    if (length(lo) - index(lo, ".") != d || length(hi) - index(hi, ".") != d) { print "decimals differ: " $0; bad = 1 }
} END { exit bad }' cells.txt >bad.txt
check '[ ! -s bad.txt ]' "compare's ratios: $(cat bad.txt)"

# The report's peer table: the peer's time over accubench's, with its interval
{ grep '^#' base.csv; echo "# peers: torch"; grep -v '^#' base.csv
  grep -v '^#' new.csv | tail -n +2 | sed 's/^cuda,/torch,/'; } >peers.csv
"$ACCUBENCH" report peers.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "report of a file with a peer: $(cat err.txt)"
sed -n '/^## Against torch/,/^## [^A]/p' peers.md | awk -F'|' '/^\| micro x K/ { t = 1; next }
    t && !/^\|/ { exit } t && /^\| [^:-]/ { v = $(NF - 1); gsub(/^ +| +$/, "", v); print v }' >peer.txt
check '[ "$(wc -l <peer.txt)" -eq 4 ] && [ "$(grep -c "^1\.005x \[" peer.txt)" -eq 4 ]' \
    "the peer column: $(cat peer.txt)"
# no torch_* lines in the file: a line says so, never a table of headers alone
sed -n '/^## Against torch/,/^## [^A]/p' peers.md >against.txt
check '! grep -q "^| peer " against.txt && grep -q "^The CSV records nothing about torch (no torch_version line" against.txt' \
    "a peer without metadata: $(grep -A2 "peer \|records" against.txt)"

# The same 0.5% with bands too narrow to hide it: not noise, but under the
# 2% threshold, so "the same within 2%", and counted so
awk -F, -v OFS=, '/^#/ { print; next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; print; next }
    { m = $c["step_ms_median"]; $c["step_ms_ci_lo"] = m * 0.999; $c["step_ms_ci_hi"] = m * 1.001
      $c["step_ms_p10"] = m * 0.999; $c["step_ms_p90"] = m * 1.001; print }' base.csv >narrow.csv
longer narrow.csv narrow_new.csv
"$ACCUBENCH" compare narrow.csv narrow_new.csv >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 0 ] && [ "$(grep -c "| the same within 2% *|$" out.txt)" -eq 4 ]' \
    "a 0.5% change the noise does not hide reads the same within 2% (exit $rc): $(cat out.txt err.txt)"
check 'grep -q "^compare: 4 configs in both: 0 slower, 0 faster, 4 the same within 2%, 0 not yet separated at this noise;" out.txt' \
    "the summary counts them: $(tail -n 1 out.txt)"

# A range of one value is said as the value: every probe beside the
# configs read 500 TFLOP/s, and the report says "500.0 TFLOP/s", not
# "500.0 to 500.0"
awk -F, -v OFS=, '/^#/ { print; next }
    !h { for (i = 1; i <= NF; i++) if ($i ~ /^probe_tflops_(before|after)$/) s[i] = 1
         h = 1; print; next }
    { for (i in s) $i = 500; print }' base.csv >probes.csv
"$ACCUBENCH" report probes.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "report of one probe figure: $(cat err.txt)"
check 'grep -q "beside each config (its MFU.s peak): 500.0 TFLOP/s;" probes.md' \
    "one probe figure said once: $(grep -o "beside each config[^;]*" probes.md)"

exit $fail
