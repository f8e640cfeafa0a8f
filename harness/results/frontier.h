/* The memory-time frontier of one effective batch: every configuration a
 * CSV measured for it (micro x K x recompute x shard x dtype, and the mode
 * and sync where those vary), each with its memory per device and its step
 * time, judged against a memory cap. `plan --recommend` prints it, the
 * report's "Within a memory cap" section and plots/frontier.gp draw it
 * (docs/planner.md).
 *
 * Memory per device is the measured peak (mem_peak_bytes) where the row
 * has one, the exact need (mem_need_bytes) otherwise; each item says which.
 * The levers (levers.h) are read by name: a file without a lever's column
 * ran without it, and reads as its default. */
#ifndef ACCUBENCH_FRONTIER_H
#define ACCUBENCH_FRONTIER_H

#include <stddef.h>
#include <stdint.h>

#include "csv_read.h"
#include "levers.h"
#include "paired.h"

/* Why an item is or is not a candidate, in the order they are tested. */
typedef enum frontier_verdict {
    FR_FITS = 0,    /* ran, exact, within the cap (or no cap): a candidate; its
                     * flags are shown beside it and veto nothing */
    FR_NOT_OK,      /* status not ok (oom, skipped, error) */
    FR_NO_STEP_TIME, /* status ok, but no step time to rank it by */
    FR_INEXACT,     /* a reduction whose gradient is not the full batch's */
    FR_NO_MEMORY,   /* neither a measured peak nor a need: cannot be held to a cap */
    FR_OVER_CAP,    /* over the cap by `over` bytes */
} frontier_verdict;

typedef struct frontier_item {
    size_t row;            /* index into the rows */
    /* each lever's value, in levers[] order; its default where the file
     * has no column or the cell is empty */
    const char *lever[LEVER_COUNT];
    double step_ms;        /* the median step time; NAN when it did not run */
    int64_t mem;           /* bytes per device; -1 when unknown */
    int mem_measured;      /* 1: the measured peak; 0: the exact need */
    frontier_verdict verdict;
    int64_t over;          /* bytes over the cap (0 within it), whatever the verdict */
    int on_front;          /* ran and exact, and no other such item is at once
                            * no larger and no slower (and better in one) */
} frontier_item;

/* Which rows make the frontier. */
typedef struct frontier_query {
    int64_t effective;     /* the effective batch */
    int64_t devices;       /* the device count */
    int64_t cap;           /* bytes per device; -1: no cap */
    const char *model;     /* the model column; NULL: the file must hold one only */
    const char *backend;   /* the backend column; NULL: any */
} frontier_query;

typedef struct frontier_set {
    frontier_item *items;  /* the query's rows, by step time ascending (but
                            * a fitting row the rule calls faster than the
                            * medians' pick is moved up to the pick); rows
                            * without one last, in file order */
    size_t n;
    size_t other_effective; /* rows left aside: another effective batch */
    size_t other_devices;   /*   at this effective batch, another device count */
    size_t other_model;     /*   at both, another model or backend */
    size_t second_arm;      /*   of the query, a config's second arm (an A/A
                             *   check: the same config timed again) */
    size_t repeated;        /*   of the query, a config's later row (csv_row
                             *   repeat: run again with --append) */
    int best;               /* the recommended item, -1 when none fits */
    int64_t floor;          /* the smallest need of any item, -1 when none is known */
    /* the label must name them */
    int mixed_mode, mixed_sync, mixed_reduction, mixed_lever[LEVER_COUNT];
} frontier_set;

/* Builds the set. Returns 0; -1 with a one-line reason when the query
 * names no model and the rows at its effective batch and device count hold
 * several (they would be ranked against each other), or out of memory. */
int frontier_build(const csv_table *t, const csv_row *rows, const frontier_query *q,
                   frontier_set *out, char *why, size_t why_len);
void frontier_free(frontier_set *s);

/* "16x16 fp32 recompute=none shard=none" (the levers of the config's key,
 * levers.h's keyed, and the mode, sync, reduction and other levers when
 * they vary): how the plan, the report and the chart name an item. No
 * commas. */
void frontier_label(const frontier_set *s, const csv_row *rows, const frontier_item *it,
                    char *out, size_t len);

/* Whether item a's step time is separated from b's by the comparison
 * rule (row_compare.h: paired where they were timed in the same rounds): 1
 * faster or slower, 0 not separated (the same within the threshold, or
 * undecided), -1 when either has no interval. */
int frontier_differ(const csv_row *rows, const frontier_item *a, const frontier_item *b);

/* The candidates within the cap after the recommended one that the rule
 * does not separate from it (frontier_differ not 1), in rank order: their
 * count, their indexes into tied[] (room for s->n); *least the index of
 * the one of them, the recommended included, that needs the least memory
 * (the tie-break a person would want). Needs s->best >= 0. */
int frontier_tied(const frontier_set *s, const csv_row *rows, int *tied, int *least);

/* What the rule makes of item i against the recommended one, in its
 * words: "the same within 2%", "not yet separated", "no interval"; each
 * tie is named with them, so that one the rule resolved as the same never
 * reads as one it could not decide. */
paired_words frontier_tie_words(const frontier_set *s, const csv_row *rows, int i);

/* The verdict in words: "fits", "over the cap", "status oom", ... */
const char *frontier_verdict_text(const csv_row *rows, const frontier_item *it, char *out,
                                  size_t len);

#endif
