/* Several runs a side for compare (compare.h): `accubench compare
 * BASE1.csv,BASE2.csv,BASE3.csv NEW1.csv,NEW2.csv,NEW3.csv`. Each run is
 * one draw of the machine as it was then: a config's ratio is taken over
 * the runs (paired_runs_ratio), so its interval holds the machine's
 * change from run to run, which no one run's interval does. The first
 * file of a side is its run of record (the configs, their status, the
 * table's keys); every file after it adds its own step time of the same
 * config (its first arm, where it ran). */
#ifndef ACCUBENCH_COMPARE_RUNS_H
#define ACCUBENCH_COMPARE_RUNS_H

#include <stddef.h>

#include "csv_read.h"
#include "row_index.h"

#define COMPARE_MAX_RUNS 32

typedef struct compare_side {
    int n;                             /* files named */
    const char *paths[COMPARE_MAX_RUNS];
    char *list;                        /* the argument cut at its commas (owned) */
    /* the files after the first, [1..n): loaded, and indexed by config */
    csv_table t[COMPARE_MAX_RUNS];
    csv_row *rows[COMPARE_MAX_RUNS];
    row_index ix[COMPARE_MAX_RUNS];
    int loaded;                        /* files [1..loaded) hold a table and index */
} compare_side;

/* The side's files from its argument: a comma-separated list, or the
 * argument whole where that names a file (a name with a comma in it). 0,
 * or -1 with the reason in why. */
int compare_side_parse(compare_side *s, const char *arg, char *why, size_t n);

/* The two sides' files are distinct runs: no file named twice, on one
 * side or across them (by device and inode, so ./a.csv is a.csv). One
 * file a side may be the same file: a check of it, whose ratio is 1.
 * 0, or -1 with the reason in why. */
int compare_sides_distinct(const compare_side *side, char *why, size_t n);

/* Loads and indexes the side's files after the first; a file written
 * before a key column read as its default, as against `other` (the other
 * side's first file). 0, or -1 with the reason in why. */
int compare_side_load(compare_side *s, const csv_table *other, char *why, size_t n);

/* The step times of the config of `first` (a row of the side's first file)
 * over the side's runs where it ran: first's own, then each later file's
 * row of that config; their count (at most COMPARE_MAX_RUNS). */
size_t compare_side_times(const compare_side *s, const csv_row *first, double *ms);

void compare_side_free(compare_side *s);

#endif
