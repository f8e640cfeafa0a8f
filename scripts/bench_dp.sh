#!/bin/sh
# `make bench-dp`: a profile under mpirun on the CPU backend, the ranks
# sharing the cores, into OUT_DIR.
#
#   sh scripts/bench_dp.sh ACCUBENCH OUT_DIR MPIRUN RANKS PROFILE [DEVICES]
#
# RANKS: the ranks mpirun starts; DEVICES: the device counts the sweep runs
# at (a comma list; default 1..RANKS). Every argument is data (make's
# knobs: scripts/knobs.sh); a count that is not one is one line, exit 2.
# Open MPI refuses to run as root unless told; a container's root is told
# here. Exit: the run's.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/knobs.sh"
bin=$1 out=$2 mpirun=$3 ranks=$4 profile=$5 devices=${6:-}
knob_count DP_RANKS "$ranks"
if [ -z "$devices" ]; then
    devices=$(seq -s, 1 "$ranks")
else
    knob_counts DP_DEVICES "$devices"
    # a device count is ranks: past DP_RANKS the program would refuse it
    # only once mpirun had started them all, inside mpirun's own banner
    rest=$devices
    while :; do
        [ "${rest%%,*}" -le "$ranks" ] ||
            knob_bad DP_DEVICES "$devices" "${rest%%,*} devices need ${rest%%,*} ranks; DP_RANKS is $ranks"
        case $rest in *,*) rest=${rest#*,} ;; *) break ;; esac
    done
fi
mkdir -p -- "$out" || exit 2
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
exec "$mpirun" -np "$ranks" "$bin" run --profile "$profile" --backend cpu --devices "$devices" \
    --out "$out"
