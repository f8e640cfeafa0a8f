# Sourced by the tests that name files and folders with code
# (e2e_plots_hostile.sh, e2e_report_hostile.sh): sets the positional
# parameters to eight names, each of which would run `touch $PN` if any
# layer pasted it into code: sh, gnuplot -e, a gnuplot string, a shell
# command gnuplot builds, awk. Exports P1..P12, each naming a file PWNED-N
# in the current folder whatever folder the command would run in (a name
# cannot hold the '/' of a path); the tests end by finding none.
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do export "P$n=$PWD/PWNED-$n"; done
nl='
'
set -- "q'.system(\"touch \$P1\").'" \
       "dq\".system(\"touch \$P2\").\"" \
       "sub\$(touch \$P3)" \
       "semi;touch \$P4;" \
       "back\\slash'\\\`touch \$P5\`" \
       "nl${nl}x';system('touch \$P6');'" \
       "sp ace'|touch \$P7|'" \
       "@macro'; !touch \$P8
'"
