#include "csv_existing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "csv_read.h"
#include "csv_rows.h"
#include "csv_writer.h"
#include "output_path.h"

/* The metadata that make two runs' rows comparable. Not the dtype: each
 * row names its own (a KEY column), and plan --recommend appends a sweep
 * in every dtype the backend computes in to one file, which the CPU's
 * fp32 and bf16 made two. The GEMM library (ACCUBENCH_CPU_GEMM, its
 * threads) and where the optimizer runs (--optimizer-at) change every
 * step's time and no row says them: the file's one line would name the
 * last run's for all its rows. The seed likewise: it sets the weights and
 * the examples, so every loss, gradient check and noise scale. */
static const char *const same_keys[] = {"backend", "device", "optimizer", "mem_cap_bytes",
                                        "library", "optimizer_at", "seed"};

/* How much of a setting's value says the setting: "library" up to its
 * dtype's remark (" (bf16 GEMM: ...)", which each row's dtype says),
 * "optimizer_at" its first word (the placement; "because ..." or "as
 * asked" after it is why), the others whole. */
static size_t setting_len(const char *key, const char *value)
{
    if (!strcmp(key, "library")) {
        const char *remark = strstr(value, " (");
        return remark ? (size_t)(remark - value) : strlen(value);
    }
    if (!strcmp(key, "optimizer_at"))
        return strcspn(value, " ,");
    return strlen(value);
}

/* status: a loss-curves file beside a CSV has backend and model too */
static const char *const result_key_columns[] = {"backend", "model", "status", NULL};
const csv_kind csv_kind_results = {"an accubench CSV", result_key_columns, 1};

/* The header row is read from the file's first bytes only: a file whose
 * first this many hold none is not a CSV of ours, however long it is. */
#define HEADER_SCAN_BYTES (1 << 20)

/* Whether `column` is one of the comma-separated names in line[0..len). */
static int line_has_column(const char *line, size_t len, const char *column)
{
    size_t want = strlen(column);
    for (size_t at = 0; at <= len;) {
        size_t end = at;
        while (end < len && line[end] != ',')
            end++;
        size_t a = at, b = end;
        while (a < b && (line[a] == ' ' || line[a] == '\t'))
            a++;
        while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t' || line[b - 1] == '\r'))
            b--;
        if (b - a == want && !memcmp(line + a, column, want))
            return 1;
        at = end + 1;
    }
    return 0;
}

/* Whether the header row among the first HEADER_SCAN_BYTES of `path` holds
 * every column of `kind` (a leading UTF-8 byte-order mark read past): 0
 * not, 1 with a row after it, 2 a header alone (a run stopped before its
 * first row: nothing to lose). */
static int is_kind(const char *path, const csv_kind *kind)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char *text = malloc(HEADER_SCAN_BYTES);
    size_t used = 0;
    ssize_t n;
    while (text && used < HEADER_SCAN_BYTES &&
           (n = read(fd, text + used, HEADER_SCAN_BYTES - used)) > 0)
        used += (size_t)n;
    close(fd);
    int ours = 0, rows = 0;
    size_t at = used >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
    while (text && at < used) {
        const char *nl = memchr(text + at, '\n', used - at);
        size_t len = nl ? (size_t)(nl - (text + at)) : used - at;
        const char *line = text + at;
        at += len + 1;
        if (!len || line[0] == '#' || (len == 1 && line[0] == '\r'))
            continue;
        if (ours) { /* a row after our header */
            rows = 1;
            break;
        }
        ours = 1;
        for (const char *const *c = kind->columns; *c && ours; c++)
            ours = line_has_column(line, len, *c);
        if (!ours)
            break;
    }
    free(text);
    /* rows past the bytes read: counted as rows, never overwritten */
    return !ours ? 0 : rows || used == HEADER_SCAN_BYTES ? 1 : 2;
}

int csv_existing_check(const char *path, csv_existing want, const csv_kind *kind, char *why,
                       size_t why_len)
{
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0)
        return 0;
    int kind_of = is_kind(path, kind);
    if (kind_of == 2) /* a header alone: written afresh, appended to alike */
        return want == CSV_REFUSE ? 0 : 1;
    if (!kind_of) {
        char columns[200] = "";
        for (const char *const *c = kind->columns; *c; c++) {
            size_t used = strlen(columns);
            snprintf(columns + used, sizeof columns - used, "%s%s", c == kind->columns ? ""
                     : c[1] ? ", " : " and ", *c);
        }
        snprintf(why, why_len, "--csv %s holds something that is not %s (no header row with "
                 "the columns %s): refused whatever the options, it would be overwritten; "
                 "name another file", path, kind->name, columns);
        return -1;
    }
    if (want == CSV_REFUSE) {
        snprintf(why, why_len, "--csv %s exists; add %s to start it again (refused: it "
                 "would be overwritten)", path, kind->appendable ? "--append to add this "
                 "run's rows to it, or --replace" : "--replace");
        return -1;
    }
    return 1;
}

int csv_reserve(const char *what, const char *path, csv_existing want, const csv_kind *kind,
                csv_lock *lock, csv_existing *existing, char *why, size_t why_len)
{
    lock->fd = -1;
    *existing = CSV_REFUSE;
    if (output_path_check(what, path, OUTPUT_FILE, why, why_len) ||
        csv_lock_take(lock, path, why, why_len))
        return -1;
    /* Under the lock: what the file holds now is what this writer would lose. */
    int held = csv_existing_check(path, want, kind, why, why_len);
    if (held < 0) {
        csv_lock_release(lock);
        return -1;
    }
    *existing = held ? want : CSV_REFUSE;
    /* Only the lock's holder may take a dead writer's temporaries away. */
    atomic_file_remove_stale(path);
    return 0;
}

/* This build's columns, in order, or a reason. */
static int same_columns(const csv_table *t, char *why, size_t why_len)
{
    size_t i = 0;
    while (i < t->cols && (int)i < result_column_count &&
           strcmp(t->header[i], result_columns[i].name) == 0)
        i++;
    if (i == t->cols && (int)i == result_column_count)
        return 0;
    snprintf(why, why_len, "--append %s: its columns are not this build's (column %zu is %s, "
             "not %s); write another --csv or --replace it", t->path, i + 1,
             i < t->cols ? t->header[i] : "missing",
             (int)i < result_column_count ? result_columns[i].name : "none");
    return -1;
}

static int same_settings(const csv_table *t, const csv_writer *w, char *why, size_t why_len)
{
    for (size_t k = 0; k < sizeof same_keys / sizeof same_keys[0]; k++) {
        const char *theirs = csv_meta_get(t, same_keys[k]),
                   *mine = csv_writer_meta_value(w, same_keys[k]);
        size_t n = mine ? setting_len(same_keys[k], mine) : 0;
        if (!mine || (theirs && setting_len(same_keys[k], theirs) == n &&
                      !strncmp(theirs, mine, n)))
            continue;
        snprintf(why, why_len, "--append %s: its rows are not comparable with this run's "
                 "(%s is '%.80s' there, '%.80s' here); write another --csv or --replace it",
                 t->path, same_keys[k], theirs ? theirs : "(none)", mine);
        return -1;
    }
    return 0;
}

/* Its rows as report and compare read them: a value no run writes (an
 * edited or damaged row) is refused here, before anything is measured,
 * rather than kept in a file no reader would then take. */
static int rows_read_back(const csv_table *t, char *why, size_t why_len)
{
    csv_row *rows = NULL;
    char reason[400];
    int rc = csv_result_rows(t, csv_required_columns, &rows, reason, sizeof reason);
    free(rows);
    if (rc)
        snprintf(why, why_len, "--append %s: %s; report and compare would refuse the file: "
                 "mend that row or --replace it", t->path, reason);
    return rc ? -1 : 0;
}

/* The rows as lines of text: the cells of each, joined by commas. */
static int keep_rows(csv_writer *w, const csv_table *t, char *why, size_t why_len)
{
    size_t len = 0, used = 0;
    for (size_t r = 0; r < t->rows; r++) {
        const char *cell = t->text + t->row_at[r];
        for (size_t c = 0; c < t->cols; c++) {
            size_t n = strlen(cell);
            len += n + 1;
            cell += n + 1;
        }
    }
    char *kept = malloc(len + 1);
    if (!kept) {
        snprintf(why, why_len, "--append %s: out of memory holding its rows", t->path);
        return -1;
    }
    for (size_t r = 0; r < t->rows; r++) {
        const char *cell = t->text + t->row_at[r];
        for (size_t c = 0; c < t->cols; c++) {
            size_t n = strlen(cell);
            memcpy(kept + used, cell, n);
            used += n;
            kept[used++] = c + 1 < t->cols ? ',' : '\n';
            cell += n + 1;
        }
    }
    kept[used] = '\0';
    free(w->kept);
    w->kept = kept;
    w->kept_rows = t->rows;
    return 0;
}

/* The lines that describe one dtype's run: its GEMM peak (its shape, its
 * memory), the device's datasheet rate for it, and the attention the
 * backend runs in it (the CPU's bf16 runs unfused, its fp32 fused). */
static const char *const per_dtype_keys[] = {"peak_gemm_tflops", "peak_gemm_shape",
                                             "peak_gemm_memory", "datasheet_tflops",
                                             "attention", "dtype_choice", "library"};
#define N_PER_DTYPE (sizeof per_dtype_keys / sizeof per_dtype_keys[0])

/* Whether the ", "-separated list holds `name` (len bytes of it). */
static int in_list(const char *list, const char *name, size_t len)
{
    for (const char *p = list; *p;) {
        p += strspn(p, " ");
        size_t n = strcspn(p, ",");
        if (n == len && !strncmp(p, name, len))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* The last name of a ", "-separated list. */
static const char *last_of(const char *list)
{
    const char *last = strrchr(list, ',');
    return last ? last + 1 + strspn(last + 1, " ") : list;
}

/* A file of other dtypes' rows appended in this run's (plan --recommend
 * sweeps every dtype the backend computes in into one file; a run of
 * --dtype fp32,bf16 names two): the new run's lines would speak for
 * every row. So the dtype line names them all, in the order they last
 * ran ("fp32, bf16"), the plain per-dtype lines are the last one's (this
 * run's last), and each earlier dtype's stay beside them as KEY_DTYPE
 * ("peak_gemm_tflops_fp32"), where the report finds them (this run writes
 * its own earlier dtypes' so: sweep_peak.c). Returns whether the file's
 * last dtype was another than this run's last (its plain per-dtype lines
 * are then not this run's to keep: keep_line). */
static int per_dtype_lines(csv_writer *w, const csv_table *t)
{
    const char *theirs = csv_meta_get(t, "dtype"), *held = csv_writer_meta_value(w, "dtype");
    if (!theirs || !*theirs || !held || !strcmp(theirs, held))
        return 0;
    char mine[CSV_META_VALUE_LEN]; /* a copy: the dtype line is rewritten from it below */
    snprintf(mine, sizeof mine, "%s", held);
    const char *last = last_of(theirs);
    int other = strcmp(last, last_of(mine)) != 0;
    for (size_t k = 0; other && k < N_PER_DTYPE; k++) {
        const char *v = csv_meta_get(t, per_dtype_keys[k]);
        char key[128];
        snprintf(key, sizeof key, "%s_%s", per_dtype_keys[k], last);
        if (v)
            csv_writer_meta(w, key, "%s", v);
    }
    /* the list without this run's dtypes, then this run's */
    char list[CSV_META_VALUE_LEN] = "";
    size_t used = 0;
    for (const char *p = theirs; *p && used < sizeof list;) {
        p += strspn(p, " ");
        size_t len = strcspn(p, ",");
        if (len && !in_list(mine, p, len))
            used += (size_t)snprintf(list + used, sizeof list - used, "%.*s, ", (int)len, p);
        p += len + (p[len] == ',');
    }
    csv_writer_meta(w, "dtype", "%s%s", list, mine);
    return other;
}

/* Whether the file's line `key` stays in the new file (where this run
 * writes none of its own): not a per-dtype line of another dtype than
 * this run's last under its plain name, nor an earlier line of one of this
 * run's dtypes under its suffixed one (this run's replaces it). */
static int keep_line(const csv_writer *w, const char *key, int other_dtype)
{
    const char *mine = csv_writer_meta_value(w, "dtype");
    for (size_t k = 0; k < N_PER_DTYPE; k++) {
        size_t n = strlen(per_dtype_keys[k]);
        if (strncmp(key, per_dtype_keys[k], n))
            continue;
        if (!key[n] && other_dtype)
            return 0;
        if (key[n] == '_' && mine && in_list(mine, key + n + 1, strlen(key + n + 1)))
            return 0;
    }
    return 1;
}

/* Lines each run writes its own of and no row says: how it timed and the
 * command it ran. Where an earlier run's differs, it goes on after this
 * run's (a file appended to holds several runs' rows, and one run's line
 * would speak for all of them); the history is kept as written. */
static const char *const per_run_keys[] = {"timing", "command"};
#define EARLIER_RUN " | an earlier run of this file: "

static void keep_earlier_runs(csv_writer *w, const csv_table *t)
{
    for (size_t k = 0; k < sizeof per_run_keys / sizeof *per_run_keys; k++) {
        const char *theirs = csv_meta_get(t, per_run_keys[k]);
        const char *value = csv_writer_meta_value(w, per_run_keys[k]);
        if (!theirs || !*theirs || !value)
            continue;
        char mine[CSV_META_VALUE_LEN]; /* a copy: the line is rewritten from it */
        snprintf(mine, sizeof mine, "%s", value);
        size_t n = strlen(mine);
        if (!strcmp(theirs, mine) ||
            (!strncmp(theirs, mine, n) && !strncmp(theirs + n, EARLIER_RUN, strlen(EARLIER_RUN))))
            csv_writer_meta(w, per_run_keys[k], "%s", theirs); /* the same as the last run's */
        else
            csv_writer_meta(w, per_run_keys[k], "%s" EARLIER_RUN "%s", mine, theirs);
    }
}

int csv_existing_adopt(csv_writer *w, const char *path, char *why, size_t why_len)
{
    csv_table t;
    char reason[400];
    if (csv_read(path, &t, reason, sizeof reason)) {
        snprintf(why, why_len, "--append %s: %s", path, reason);
        return -1;
    }
    int rc = same_columns(&t, why, why_len) || same_settings(&t, w, why, why_len) ||
             rows_read_back(&t, why, why_len) || keep_rows(w, &t, why, why_len);
    int other_dtype = !rc && per_dtype_lines(w, &t);
    /* An earlier run that did not finish left configs without a row: this
     * run's own line replaces the file's, so the file's goes on under
     * another key, and the end of a run that finishes says it again
     * (sweep.c). Kept from the first such run on. */
    const char *earlier = csv_meta_get(&t, CSV_UNFINISHED_EARLIER);
    if (!earlier)
        earlier = csv_meta_get(&t, CSV_UNFINISHED);
    if (!rc && earlier)
        csv_writer_meta(w, CSV_UNFINISHED_EARLIER, "%s", earlier);
    if (!rc)
        keep_earlier_runs(w, &t);
    /* Its other lines (a peer's, an earlier run's) stay, while there is room. */
    for (size_t i = 0; !rc && i < t.meta_count && w->meta_count < CSV_MAX_META - 16; i++)
        if (!csv_writer_meta_value(w, t.meta[i].key) && keep_line(w, t.meta[i].key, other_dtype))
            csv_writer_meta(w, t.meta[i].key, "%s", t.meta[i].value);
    csv_free(&t);
    return rc ? -1 : 0;
}
