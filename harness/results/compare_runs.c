/* Several runs a side for compare (see compare_runs.h). */
#include "compare_runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv_load.h"
#include "csv_rows.h"

int compare_side_parse(compare_side *s, const char *arg, char *why, size_t n)
{
    memset(s, 0, sizeof *s);
    s->list = strdup(arg);
    if (!s->list) {
        snprintf(why, n, "out of memory for the file names");
        return -1;
    }
    struct stat st;
    if (strchr(arg, ',') && stat(arg, &st) == 0) { /* one file, a comma in its name */
        s->paths[s->n++] = s->list;
        return 0;
    }
    for (char *p = s->list, *end; p; p = end ? end + 1 : NULL) {
        end = strchr(p, ',');
        if (end)
            *end = '\0';
        if (!*p) {
            snprintf(why, n, "'%s': an empty name in the list of runs", arg);
            return -1;
        }
        if (s->n == COMPARE_MAX_RUNS) {
            snprintf(why, n, "'%s': more than %d runs a side", arg, COMPARE_MAX_RUNS);
            return -1;
        }
        s->paths[s->n++] = p;
    }
    return 0;
}

/* The (device, inode) of path, or 0 where it cannot be read (csv_load
 * says why, later). */
static int file_id(const char *path, dev_t *dev, ino_t *ino)
{
    struct stat st;
    if (stat(path, &st))
        return 0;
    *dev = st.st_dev, *ino = st.st_ino;
    return 1;
}

int compare_sides_distinct(const compare_side *side, char *why, size_t n)
{
    if (side[0].n == 1 && side[1].n == 1)
        return 0; /* one file against itself: a check of the file, ratio 1 */
    const char *paths[2 * COMPARE_MAX_RUNS];
    int count = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < side[k].n; i++)
            paths[count++] = side[k].paths[i];
    for (int i = 0; i < count; i++) {
        dev_t di, dj;
        ino_t ii, ij;
        if (!file_id(paths[i], &di, &ii))
            continue;
        for (int j = i + 1; j < count; j++)
            if (file_id(paths[j], &dj, &ij) && di == dj && ii == ij) {
                snprintf(why, n, "'%s' and '%s' are one file: each run counts once "
                         "(its spread over the runs would read as none)", paths[i], paths[j]);
                return -1;
            }
    }
    return 0;
}

int compare_side_load(compare_side *s, const csv_table *other, char *why, size_t n)
{
    row_key config = row_key_config();
    for (s->loaded = 1; s->loaded < s->n; s->loaded++) {
        int k = s->loaded;
        if (csv_load(s->paths[k], csv_required_columns, &s->t[k], &s->rows[k], why, n))
            return -1;
        char filled[256];
        csv_key_defaults(&s->t[k], s->rows[k], other, filled, sizeof filled);
        if (row_index_init(&s->ix[k], &config, s->rows[k], s->t[k].rows)) {
            free(s->rows[k]);
            csv_free(&s->t[k]);
            snprintf(why, n, "out of memory indexing %s", s->paths[k]);
            return -1;
        }
        for (size_t i = 0; i < s->t[k].rows; i++)
            row_index_add(&s->ix[k], i);
    }
    return 0;
}

size_t compare_side_times(const compare_side *s, const csv_row *first, double *ms)
{
    size_t n = 0;
    if (result_ran(first))
        ms[n++] = first->step_ms_median;
    for (int k = 1; k < s->loaded; k++) {
        size_t j = row_index_find(&s->ix[k], first);
        if (j != ROW_NONE && result_ran(&s->rows[k][j]))
            ms[n++] = s->rows[k][j].step_ms_median;
    }
    return n;
}

void compare_side_free(compare_side *s)
{
    for (int k = 1; k < s->loaded; k++) {
        row_index_free(&s->ix[k]);
        free(s->rows[k]);
        csv_free(&s->t[k]);
    }
    free(s->list);
    memset(s, 0, sizeof *s);
}
