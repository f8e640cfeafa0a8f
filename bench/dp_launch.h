/* Data parallel from the program's side: whether mpirun started this
 * process, MPI's start and end, --devices checked against the ranks, each
 * rank's share of the machine, and the all-reduce engine of the backend's
 * row. Without MPI in the build, one process, and --devices above 1 says
 * how to run it. */
#ifndef ACCUBENCH_DP_LAUNCH_H
#define ACCUBENCH_DP_LAUNCH_H

#include "backend_registry.h"
#include "options.h"

typedef struct dp_launch {
    int launched;               /* MPI started: the ranks below are real */
    int rank, size;
    int local_rank, local_size; /* on this node */
    /* No launcher, and --shard SOLO_SHARD cuts the state over ranks on one
     * device: one rank of the backend's own (backend_entry.comm_solo), or
     * the refusal that says to run it under mpirun. */
    const char *solo_shard;
    const char *cmdline; /* the command as typed, for that refusal */
} dp_launch;

/* The rank the launcher gave this process (Open MPI, MPICH/Hydra, Slurm's
 * PMI), 0 when no launcher started it: read before MPI starts, so that a
 * refusal of the command line, the same on every rank, is said by rank 0
 * alone. */
int dp_launch_env_rank(void);

/* Before the backend is opened: starts MPI when mpirun started this
 * process, checks --devices against the ranks (every count at most the
 * ranks launched; none given: all of them), and gives this rank its
 * device (ACCUBENCH_DEVICE_INDEX) and its share of the cores
 * (ACCUBENCH_CPU_THREADS, unless set). 0, or 2 after one line on stderr
 * (rank 0's) saying what to do. `cmdline` is the command as typed, the program by its own path
 * (build/accubench), so that the hint runs as it is written. */
int dp_launch_start(int *argc, char ***argv, run_options *o, const char *cmdline,
                    dp_launch *out);

/* The engine of e's row over every rank, on b; NULL when not launched,
 * unless a sliced --shard asks for one rank alone (solo_shard): then e's
 * one-rank engine, or 2 where it has none. 0, or 2 after one line on
 * stderr. */
int dp_launch_world(const dp_launch *l, const backend_entry *e, backend *b, comm **out);

/* A rank that cannot go on before the engine exists (the backend, the
 * engine itself): under mpirun the whole job ends with `code` (the other
 * ranks would wait for this one in a collective); alone, returns code. */
int dp_launch_fail(const dp_launch *l, int code);

/* Destroys the engine and ends MPI (when launched). */
void dp_launch_end(const dp_launch *l, comm *world);

#endif
