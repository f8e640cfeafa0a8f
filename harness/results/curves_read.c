/* The curves file read back (curves_read.h). */
#include "curves_read.h"
#include "csv_read.h"
#include "csv_values.h"
#include "text_line.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void curves_path_beside(const char *main_csv, char *out, size_t len)
{
    size_t n = strlen(main_csv);
    if (n > 4 && !strcmp(main_csv + n - 4, ".csv"))
        n -= 4;
    snprintf(out, len, "%.*s.curves.csv", (int)n, main_csv);
}

enum { C_BACKEND, C_MODEL, C_DTYPE, C_MODE, C_REDUCTION, C_E, C_MICRO, C_K, C_DEVICES, C_SYNC,
       C_ORDER, C_STEP, C_LOSS, C_RECOMPUTE, C_SHARD, C_ARM, C_LR, C_NOISE, C_NOISE_ERR,
       C_GRAD_DTYPE, C_COUNT };
static const char *const COLUMN[C_COUNT] = {
    "backend", "model", "dtype", "mode", "reduction", "effective_batch", "micro_batch",
    "accum_steps", "devices", "sync", "order", "step", "loss", "recompute", "shard", "arm", "lr",
    "grad_noise_scale", "grad_noise_scale_err", "grad_dtype"};
/* Columns a file from before them lacks: read as empty. */
#define C_FIRST_OPTIONAL C_RECOMPUTE

/* Fields kept of a line; a header of more is refused, so a row that
 * matches its header's count fits. */
#define MAX_FIELDS 64

/* What spreadsheets put before the first byte of a UTF-8 file. */
static const char UTF8_BOM[] = "\xEF\xBB\xBF";

/* The largest step a curve can log: past it a row is damage, not a run. */
#define MAX_STEP 10000000

/* Splits a line in place into fields, keeping the first MAX_FIELDS in
 * field, and returns how many there are (more than MAX_FIELDS for a line
 * too long to keep): a quoted field loses its quotes (a doubled quote is
 * one) and its commas become ';'. */
static size_t split_quoted(char *line, char **field)
{
    size_t n = 0;
    char *w = line, *p = line;
    for (;;) {
        if (n < MAX_FIELDS)
            field[n] = w;
        n++;
        if (*p == '"') {
            for (p++; *p; p++) {
                if (*p == '"' && p[1] == '"')
                    *w++ = *p++;
                else if (*p == '"') {
                    p++;
                    break;
                } else
                    *w++ = *p == ',' ? ';' : *p;
            }
        }
        while (*p && *p != ',')
            *w++ = *p++;
        if (!*p) {
            *w = '\0';
            return n;
        }
        *w++ = '\0';
        p++;
    }
}

static void say(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* A text cell; "" for a column the file is from before. */
static const char *cell(char **f, const int *at, int c)
{
    return at[c] >= 0 ? f[at[c]] : "";
}

/* The curve of this row's key (all but step and loss), the last one
 * first: a file holds each curve's rows together. */
static read_curve *curve_of(curves_table *t, const read_curve *k)
{
    for (size_t i = t->n; i-- > 0;) {
        read_curve *c = &t->c[i];
        if (!strcmp(c->backend, k->backend) && !strcmp(c->model, k->model) &&
            !strcmp(c->dtype, k->dtype) && !strcmp(c->mode, k->mode) &&
            !strcmp(c->reduction, k->reduction) && !strcmp(c->sync, k->sync) &&
            !strcmp(c->recompute, k->recompute) && !strcmp(c->shard, k->shard) &&
            !strcmp(c->grad_dtype, k->grad_dtype) && c->effective_batch == k->effective_batch && c->micro_batch == k->micro_batch &&
            c->accum_steps == k->accum_steps && c->devices == k->devices && c->arm == k->arm &&
            c->reverse == k->reverse &&
            (c->lr == k->lr || (isnan(c->lr) && isnan(k->lr))))
            return c;
    }
    return NULL;
}

lever_values read_curve_levers(const read_curve *k)
{
    /* the fields the lever columns are read into (add_row), by the names
     * the results CSV gives them; tests/results/test_levers.c holds every
     * lever to one */
    static const struct {
        const char *column;
        size_t at;
    } text[] = {{"recompute", offsetof(read_curve, recompute)},
                {"shard", offsetof(read_curve, shard)},
                {"grad_dtype", offsetof(read_curve, grad_dtype)}};
    lever_values lv;
    for (int i = 0; i < LEVER_COUNT; i++) {
        lv.v[i] = NULL; /* a lever the curves file has no column for: not given */
        for (size_t c = 0; c < sizeof text / sizeof text[0]; c++)
            if (!strcmp(text[c].column, levers[i].column))
                lv.v[i] = (const char *)k + text[c].at;
    }
    return lv;
}

/* Where the row being read is, for the refusals. */
typedef struct row_at {
    const char *path;
    int line;
    int run; /* the summary lines read so far: the run the row is of */
    char *why;
    size_t why_len;
} row_at;

/* The columns of a curves file that are not the results CSV's, judged
 * as it judges its own: a step counts, a rate cannot be negative. */
static const result_column STEP_COLUMN = {"step", RESULT_IS_INT, "check", RESULT_VALUE, 0};
static const result_column LR_COLUMN = {"lr", RESULT_IS_REAL, "config", RESULT_VALUE, 0};

/* The number in column c of the row into *v: 0, or -1 with the refusal.
 * An empty cell is unmeasured (NAN), as in the results CSV (a diverged
 * step's loss is empty), unless `needed`. */
static int number(const row_at *r, char **f, const int *at, int c, int needed, double *v)
{
    const char *s = f[at[c]];
    *v = NAN;
    if (!*s && !needed)
        return 0;
    const result_column *col = c == C_STEP ? &STEP_COLUMN
                             : c == C_LR   ? &LR_COLUMN
                                           : result_column_find(COLUMN[c]);
    int64_t whole;
    const char *what = csv_value_parse(col, s, v, &whole);
    if (!what && c == C_STEP && whole > MAX_STEP)
        what = "is past the largest step a curve logs (10000000)";
    if (what) {
        csv_value_say(r->why, r->why_len, r->path, r->line, COLUMN[c], s, what,
                      (size_t)at[c] + 1);
        return -1;
    }
    return 0;
}

/* A count column (effective_batch, ...): 0 when empty, or absent from a
 * file from before it, which matches the row of a file as old. */
static int count(const row_at *r, char **f, const int *at, int c, long long *v)
{
    double d = NAN;
    if (at[c] >= 0 && number(r, f, at, c, 0, &d))
        return -1;
    *v = isnan(d) ? 0 : (long long)d;
    return 0;
}

/* One data row, its fields checked: 0, -1 with the refusal in r->why, or
 * -2 out of memory. */
static int add_row(curves_table *t, size_t *cap, char **f, const int *at, const row_at *r)
{
    read_curve k = {.lr = NAN};
    snprintf(k.backend, CURVE_TEXT, "%s", cell(f, at, C_BACKEND));
    snprintf(k.model, CURVE_TEXT, "%s", cell(f, at, C_MODEL));
    snprintf(k.dtype, CURVE_TEXT, "%s", cell(f, at, C_DTYPE));
    snprintf(k.mode, CURVE_TEXT, "%s", cell(f, at, C_MODE));
    snprintf(k.reduction, CURVE_TEXT, "%s", cell(f, at, C_REDUCTION));
    snprintf(k.sync, CURVE_TEXT, "%s", cell(f, at, C_SYNC));
    snprintf(k.recompute, CURVE_TEXT, "%s", cell(f, at, C_RECOMPUTE));
    snprintf(k.shard, CURVE_TEXT, "%s", cell(f, at, C_SHARD));
    snprintf(k.grad_dtype, CURVE_TEXT, "%s", cell(f, at, C_GRAD_DTYPE));
    if (count(r, f, at, C_E, &k.effective_batch) || count(r, f, at, C_MICRO, &k.micro_batch) ||
        count(r, f, at, C_K, &k.accum_steps) || count(r, f, at, C_DEVICES, &k.devices) ||
        count(r, f, at, C_ARM, &k.arm))
        return -1;
    k.reverse = !strcmp(cell(f, at, C_ORDER), "reverse");
    double step_d, loss, noise = NAN, noise_err = NAN;
    if ((at[C_LR] >= 0 && number(r, f, at, C_LR, 0, &k.lr)) ||
        number(r, f, at, C_STEP, 1, &step_d) || number(r, f, at, C_LOSS, 0, &loss) ||
        (at[C_NOISE] >= 0 && number(r, f, at, C_NOISE, 0, &noise)) ||
        (at[C_NOISE_ERR] >= 0 && number(r, f, at, C_NOISE_ERR, 0, &noise_err)))
        return -1;
    /* a config's second arm (an A/A check) trained its first's curve
     * again, the same weights and examples: a file from before the run
     * left it out has it; read, it would be one more split of one curve */
    if (RESULT_SECOND_ARM(&k))
        return 0;
    long step = (long)step_d;
    read_curve *c = curve_of(t, &k);
    /* a config appended again: its first run's curve is read, as compare
     * reads its first row; the later run's is counted, once per config
     * (at its first step, not its check order's) */
    if (c && c->run != r->run) {
        t->rewritten += step == 0 && !c->reverse;
        return 0;
    }
    if (!c) {
        k.run = r->run;
        if (t->n == *cap) {
            size_t grown_cap = *cap ? 2 * *cap : 16;
            read_curve *g = realloc(t->c, grown_cap * sizeof *g);
            if (!g)
                return -2;
            t->c = g;
            *cap = grown_cap;
        }
        c = &t->c[t->n++];
        *c = k;
    }
    /* the run writes each curve's steps in order from 0: a step past the
     * next one is a row lost or moved, refused here, before its arrays
     * grow to it (a row at step 9999999 took 240 MB a curve to refuse) */
    if (step > c->steps) {
        say(r->why, r->why_len, "%s:%d: the curve of %s E=%lld %lldx%lld (%s, lr %g) has no "
            "row for step %d but one for step %ld: a run writes each curve's steps in order "
            "(a row lost, moved or edited?)", r->path, r->line, c->model, c->effective_batch,
            c->micro_batch, c->accum_steps, c->reverse ? "reverse" : "forward", c->lr,
            c->steps, step);
        return -1;
    }
    if (step == c->steps) {
        size_t len = (size_t)(step + 1) * sizeof(double);
        double *g = realloc(c->loss, len);
        if (g)
            c->loss = g;
        double *gn = g ? realloc(c->noise, len) : NULL;
        if (gn)
            c->noise = gn;
        double *ge = gn ? realloc(c->noise_err, len) : NULL;
        if (ge)
            c->noise_err = ge;
        if (!ge)
            return -2;
        for (long s = c->steps; s <= step; s++)
            c->loss[s] = c->noise[s] = c->noise_err[s] = NAN;
        c->steps = (int)step + 1;
    }
    c->rows++;
    c->loss[step] = loss;
    c->noise[step] = noise;
    c->noise_err[step] = noise_err;
    return 0;
}

/* A curve's steps stay empty from the one it diverged at (curves_file.h);
 * a loss after an empty or missing step is a row lost or edited, and read
 * as it stands it would say "diverged" of a curve that went on, or smooth
 * across the hole. A step written twice is refused too. 0, or -1 with the
 * refusal in why. */
static int check_holes(const char *path, const curves_table *t, char *why, size_t why_len)
{
    for (size_t i = 0; i < t->n; i++) {
        const read_curve *c = &t->c[i];
        if (c->rows > c->steps) { /* the later row would win unsaid */
            say(why, why_len, "%s: the curve of %s E=%lld %lldx%lld (%s, lr %g) has %d rows for "
                "its %d steps: a step written twice (files joined, or rows copied?)", path,
                c->model, c->effective_batch, c->micro_batch, c->accum_steps,
                c->reverse ? "reverse" : "forward", c->lr, c->rows, c->steps);
            return -1;
        }
        int hole = -1;
        for (int s = 0; s < c->steps; s++) {
            if (isnan(c->loss[s])) {
                if (hole < 0)
                    hole = s;
            } else if (hole >= 0) {
                say(why, why_len, "%s: the curve of %s E=%lld %lldx%lld (%s, lr %g) has no loss "
                    "at step %d but one at step %d: a diverged curve stays empty from there "
                    "(a row lost or edited?)", path, c->model, c->effective_batch,
                    c->micro_batch, c->accum_steps, c->reverse ? "reverse" : "forward", c->lr,
                    hole, s);
                return -1;
            }
        }
    }
    return 0;
}

/* A run's summary line, "# curves SERIES steps=N: ...", one per series
 * after the run's rows (curves_file.h): N, or -1 for any other comment. */
static int summary_steps(const char *line)
{
    if (strncmp(line, CURVES_SUMMARY_PREFIX, strlen(CURVES_SUMMARY_PREFIX)))
        return -1;
    const char *at = strstr(line, " steps=");
    if (!at)
        return -1;
    char *end;
    long n = strtol(at + 7, &end, 10);
    return end > at + 7 && *end == ':' && n > 0 && n <= MAX_STEP ? (int)n : -1;
}

/* A run writes its rows, then a summary line per series naming the steps
 * each of its curves holds: a curve of other length lost rows (or gained
 * them) by an edit, where its holes alone would not say so (the last steps
 * gone). The curves of run r->run against `steps`. 0, or -1 with the
 * refusal in why. */
static int check_run_steps(const row_at *r, const curves_table *t, int steps)
{
    for (size_t i = 0; i < t->n; i++) {
        const read_curve *c = &t->c[i];
        if (c->run == r->run && c->steps != steps) {
            say(r->why, r->why_len, "%s:%d: the curve of %s E=%lld %lldx%lld (%s, lr %g) "
                "holds %d step%s where its run's summary line says steps=%d (rows lost or "
                "edited?)", r->path, r->line, c->model, c->effective_batch, c->micro_batch,
                c->accum_steps, c->reverse ? "reverse" : "forward", c->lr, c->steps,
                c->steps == 1 ? "" : "s", steps);
            return -1;
        }
    }
    return 0;
}

/* The header row (field, n of them): where each column of COLUMN stands
 * in at (-1 for an optional one the file is from before). 0, or -1 with
 * the refusal in r->why: too many columns, a name twice, a needed one
 * missing. */
static int take_header(const row_at *r, char **field, size_t n, int *at)
{
    if (n > MAX_FIELDS) {
        say(r->why, r->why_len, "%s:%d: not a curves file (%zu columns; at most %d)", r->path,
            r->line, n, MAX_FIELDS);
        return -1;
    }
    for (int c = 0; c < C_COUNT; c++) {
        at[c] = -1;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(field[i], COLUMN[c]))
                continue;
            /* the results CSV refuses a name twice too: the last copy was
             * read, unsaid */
            if (at[c] >= 0) {
                say(r->why, r->why_len, "%s:%d: not a curves file (column %s is named twice: "
                    "fields %d and %zu)", r->path, r->line, COLUMN[c], at[c] + 1, i + 1);
                return -1;
            }
            at[c] = (int)i;
        }
        if (at[c] < 0 && c < C_FIRST_OPTIONAL) {
            say(r->why, r->why_len, "%s: not a curves file (no %s column)", r->path, COLUMN[c]);
            return -1;
        }
    }
    return 0;
}

int curves_read(const char *path, curves_table *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    /* Opened as the CSV beside it is: a FIFO at the name never blocks the
     * report, a device or a folder is refused. */
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 1;
    char reason[400];
    FILE *f = csv_open_input(path, reason, sizeof reason);
    if (!f) {
        say(why, why_len, "the loss curves: %s", reason);
        return -1;
    }
    char *line = NULL, *field[MAX_FIELDS];
    size_t line_cap = 0, cap = 0, columns = 0;
    int at[C_COUNT], header = 0, rc = 0;
    row_at r = {.path = path, .why = why, .why_len = why_len};
    int unsummed_line = 0; /* the first row since the last summary line */
    ssize_t len;
    while ((len = text_line_read(f, &line, &line_cap, CSV_MAX_LINE)) != TEXT_LINE_END) {
        r.line++;
        if (len < 0) {
            say(why, why_len, "%s:%d: %s", path, r.line,
                len == TEXT_LINE_NUL    ? "not a curves file (binary data)"
                : len == TEXT_LINE_LONG ? "not a curves file (a line of over 64 MiB)"
                                        : "out of memory");
            rc = -1;
            break;
        }
        /* the run writes every line whole (the file is renamed into
         * place): a row without its end is the last, cut short, and its
         * last cell with it, which a text column would take as a value */
        int unended = len > 0 && line[len - 1] != '\n';
        line[strcspn(line, "\r\n")] = '\0';
        /* a spreadsheet's byte order mark, skipped as the results CSV's
         * reader skips it: read as text it hid the first column's name */
        if (r.line == 1 && !strncmp(line, UTF8_BOM, 3))
            memmove(line, line + 3, strlen(line + 3) + 1);
        int steps = summary_steps(line);
        if (steps > 0) {
            if (unsummed_line && check_run_steps(&r, out, steps)) {
                rc = -1;
                break;
            }
            r.run += unsummed_line != 0; /* the run's first summary line ends it */
            unsummed_line = 0;
        }
        if (!*line || *line == '#')
            continue;
        size_t n = split_quoted(line, field);
        if (!header) {
            if ((rc = take_header(&r, field, n, at)))
                break;
            header = 1;
            columns = n;
            continue;
        }
        /* a row of other length is a file cut short or edited: its cells
         * would be read under the wrong columns */
        if (n != columns) {
            csv_say_field_count(why, why_len, path, r.line, n, columns);
            rc = -1;
            break;
        }
        if (unended) {
            say(why, why_len, "%s:%d: the last row has no line end: the file was cut short",
                path, r.line);
            rc = -1;
            break;
        }
        if (!unsummed_line)
            unsummed_line = r.line;
        int row_rc = add_row(out, &cap, field, at, &r);
        if (row_rc == -2)
            say(why, why_len, "%s:%d: out of memory", path, r.line);
        if (row_rc) {
            rc = -1;
            break;
        }
    }
    if (!rc && ferror(f)) { /* /proc/self/mem: EIO, not an end */
        say(why, why_len, "%s: read error: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    if (!rc && !header) {
        say(why, why_len, "%s: not a curves file (no header row)", path);
        rc = -1;
    }
    /* the file was cut at a line's end: every row whole, the run's
     * summary lines (and perhaps curves and steps) gone */
    if (!rc && unsummed_line) {
        say(why, why_len, "%s:%d: no summary line (\"# curves ... steps=N\", written after a "
            "run's rows) follows the rows from here to the file's end: the file was cut short",
            path, unsummed_line);
        rc = -1;
    }
    if (!rc)
        rc = check_holes(path, out, why, why_len);
    if (rc)
        curves_table_free(out);
    return rc;
}

void curves_table_free(curves_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->c[i].loss);
        free(t->c[i].noise);
        free(t->c[i].noise_err);
    }
    free(t->c);
    memset(t, 0, sizeof *t);
}

void curves_rewritten_text(const curves_table *t, const char *name, char *out, size_t len)
{
    if (!t->rewritten) {
        snprintf(out, len, "%s", "");
        return;
    }
    snprintf(out, len, "%s holds %zu %s a later run wrote again (a config run again with "
             "--append): the first run's %s read, as compare reads a config's first row",
             name, t->rewritten, t->rewritten == 1 ? "curve" : "curves",
             t->rewritten == 1 ? "is" : "are");
}
