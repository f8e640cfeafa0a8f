/* What `accubench run` is asked to do. Profiles and the command line set
 * the same keys through options_set(): one vocabulary, one parser. */
#ifndef ACCUBENCH_OPTIONS_H
#define ACCUBENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "csv_existing.h"
#include "dataset.h"
#include "grad_dtype.h"
#include "lr_grid.h"
#include "model_kind.h"
#include "modes.h"
#include "option_table.h"
#include "paired.h"
#include "shard_modes.h"
#include "sync_modes.h"

#define OPT_MAX_LIST 32
/* --rounds auto: wherever a run holds a comparison (rounds.h); at most
 * ROUNDS_MAX (the round_ms cell keeps each). */
#define ROUNDS_AUTO (-1)
#define ROUNDS_MAX PAIRED_LAST_LOOK /* the interval holds over looks to it */

typedef struct run_options {
    char profile[256];
    int effective[OPT_MAX_LIST], n_effective;
    int micro[OPT_MAX_LIST], n_micro;
    int micro_pow2;                         /* every power of two up to E, and E */
    model_spec models[OPT_MAX_LIST];
    int n_models;
    /* What the GEMMs compute in, an axis of the sweep: each config runs in
     * each. One DTYPE_AUTO: the backend's own (resolved when it opens). */
    dtype dtypes[OPT_MAX_LIST];
    int n_dtypes;
    exec_mode modes[OPT_MAX_LIST];          /* as given, then duplicates dropped */
    int n_modes;
    reduction reductions[OPT_MAX_LIST];
    int n_reductions;
    optimizer_config optimizer;
    int optimizer_at_auto;                  /* optimizer.at is the backend's own */
    char backend[32];                       /* auto or a backend's name */
    int steps;                              /* fixed timed steps; 0 = adaptive */
    int warmup;
    int min_samples, max_samples;
    double budget_s;                        /* timing budget per config */
    double max_noise_pct;                   /* stop when the noise is under this */
    double max_step_s;                      /* skip configs whose step takes longer */
    int rounds;                             /* interleaved rounds: ROUNDS_AUTO, 0 = off, N */
    uint64_t seed;
    int buffers;                            /* input buffers rotated */
    uint64_t mem_cap;                       /* 0 = none */
    char out_dir[1024];
    char csv_path[1024];                    /* explicit file; "" = named in out_dir */
    int append, replace;                    /* an existing --csv: add to it, or replace it */
    char trace_path[1024];                  /* --trace: one step as Chrome JSON */
    char dump_dir[1024];                    /* --dump: the first config's window */
    int trace_steps;                        /* steps in the trace pass; 0 = none */
    int noise_windows;                      /* windows of the noise scale; 0 = none */
    int train_steps;                        /* steps of the loss curves; 0 = none */
    lr_grid lr_grid;                        /* --lr-grid: the curves' learning rates */
    int no_cupti;
    int quiet;
    int quiet_progress;                     /* quiet's stdout, and the progress on stderr
                                             * still (plan --recommend's measuring) */
    char note[600];                         /* what was dropped (duplicates), for stderr */
    /* Data parallel: each device count runs on the first that many ranks
     * (n_devices 0: every rank launched); when the all-reduce runs. */
    int devices[OPT_MAX_LIST], n_devices;
    sync_mode syncs[OPT_MAX_LIST];
    int n_syncs;
    recompute recomputes[OPT_MAX_LIST];     /* what the backward recomputes */
    int n_recomputes;
    shard_mode shards[OPT_MAX_LIST]; /* what each rank keeps of the state */
    int n_shards;
    grad_dtype grad_dtypes[OPT_MAX_LIST]; /* what the accumulated gradient is held in */
    int n_grad_dtypes;
} run_options;

/* Where the options keep a list-valued axis (--dtype, --mode, --reduction, --sync,
 * --shard, --recompute, --grad-dtype): its table's descriptor, the offsets of its array
 * and count in run_options, the array's length. The option parser fills
 * the list through it, the sweep's iterator reads it (config.h). */
typedef struct axis_option {
    const axis *ax;
    size_t list, count;
    int cap;
} axis_option;

extern const axis_option options_dtypes, options_modes, options_reductions, options_syncs,
    options_shards, options_recomputes, options_grad_dtypes;

/* Every option of `accubench run`, one row each (options.c): the parser,
 * the usage text, the profiles, plan's shared keys and the tests read it. */
extern const option_table run_option_table;

/* What the program adds to a row's usage line from its backend table
 * (option_def.tag): the backends' names, what auto picks on each. */
enum run_option_tag {
    RUN_TAG_NONE = 0,
    RUN_TAG_BACKEND,
    RUN_TAG_AUTO_DTYPE,
    RUN_TAG_AUTO_OPTIMIZER_AT,
};

/* The table's defaults, and the optimizer's constants. */
void options_defaults(run_options *o);

/* Sets one key ("micro", "effective", ...) from its text (the table's
 * row). Returns 0, or -1 with a one-line reason naming the key; an unknown
 * key or value says "did you mean" the nearest known one. */
int options_set(run_options *o, const char *key, const char *value, char *why,
                size_t why_len);

/* Keys that take no value (flags such as no-cupti). */
int options_is_flag(const char *key);

/* Reads a profile: `key = value` lines, `#` comments. NAME is looked up as
 * profiles/NAME.profile in the program's tree (repo_path.h: $ACCUBENCH_ROOT,
 * else beside the program; never the working directory); anything with a
 * '/' or ending in .profile is the file the user named.
 * Returns 0, or -1 with a reason naming the file and line. */
int options_load_profile(run_options *o, const char *name_or_file, char *why,
                         size_t why_len);

/* Each profile in the repository's profiles/ (found as a profile is), by
 * name, with its first comment line ("" when it has none). Returns the
 * count. */
typedef void (*profile_fn)(const char *name, const char *summary, void *ctx);
int options_list_profiles(profile_fn each, void *ctx);

/* What to do with an existing --csv: --append, --replace, or refuse it. */
csv_existing options_csv_existing(const run_options *o);

/* Final cross-checks once everything is set (a micro-batch larger than
 * every effective batch, ...). */
int options_validate(const run_options *o, char *why, size_t why_len);
/* Adds to o->note what was given and will not be used: --out beside --csv
 * (the CSV's name is --csv's, whatever folder --out names). */
void options_note_unused(run_options *o);

/* The micro-batches a sweep visits for effective batch e over devices whose
 * largest share of it is `share` (e on one device): pow2 expanded up to
 * the share and the share itself, ascending; a size named twice is there
 * twice (two arms, in order); a named size larger than e is not there (it
 * has no split of e). Returns the count. */
int options_micro_list(const run_options *o, int e, int share, int *out, int max);

/* The named micro-batches left out at some effective batch because they
 * are larger than it, said in one line ("" when none). Returns how many
 * pairs were left out. */
int options_micro_left_out(const run_options *o, char *out, size_t len);

#endif
