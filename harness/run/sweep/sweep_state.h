/* What the configs of one sweep share: the device, the collector, the CSV
 * being written, the measured peak, and the few run-wide settings a config
 * acts on (its own settings come in its struct config). Private to run/. */
#ifndef ACCUBENCH_SWEEP_STATE_H
#define ACCUBENCH_SWEEP_STATE_H

#include <signal.h>
#include <stdint.h>

#include "backend.h"
#include "collector.h"
#include "comm.h"
#include "config_watch.h"
#include "csv_writer.h"
#include "curves_file.h"
#include "dataset.h"
#include "lr_grid.h"
#include "model.h"
#include "progress.h"

typedef struct sweep {
    backend *b;
    collector *col;
    csv_writer csv;
    /* Each dtype's measured peak GEMM rate (NAN: not measured), the MFU's
     * denominator of its rows. */
    double peak_tflops[DTYPE_COUNT];
    /* What each dtype's model and data hold on the device while the sweep
     * has them open, as they hold it now (under mpirun a model's state is
     * cut again by each of its rows: config_prepare follows it): a row of
     * one dtype counts none of the others' in its memory peak, nor against
     * the cap (config_use). */
    size_t held[DTYPE_COUNT];
    config_watch *watch; /* the probes beside each config (NULL: none) */
    uint64_t mem_cap;       /* 0 = none */
    const char *dump_dir;   /* --dump: the first config's window; "" = none */
    const char *trace_path; /* --trace: one step as Chrome JSON; "" = none */
    int quiet;
    int several_dtypes; /* --dtype named more than one: each console row says its own */
    int trace_written;
    int dump_done; /* --dump was written (or failed) */
    int failures;
    int lost;      /* the device was lost: the sweep stopped after that row */
    int configs_planned; /* what the CSV's "unfinished" line counts against */
    const volatile sig_atomic_t *stop; /* set by SIGINT: finish no more configs */
    progress *progress;                /* NULL: none */
    comm *world; /* every rank mpirun started (NULL: one process) */
    comm *comm;  /* the ranks of the configs being run (NULL: one process) */
    int writer;  /* this process writes the CSV, the console table, the trace */
    curves_file *curves; /* --train-steps: the curves CSV (NULL: none, or not this rank) */
    /* --lr-grid: the curves' learning rates, around --lr from the first E */
    const lr_grid *lr_grid;
    double base_lr;
    int base_effective;
} sweep;

/* What the sweep has open for the config at hand: the model, its data for
 * one effective batch, the ranks of one device count; a model and its data
 * in each dtype of the run, indexed by dtype (the others unmade: b NULL),
 * so that configs of every dtype are timed in the same rounds. */
typedef struct sweep_place {
    int open;    /* levels open: 0 none .. CONFIG_DEVICES + 1 all three */
    model m[DTYPE_COUNT];
    /* the model could not be made in that dtype (BK_*; BK_OK with no model:
     * its state alone does not fit, which each row's own need says): every
     * row in that dtype says so, and the other dtypes run */
    int model_rc[DTYPE_COUNT];
    char model_why[DTYPE_COUNT][200];
    /* the data could not be made (BK_*): every row of the batch in that
     * dtype says so */
    int data_rc[DTYPE_COUNT];
    dataset d[DTYPE_COUNT];
    comm *ranks; /* NULL: one process, or this rank is not among them */
} sweep_place;

struct config;
/* The backend switched to config c's dtype and the memory cap raised by
 * what the other dtypes' models and data hold; then c's row set on its
 * model m (config_on_model). */
void config_use(sweep *s, const struct config *c, model *m);
/* What the dtypes other than dt hold (sweep.held). */
size_t sweep_held_apart(const sweep *s, dtype dt);
/* Whether config c fits the cap and the device (its row would be OOM). */
int sweep_config_fits(const sweep *s, const struct config *c);

#endif
