/* plan --recommend from measured rows: the configurations that reach an
 * effective batch within a memory cap, ranked by measured step time, the
 * recommended one first, and for each faster one left out, why
 * (frontier.h; docs/planner.md). */
#ifndef ACCUBENCH_RECOMMEND_H
#define ACCUBENCH_RECOMMEND_H

#include <stdint.h>
#include <stdio.h>

#include "frontier.h"

/* What plan asks: the frontier's query (model NULL: the file's one) and
 * the file the rows come from, for the text. */
typedef struct recommend_request {
    const char *csv_path;
    frontier_query q;
    int measured; /* the file is what this command just measured */
} recommend_request;

/* Reads the CSV and prints the ranking to out. Returns 0 with a
 * recommendation; 1 when no configuration reaches the effective batch
 * within the cap (the listing says why of each), or the cap is below the
 * smallest need of any configuration just measured (the figure given);
 * 2 with one line on stderr ("accubench: ...") when the file cannot be
 * read, holds no row of the query, or, a file given, the cap is below
 * that need: input that could never have had an answer. */
int recommend_from_csv(FILE *out, const recommend_request *req);

/* The same over rows already read (the unit tests, plan's own
 * measurements). */
int recommend_print(FILE *out, const csv_table *t, const csv_row *rows,
                    const recommend_request *req);

#endif
