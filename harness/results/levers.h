/* The levers beside accumulation a row is labelled by (docs/architecture.md,
 * "The levers beside accumulation"): recompute, shard, the gradient's
 * dtype. One row each, read by every label that names them (the run's
 * progress line and summary, the report, the frontier, the curves file's
 * summary lines, the goodput series), by the defaults an older CSV reads
 * as (csv_key_defaults), by the sweep's value where the axis does not vary
 * (config.c), and, through the CSV's `# levers:` line (levers_meta), by
 * the charts. A lever added is its row here and its enum constant. */
#ifndef ACCUBENCH_LEVERS_H
#define ACCUBENCH_LEVERS_H

#include <stddef.h>

#include "axis.h"
#include "csv_read.h"
#include "result_row.h"

typedef struct lever {
    const char *column; /* its KEY column (result_row.h), as the CSV and the curves file spell it */
    const axis *ax;     /* its table in util/ */
    int off;            /* its default row: what a run that never set it ran */
    /* It varies only with ranks: an empty cell is a one-process row, not
     * a file from before the column. */
    int ranks_only;
    /* Named even at its default by the labels that spell out a config's
     * key (the frontier's, the curves chart's panels): those two named
     * recompute and shard so before the other labels left defaults out,
     * and tests and scripts read them so. A lever added since is named
     * there only where it sets a row apart. */
    int keyed;
    const char *word;   /* the run's short label: "grad bf16" */
    const char *phrase; /* the report's: "gradient accumulated in bf16" */
    const char *title;  /* the charts' (through `# levers:`): "gradient in bf16" */
    const char *option; /* accubench run's option that sets it: "--grad-dtype" */
} lever;

enum { LEVER_RECOMPUTE, LEVER_SHARD, LEVER_GRAD_DTYPE, LEVER_COUNT };
extern const lever levers[LEVER_COUNT];

/* The default's name: "none". */
const char *lever_off_name(const lever *l);
/* The rule every label keeps: value sets its row apart, i.e. it is neither
 * empty (NULL, a file from before the column, a one-process row of a
 * ranks-only lever) nor the default. */
int lever_set(const lever *l, const char *value);
/* value, or the default's name where it is empty or NULL. */
const char *lever_or_off(const lever *l, const char *value);

/* Lever l's value in a row the run filled, and in one read back. */
const char *lever_in_result(const lever *l, const result_row *r);
const char *lever_in_csv(const lever *l, const csv_row *r);

/* Each lever's value in one row, in levers[] order (NULL or "": not
 * given), for a label that takes a row read back or a curve's key. */
typedef struct lever_values {
    const char *v[LEVER_COUNT];
} lever_values;
lever_values lever_values_of_csv(const csv_row *r);

/* The value of `# levers:` in the CSV (the chart scripts read it,
 * plots/levers.awk), each lever in table order:
 * `recompute=none "recompute" keyed; shard=none "shard" keyed; ...`. */
void levers_meta(char *out, size_t len);
#define LEVERS_META_KEY "levers"

#endif
