# Sourced by the end-to-end tests that start ranks: the test fails where
# mpirun is missing; Open MPI may run as root (a container's CI) and more
# ranks than cores; ASan's leak check stays off in the ranks (Open MPI's
# own allocations at exit); $MPIRUN starts ranks.
if ! command -v mpirun >/dev/null 2>&1; then
    echo "FAILED: mpirun not found: install openmpi-bin libopenmpi-dev (make does so as root)"
    exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
MPIRUN="mpirun --oversubscribe"
