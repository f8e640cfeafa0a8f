/* One config of the sweep as a value: its model, its split, the row of
 * each axis and the time it may take. The sweep makes every config from
 * the options in one pass (config_iter); below the sweep, code receives
 * the config it runs, never the options. */
#ifndef ACCUBENCH_CONFIG_H
#define ACCUBENCH_CONFIG_H

#include <stdint.h>

#include "dtype_table.h"
#include "levers.h"
#include "model_kind.h"
#include "modes.h"
#include "options.h"
#include "reduction.h"
#include "shard_modes.h"
#include "split.h"
#include "sync_modes.h"

/* How long a config may take: the timed pass's stopping rules, the step
 * time past which it is skipped, the trace pass's steps. */
typedef struct config_budget {
    int warmup;
    int steps; /* fixed timed steps; 0 = adaptive */
    int min_samples, max_samples;
    double budget_s, max_noise_pct;
    double max_step_s;
    int trace_steps;
    int rounds; /* ROUNDS_AUTO, 0 = off, or a count (options.h) */
} config_budget;

/* The levels of the sweep, outermost first: what a config shares with the
 * one before it (the same model, the same data, the same ranks). */
typedef enum config_level {
    CONFIG_MODEL = 0, /* a model is created */
    CONFIG_BATCH,     /* its data for one effective batch */
    CONFIG_DEVICES,   /* the ranks of one device count */
    CONFIG_ROW,       /* one split x each row axis (sweep_axes): a row */
} config_level;

typedef struct config {
    const model_spec *model;
    split sp;
    int arm; /* 1, or 2 for the second of a micro-batch named twice */
    /* "" or why the split cannot run on its devices (the row is skipped
     * with it; sp then says what the split would have been). */
    char unsplittable[200];
    exec_mode mode;
    reduction reduction;
    sync_mode sync;    /* its row where data_parallel; SYNC_WINDOW otherwise */
    shard_mode shard;  /* its row where data_parallel; SHARD_NONE otherwise */
    int data_parallel; /* the run has ranks: the row names its sync mode */
    /* What it computes in: the model and data of that dtype, the backend
     * switched to it (config_use). */
    dtype dtype;
    /* What the backward recomputes: the row runs its model with this in
     * its spec (config_model_spec). */
    recompute recompute;
    /* What the accumulated gradient is held in between micro-batches
     * (grad_dtype.h): the model's, for the row (config_on_model). */
    grad_dtype grad_dtype;
    optimizer_kind optimizer;
    int buffers;       /* input buffers rotated */
    uint64_t seed;
    int noise_windows; /* the noise scale's windows; 0 = none */
    int train_steps;   /* the loss curve's steps; 0 = none */
    config_budget budget;
    /* Where it sits: the outermost level it is the first config of. */
    config_level opens;
    int model_index, devices_index;
} config;

/* The sweep's row axes (dtype, mode, reduction, sync, shard, recompute,
 * grad_dtype), one row
 * each in sweep_axes (config.c), outermost first: where the options keep
 * the axis's list, where a config and a result row keep its value, and its
 * value where it does not vary. The iterator and the result row walk the
 * rows, never an axis by name, so a new axis is its table in util/, its
 * fields and its row. */
typedef struct sweep_axis {
    const axis_option *option; /* its table and its list in run_options */
    size_t field;              /* config: the row's value (an int) */
    size_t column;             /* result_row: the CSV column naming the value */
    /* A config's value where the axis does not vary: its list is empty
     * (options made by hand, a test's), or it varies only where the run
     * has ranks (ranks_only) and these configs have none (its column is
     * then empty). A lever's are its row's in levers[] (levers.h: the
     * default its labels leave unsaid), read through sweep_axis_off and
     * sweep_axis_ranks_only; another axis has them here. */
    const lever *lever;
    int off;
    int ranks_only;
} sweep_axis;

int sweep_axis_off(const sweep_axis *ax);
int sweep_axis_ranks_only(const sweep_axis *ax);

#define SWEEP_AXES_MAX 12
extern const sweep_axis sweep_axes[];
extern const int sweep_axes_n;

/* Walks the sweep's configs in order: model x effective batch x devices x
 * micro-batch x the row axes of sweep_axes, outermost first (dtype x mode x
 * reduction x sync x shard x recompute x grad_dtype). A micro-batch wider than a
 * device's share of the batch is passed over. */
typedef struct config_iter {
    const run_options *o;
    int data_parallel;
    int model_end;    /* models [first, model_end) */
    int mi, ei, di, ui;     /* the next config's place: model, batch, devices, micro */
    int row[SWEEP_AXES_MAX]; /* and each row axis's value, as an index into its list */
    int micros[64], n_micro;
    int fresh;          /* the place has not been given yet */
    config_level opens; /* the outermost level the next config begins */
} config_iter;

/* Every config of the run; data_parallel: the run has ranks (each device
 * count of o->devices, each sync mode of o->syncs, each shard mode of
 * o->shards). */
void config_iter_start(config_iter *it, const run_options *o, int data_parallel);
/* 1 and the next config in *c, or 0 at the end. */
int config_next(config_iter *it, config *c);
/* Passes over the rest of the current level (CONFIG_MODEL: the current
 * model's configs; CONFIG_DEVICES: this device count's). */
void config_iter_skip(config_iter *it, config_level level);
/* The config's model as its row runs it: its spec with the row's
 * recompute value. */
model_spec config_model_spec(const config *c);
/* The model set for the config's row before its runner is made: its
 * recompute value (the activations follow it) and the dtype its gradient
 * is accumulated in (the step runner reads it). */
void config_on_model(const config *c, model *m);
/* How many configs the iterator will give, from its start. */
int config_count(const run_options *o, int data_parallel);
/* A hash of every config the iterator will give (each one's model, split,
 * axes' values, seed, checks, learning rate and timing budget: the steps
 * counted, the rounds, the trace pass): ranks started with other
 * options give another (--mem-cap and the outputs aside). */
int config_fingerprint(const run_options *o, int data_parallel);

#endif
