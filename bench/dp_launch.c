#include "dp_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "sync_modes.h"

#ifdef ACCUBENCH_HAVE_MPI
#include "mpi_comm.h"
#define BUILD_NOTE ""
#else
#define BUILD_NOTE "  (this accubench was built without MPI: install libopenmpi-dev and rebuild)"
#endif

/* The first of the launchers' variables (Open MPI, MPICH/Hydra, Slurm's
 * PMI) set to a positive number; 0 when none is. */
static int launcher_value(const char *const keys[3])
{
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(keys[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
    return 0;
}

/* The ranks the launcher says it started, 0 when no launcher started this
 * process. */
static int launcher_size(void)
{
    static const char *const keys[3] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    return launcher_value(keys);
}

int dp_launch_env_rank(void)
{
    static const char *const keys[3] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    return launcher_value(keys);
}

/* Open MPI refuses to start as root unless told twice that it is meant:
 * the hint says how, so that it runs as typed. */
static const char *root_flag(void)
{
    return geteuid() == 0 ? " --allow-run-as-root" : "";
}

static const char *root_note(void)
{
    return geteuid() == 0 ? "  (as root, Open MPI needs --allow-run-as-root, or "
                            "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 set)"
                          : "";
}

/* The first --shard value that cuts the state over ranks, or NULL. */
static const char *shard_needing_ranks(const run_options *o)
{
    for (int i = 0; i < o->n_shards; i++)
        if (shard_info_of(o->shards[i])->slices_state)
            return shard_name(o->shards[i]);
    return NULL;
}

/* The first --sync value whose all-reduce differs from one after the
 * window, or NULL: on one rank there is nothing to all-reduce, so such a
 * row would read as the default's. */
static const char *sync_needing_ranks(const run_options *o)
{
    for (int i = 0; i < o->n_syncs; i++) {
        const sync_info *s = sync_info_of(o->syncs[i]);
        if (s->every != SYNC_EVERY_WINDOW || s->buckets_in_backward)
            return sync_name(o->syncs[i]);
    }
    return NULL;
}

static int most_devices(const run_options *o)
{
    int most = 1;
    for (int i = 0; i < o->n_devices; i++)
        most = o->devices[i] > most ? o->devices[i] : most;
    return most;
}

#ifdef ACCUBENCH_HAVE_MPI
/* This rank's device and share of the cores, before the backend opens. */
static void share_machine(const dp_launch *l)
{
    char text[32];
    snprintf(text, sizeof text, "%d", l->local_rank);
    setenv("ACCUBENCH_DEVICE_INDEX", text, 1);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long share = cores > 0 ? cores / l->local_size : 1;
    snprintf(text, sizeof text, "%ld", share < 1 ? 1 : share);
    setenv("ACCUBENCH_CPU_THREADS", text, 0);
}
#endif

/* A sliced --shard with no launcher, where the backend has no one-rank
 * engine: how to run it under mpirun. */
static int refuse_sliced(const char *sliced, const char *cmdline)
{
    fprintf(stderr, "accubench: --shard %s cuts the state over ranks, one per device: "
            "run it under mpirun, as  mpirun -np 2%s %s%s%s\n", sliced, root_flag(),
            cmdline, root_note(), BUILD_NOTE);
    return 2;
}

/* Started without a launcher: fine for one device and no sliced state;
 * sliced state on one device waits for the backend (its one-rank engine,
 * dp_launch_world); --dump (one process's window, unsliced) with what
 * needs ranks is refused; else says how to run it under mpirun. Returns
 * the exit code. */
static int refuse_without_launcher(run_options *o, const char *cmdline, int most,
                                   dp_launch *out)
{
    const char *sliced = shard_needing_ranks(o);
    const char *sync = sync_needing_ranks(o);
    /* --dump is refused under mpirun (one process's window): the mpirun
     * command the lines below would suggest would be refused in turn */
    if (o->dump_dir[0] && (sliced || sync || most > 1)) {
        char what[64];
        if (sliced)
            snprintf(what, sizeof what, "--shard %s", sliced);
        else if (sync)
            snprintf(what, sizeof what, "--sync %s", sync);
        else
            snprintf(what, sizeof what, "--devices %d", most);
        fprintf(stderr, "accubench: --dump %s writes one process's window, without ranks, and "
                "%s needs ranks under mpirun: run them apart\n", o->dump_dir, what);
        return 2;
    }
    if (sliced && most == 1) {
        out->solo_shard = sliced;
        out->cmdline = cmdline;
        if (o->n_devices == 0) /* the one rank, as mpirun's count is its ranks */
            o->devices[o->n_devices++] = 1;
        return 0;
    }
    if (sliced)
        return refuse_sliced(sliced, cmdline);
    if (sync && most == 1) {
        fprintf(stderr, "accubench: --sync %s schedules the all-reduce between ranks, one per "
                "device: run it under mpirun, as  mpirun -np 2%s %s%s%s\n", sync, root_flag(),
                cmdline, root_note(), BUILD_NOTE);
        return 2;
    }
    if (most > 1) {
        fprintf(stderr, "accubench: --devices %d needs %d ranks, one per device: run it as  "
                "mpirun -np %d%s %s%s%s\n", most, most, most, root_flag(), cmdline,
                root_note(), BUILD_NOTE);
        return 2;
    }
    return 0;
}

#ifdef ACCUBENCH_HAVE_MPI
/* ACCUBENCH_RANK_WAIT_S, when set: how long a rank waits for the others
 * in one collective (mpi_launch_wait_limit). 0, or -1 with the reason. */
static int read_wait_limit(char *why, size_t why_len)
{
    const char *text = getenv("ACCUBENCH_RANK_WAIT_S");
    double seconds = 0;
    if (!text)
        return 0;
    if (parse_real("ACCUBENCH_RANK_WAIT_S (seconds a rank waits for the others, 0 for ever)",
                   text, 0, 1e9, &seconds, why, why_len))
        return -1;
    mpi_launch_wait_limit(seconds);
    return 0;
}

/* Why this rank cannot run under mpirun (too few ranks for --devices, a
 * bad ACCUBENCH_RANK_WAIT_S, --dump), into why; 0 when it can. Read from
 * this rank's own options and environment, which a wrapper may give each
 * rank apart. */
static int refusal(const run_options *o, const mpi_launch *l, const char *cmdline, int most,
                   char *why, size_t why_len)
{
    if (most > l->size) {
        snprintf(why, why_len, "--devices %d needs %d ranks but mpirun started %d: run it as  "
                 "mpirun -np %d %s", most, most, l->size, most, cmdline);
        return 1;
    }
    if (read_wait_limit(why, why_len))
        return 1;
    if (o->dump_dir[0]) {
        /* The dump is one process's window, checked against one process's
         * full batch: under mpirun every rank would write it. */
        snprintf(why, why_len, "--dump %s writes one process's window: run it without mpirun",
                 o->dump_dir);
        return 1;
    }
    return 0;
}

/* Started under mpirun: joins the ranks, refuses what one rank per device
 * cannot do (too few ranks for --devices, --dump), and sets this rank up.
 * Returns the exit code; MPI is finalized again on a refusal. */
static int join_ranks(int *argc, char ***argv, run_options *o, const char *cmdline, int most,
                      dp_launch *out)
{
    mpi_launch l;
    char why[2400];
    if (mpi_launch_init(argc, argv, &l, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    *out = (dp_launch){.launched = 1, .rank = l.rank, .size = l.size,
                       .local_rank = l.local_rank, .local_size = l.local_size};
    /* Every rank refuses, or none: a rank that finalized alone would leave
     * the others waiting in their first collective for ever. The first
     * rank that refuses says why, once. */
    int first = mpi_launch_first_refusal(refusal(o, &l, cmdline, most, why, sizeof why));
    if (first >= 0) {
        if (l.rank == first && first == 0)
            fprintf(stderr, "accubench: %s\n", why);
        else if (l.rank == first)
            fprintf(stderr, "accubench: rank %d of %d: %s\n", l.rank, l.size, why);
        mpi_launch_finalize();
        return 2;
    }
    if (o->n_devices == 0)
        o->devices[o->n_devices++] = l.size;
    if (l.rank != 0)
        o->quiet = 1; /* rank 0 speaks for every rank */
    share_machine(out);
    return 0;
}
#endif

int dp_launch_start(int *argc, char ***argv, run_options *o, const char *cmdline,
                    dp_launch *out)
{
    memset(out, 0, sizeof *out);
    out->size = out->local_size = 1;
    int launched = launcher_size(), most = most_devices(o);
    if (!launched)
        return refuse_without_launcher(o, cmdline, most, out);
#ifdef ACCUBENCH_HAVE_MPI
    return join_ranks(argc, argv, o, cmdline, most, out);
#else
    (void)argc;
    (void)argv;
    (void)o;
    if (launched > 1) {
        fprintf(stderr, "accubench: started as one of %d ranks, but this accubench was built "
                "without MPI and each would run alone: install libopenmpi-dev and rebuild\n",
                launched);
        return 2;
    }
    return 0;
#endif
}

int dp_launch_world(const dp_launch *l, const backend_entry *e, backend *b, comm **out)
{
    *out = NULL;
    char why[400];
    if (!l->launched && !l->solo_shard)
        return 0;
    if (!l->launched) {
        if (!e->comm_solo)
            return refuse_sliced(l->solo_shard, l->cmdline);
        if (e->comm_solo(b, out, why, sizeof why) == BK_OK)
            return 0;
        fprintf(stderr, "accubench: one rank of %s alone: %s\n", e->name, why);
        return 2;
    }
    if (!e->comm_world) {
        snprintf(why, sizeof why, "the %s backend has no all-reduce engine: %s", e->name,
                 e->comm_absent);
    } else if (e->comm_world(b, out, why, sizeof why) == BK_OK) {
        return 0;
    }
    fprintf(stderr, "accubench: rank %d of %d: %s\n", l->rank, l->size, why);
    return 2;
}

int dp_launch_fail(const dp_launch *l, int code)
{
#ifdef ACCUBENCH_HAVE_MPI
    if (l->launched)
        mpi_launch_abort(code);
#else
    (void)l;
#endif
    return code;
}

void dp_launch_end(const dp_launch *l, comm *world)
{
    if (world)
        world->ops->destroy(world);
#ifdef ACCUBENCH_HAVE_MPI
    if (l->launched)
        mpi_launch_finalize();
#else
    (void)l;
#endif
}
