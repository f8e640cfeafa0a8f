/* An axis of the sweep (execution mode, sync mode, reduction, dtype,
 * optimizer) is one table of rows of one shape: each row begins with its
 * name and a one-line description, then the columns the code reads. This
 * descriptor is what every axis shares: looked up by name, listed for the
 * messages and the usage text, described for the CSV's metadata. A row
 * added to a table is parsed, listed and described with no other line. */
#ifndef ACCUBENCH_AXIS_H
#define ACCUBENCH_AXIS_H

#include <stddef.h>

/* The head of every row: the first member of each axis's row struct. */
typedef struct axis_row {
    const char *name;        /* as the CLI, the profiles and the CSV spell it */
    const char *description; /* one line, for the metadata and --help */
} axis_row;

typedef struct axis {
    const char *what;  /* "mode": the key the messages name */
    const void *rows;  /* count rows of row_size bytes, each starting with an axis_row */
    size_t row_size;
    int count;
} axis;

/* What a list of an axis's values says to mean every row of its table,
 * in the table's order: a profile or a script that sweeps a whole axis
 * names none of its values, so a row added to the table is in it. No row
 * takes this name (tests/util/test_axis.c). */
#define AXIS_ALL "all"

/* The descriptor of a static table whose rows begin with an axis_row. */
#define AXIS_OF(what, table) \
    {(what), (table), sizeof (table)[0], (int)(sizeof (table) / sizeof (table)[0])}

/* Row i's head, or NULL when i is out of range. */
const axis_row *axis_row_at(const axis *a, int i);
/* Row i's name, or "?" when i is out of range. */
const char *axis_name(const axis *a, int i);
/* The index of the row named s, or -1. */
int axis_find(const axis *a, const char *s);
/* Every name joined by sep into out (cut to len, always terminated). */
const char *axis_names(const axis *a, char *out, size_t len, const char *sep);
/* Sets *out to the row named s and returns 0, or returns -1 with "unknown
 * WHAT 's' (known: a, b, c)" in why (WHAT: key, or the axis's own word). */
int axis_parse(const axis *a, const char *key, const char *s, int *out, char *why,
               size_t why_len);
/* "a (its description); b (...)": rows which[0..n), for the metadata. */
void axis_describe(const axis *a, const int *which, int n, char *out, size_t len);

#endif
