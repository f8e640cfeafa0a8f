/* The curves CSV and its summary (curves_file.h). */
#include "curves_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "curves_read.h"
#include "grad_dtype.h"
#include "levers.h"
#include "reduction.h"

/* The columns of a curves file, after its first comment line. */
static const char CURVES_HEADER[] =
    "backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,devices,sync,"
    "order,step,loss,recompute,shard,arm,lr,grad_noise_scale,grad_noise_scale_err,grad_dtype\n";
static const char CURVES_COMMENT[] =
    "# accubench loss curves: the window's loss before each optimizer step, from the starting "
    "weights, on learnable data\n";

void curves_path_of(const char *main_csv, char *out, size_t len)
{
    curves_path_beside(main_csv, out, len); /* the name the readers look for */
}

/* --append: what the file holds after its header, kept as it is; its
 * header must be this version's (a file of other columns would mix rows
 * no reader could tell apart). 0, or -1 with the reason. */
static int keep_earlier(curves_file *c, char *why, size_t why_len)
{
    FILE *f = fopen(c->path, "r");
    if (!f)
        return errno == ENOENT ? 0 : (snprintf(why, why_len, "cannot read %s: %s", c->path,
                                               strerror(errno)), -1);
    char *text = NULL;
    size_t cap = 0, len = 0, got;
    char buf[65536];
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = 2 * (len + got + 1);
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                fclose(f);
                snprintf(why, why_len, "out of memory reading %s", c->path);
                return -1;
            }
            text = grown;
        }
        memcpy(text + len, buf, got);
        len += got;
    }
    fclose(f);
    if (!len) {
        free(text);
        return 0;
    }
    text[len] = '\0';
    char *header = strstr(text, "\nbackend,");
    if (!header || strncmp(header + 1, CURVES_HEADER, strlen(CURVES_HEADER))) {
        free(text);
        snprintf(why, why_len, "%s holds loss curves of other columns (an earlier version's): "
                 "--replace to replace it, or another --csv", c->path);
        return -1;
    }
    /* rows the readers would refuse (a loss of -3, a row cut short) are
     * refused here, not carried into a file that then reads as damaged */
    curves_table t;
    if (curves_read(c->path, &t, why, why_len)) {
        free(text);
        return -1;
    }
    curves_table_free(&t);
    char *rest = header + 1 + strlen(CURVES_HEADER);
    memmove(text, rest, strlen(rest) + 1);
    c->earlier = text;
    return 0;
}

int curves_open(curves_file *c, const char *path, int steps, int append, int replace,
                char *why, size_t why_len)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->steps = steps;
    c->replaced = replace && !append;
    return append ? keep_earlier(c, why, why_len) : 0;
}

/* A text field as CSV writes it: quoted when it holds a comma or a quote
 * (a model spec such as "gpt:d=32,layers=2"). */
static void put_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fprintf(f, "%s,", s);
        return;
    }
    fputc('"', f);
    for (; *s; s++)
        fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
    fputs("\",", f);
}

/* Keeps one config's curve. 0, or -1 out of memory. */
static int keep_curve(curves_file *c, const result_row *key, int reverse, double lr,
                      const double *loss, const double *noise, const double *noise_err)
{
    if (c->count == c->capacity) {
        int cap = c->capacity ? 2 * c->capacity : 16;
        curve *grown = realloc(c->curves, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        c->curves = grown;
        c->capacity = cap;
    }
    curve *k = &c->curves[c->count];
    size_t n = (size_t)c->steps;
    if (!(k->loss = malloc(n * sizeof *k->loss)))
        return -1;
    k->noise = NULL;
    if (noise && !(k->noise = malloc(2 * n * sizeof *k->noise))) {
        free(k->loss);
        return -1;
    }
    if (noise) {
        memcpy(k->noise, noise, n * sizeof *noise);
        memcpy(k->noise + n, noise_err, n * sizeof *noise_err);
    }
    c->count++;
    k->key = *key;
    k->reverse = reverse;
    k->lr = lr;
    memcpy(k->loss, loss, (size_t)c->steps * sizeof *loss);
    return 0;
}

/* One curve's rows. */
static void put_rows(FILE *f, const curve *k, int steps)
{
    const result_row *key = &k->key;
    for (int t = 0; t < steps; t++) {
        put_text(f, key->backend);
        put_text(f, key->model);
        put_text(f, key->dtype);
        put_text(f, key->mode);
        put_text(f, key->reduction);
        fprintf(f, "%lld,%lld,%lld,%lld,", (long long)key->effective_batch,
                (long long)key->micro_batch, (long long)key->accum_steps,
                (long long)key->devices);
        put_text(f, key->sync);
        fprintf(f, "%s,%d,", k->reverse ? "reverse" : "forward", t);
        if (isfinite(k->loss[t])) /* a diverged step is empty */
            fprintf(f, "%.9g", k->loss[t]);
        fputc(',', f);
        put_text(f, key->recompute);
        put_text(f, key->shard);
        /* the rate trained at is a float: 7 digits name it ("0.0015", where
         * 9 wrote the float's own 0.00150000001 into every label) */
        fprintf(f, "%lld,%.*g,", (long long)key->arm, LR_CURVE_DIGITS, k->lr);
        /* the noise scale on the steps it was measured at, empty elsewhere */
        if (k->noise && isfinite(k->noise[t]) && isfinite(k->noise[steps + t]))
            fprintf(f, "%.6g,%.6g,", k->noise[t], k->noise[steps + t]);
        else
            fputs(",,", f);
        /* what the window's gradient was accumulated in: a bf16
         * accumulator's curve beside fp32's is the same config's */
        fprintf(f, "%s\n", key->grad_dtype);
    }
}

/* The same series but perhaps the accumulator's dtype: everything but the
 * split, the reduction and the order (curves at another learning rate are
 * another series). */
static int same_but_accumulator(const curve *ca, const curve *cb)
{
    const result_row *a = &ca->key, *b = &cb->key;
    return ca->lr == cb->lr && !strcmp(a->backend, b->backend) && !strcmp(a->model, b->model) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->mode, b->mode) &&
           !strcmp(a->sync, b->sync) && !strcmp(a->recompute, b->recompute) &&
           !strcmp(a->shard, b->shard) && a->effective_batch == b->effective_batch &&
           a->devices == b->devices;
}

static int same_series(const curve *a, const curve *b)
{
    return same_but_accumulator(a, b) && !strcmp(a->key.grad_dtype, b->key.grad_dtype);
}

/* Whether k's gradient was held in the accumulator every run had before
 * it was a lever (fp32, or a file from before the column): the curve a
 * rounding accumulator's is held to. */
static int reference_accumulator(const curve *k)
{
    int g = axis_find(&grad_dtype_axis, k->key.grad_dtype);
    return g < 0 || !grad_dtype_info_of(g)->rounds_bf16;
}

/* The largest difference between two curves; infinite where one has left
 * the numbers (a diverged loss). */
static double gap(const curve *a, const curve *b, int steps)
{
    double g = 0;
    for (int t = 0; t < steps; t++) {
        double d = fabs(a->loss[t] - b->loss[t]);
        if (!isfinite(d))
            return INFINITY;
        g = d > g ? d : g;
    }
    return g;
}

/* An exact reduction (its row's `exact`): the curve the others are held to. */
static int is_correct(const curve *k)
{
    return reduction_exact_named(k->key.reduction) == 1;
}

/* The correct curve of k's split in the forward order, or NULL. */
static const curve *correct_of(const curves_file *c, const curve *k)
{
    for (int i = 0; i < c->count; i++) {
        const curve *o = &c->curves[i];
        if (same_series(o, k) && is_correct(o) && !o->reverse &&
            o->key.micro_batch == k->key.micro_batch && o->key.arm == k->key.arm)
            return o;
    }
    return NULL;
}

static void max_into(double *g, double d)
{
    if (isnan(*g) || d > *g)
        *g = d;
}

/* Gaps of series `first`: [0] correct splits, [1] rounding, then one per
 * reduction (index 2 + reduction); NAN where nothing measured it. */
static void series_gaps(const curves_file *c, const curve *first, double *g)
{
    for (int i = 0; i < 2 + REDUCTION_COUNT; i++)
        g[i] = NAN;
    for (int i = 0; i < c->count; i++) {
        const curve *a = &c->curves[i], *ref = correct_of(c, a);
        if (!same_series(a, first) || !ref)
            continue;
        int r;
        if (a == ref) {
            for (int j = 0; j < c->count; j++) {
                const curve *b = &c->curves[j];
                if (b != a && same_series(a, b) && is_correct(b) && !b->reverse)
                    max_into(&g[0], gap(a, b, c->steps));
            }
        } else if (is_correct(a)) { /* the same split, another order */
            max_into(&g[1], gap(a, ref, c->steps));
        } else if (a->key.accum_steps * a->key.devices > 1 &&
                   (r = axis_find(&reduction_axis, a->key.reduction)) >= 0) {
            max_into(&g[2 + r], gap(a, ref, c->steps));
        }
    }
}

/* The largest gap between a rounding accumulator's correct curves in
 * series `first` and the same split's correct curve with the reference
 * accumulator: what the K roundings of the sum did to the loss. NAN where
 * no reference curve ran beside them (or `first` is the reference's). */
static double accumulator_gap(const curves_file *c, const curve *first)
{
    double g = NAN;
    if (reference_accumulator(first))
        return g;
    for (int i = 0; i < c->count; i++) {
        const curve *a = &c->curves[i];
        if (!same_series(a, first) || !is_correct(a) || a->reverse)
            continue;
        for (int j = 0; j < c->count; j++) {
            const curve *b = &c->curves[j];
            if (reference_accumulator(b) && same_but_accumulator(a, b) && is_correct(b) &&
                !b->reverse && b->key.micro_batch == a->key.micro_batch &&
                b->key.arm == a->key.arm)
                max_into(&g, gap(a, b, c->steps));
        }
    }
    return g;
}

/* " gap_NAME=G" where the gap was measured, nothing where it was not (a
 * split alone, a reduction not run or only at K = 1): a number on this line
 * is one the curves gave, never a nan that stands for none. */
static void put_gap(FILE *out, const char *name, double g)
{
    if (!isnan(g))
        fprintf(out, " gap_%s=%.3g", name, g);
}

/* " column=value" for each lever a summary line names: one that sets the
 * series apart, and one that varies only with ranks wherever the series
 * has ranks, as its sync is (" shard=none" on a data-parallel line). */
static void lever_keys(const result_row *key, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < LEVER_COUNT && used < len; i++) {
        const lever *l = &levers[i];
        const char *v = lever_in_result(l, key);
        if (lever_set(l, v) || (l->ranks_only && *v))
            used += (size_t)snprintf(out + used, len - used, " %s=%s", l->column, v);
    }
}

/* One series' line: "# curves SERIES steps=N: gap_correct_splits=...
 * gap_rounding=... gap_WRONG=..." with the gaps measured. */
static void summary_line(const curves_file *c, const curve *k, FILE *out)
{
    double g[2 + REDUCTION_COUNT];
    series_gaps(c, k, g);
    char keys[LEVER_COUNT * (RESULT_TEXT_LEN + 16)];
    lever_keys(&k->key, keys, sizeof keys);
    /* the rate where curves ran at more than one (--lr-grid) */
    char lr[48] = "";
    for (int i = 0; i < c->count && !lr[0]; i++)
        if (c->curves[i].lr != k->lr)
            snprintf(lr, sizeof lr, " lr=%.*g", LR_CURVE_DIGITS, k->lr);
    fprintf(out, CURVES_SUMMARY_PREFIX "%s %s %s %s effective_batch=%lld devices=%lld%s%s%s%s "
                 "steps=%d:",
            k->key.backend, k->key.model, k->key.dtype, k->key.mode,
            (long long)k->key.effective_batch, (long long)k->key.devices,
            k->key.sync[0] ? " sync=" : "", k->key.sync, keys, lr, c->steps);
    put_gap(out, "correct_splits", g[0]);
    put_gap(out, "rounding", g[1]);
    /* each known-wrong row's gap, by its name: the report and the chart
     * read the wrong reductions from these keys */
    for (int r = 0; r < REDUCTION_COUNT; r++)
        if (!reduction_info_of((reduction)r)->exact)
            put_gap(out, reduction_name((reduction)r), g[2 + r]);
    /* a rounding accumulator's distance from the reference's curve: not a
     * gap_ key, which names a known-wrong reduction to the report and the
     * chart */
    double acc = accumulator_gap(c, k);
    if (!isnan(acc))
        fprintf(out, " accumulator_gap=%.3g", acc);
    /* no correct reduction ran in the series: no curve to measure from */
    if (isnan(g[0]) && isnan(g[1]))
        fprintf(out, " no gap measured (no correct reduction beside the others)");
    fprintf(out, "\n");
}

/* Each series' summary line, once, to f. */
static void put_summaries(const curves_file *c, FILE *f)
{
    for (int i = 0; i < c->count; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = !same_series(&c->curves[j], &c->curves[i]);
        if (first)
            summary_line(c, &c->curves[i], f);
    }
}

/* The curves of the rows written, alone: what the file and the summary
 * lines are made of (gaps are measured between curves on disk only). */
static curves_file written_only(const curves_file *c)
{
    curves_file view = *c;
    view.count = c->rows;
    return view;
}

/* The whole file, for atomic_write_file: the earlier run's rows and
 * summaries as they were (--append), then this run's. */
static int write_curves(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    curves_file view = written_only(ctx);
    const curves_file *c = &view;
    fputs(CURVES_COMMENT, f);
    fputs(CURVES_HEADER, f);
    if (c->earlier)
        fputs(c->earlier, f);
    for (int i = 0; i < c->count; i++)
        put_rows(f, &c->curves[i], c->steps);
    put_summaries(c, f);
    return 0;
}

int curves_add(curves_file *c, const result_row *key, int reverse, double lr,
               const double *loss, const double *noise, const double *noise_err, char *why,
               size_t why_len)
{
    if (keep_curve(c, key, reverse, lr, loss, noise, noise_err)) {
        snprintf(why, why_len, "out of memory for the loss curves of %s", c->path);
        return -1;
    }
    return 0;
}

/* Moves the waiting curves of `row`'s config to the end of the written
 * ones, keeping the order of each; how many it moved. */
static int take_row(curves_file *c, const result_row *row)
{
    int moved = 0;
    for (int i = c->rows; i < c->count; i++) {
        if (!result_same_config(&c->curves[i].key, row))
            continue;
        curve k = c->curves[i];
        memmove(&c->curves[c->rows + 1], &c->curves[c->rows],
                (size_t)(i - c->rows) * sizeof *c->curves);
        c->curves[c->rows++] = k;
        c->unwritten++;
        moved++;
    }
    return moved;
}

int curves_written(const curves_file *c)
{
    return c->rows;
}

/* The replaced run's curves, and none of this run's yet: the file goes
 * once the row that replaces their rows is on disk. */
static int only_replaced(const curves_file *c)
{
    return c->replaced && !c->rows && !c->earlier;
}

int curves_row_job(curves_file *c, const result_row *row, atomic_file_job *job)
{
    c->taking = take_row(c, row);
    if ((!c->unwritten && !c->replaced) || only_replaced(c))
        return 0;
    /* Written whole with the CSV, while the run holds the file's lock;
     * write_curves writes the curves of the rows written alone. */
    *job = (atomic_file_job){c->path, write_curves, c};
    return 1;
}

int curves_row_done(curves_file *c, int written, char *why, size_t why_len)
{
    int taken = c->taking;
    c->taking = 0;
    if (!written) { /* take_row put them first among the waiting: back */
        c->rows -= taken;
        c->unwritten -= taken;
        return 0;
    }
    if (only_replaced(c) && unlink(c->path) && errno != ENOENT) {
        snprintf(why, why_len, "cannot remove the replaced run's loss curves %s: %s", c->path,
                 strerror(errno));
        return -1;
    }
    c->unwritten = 0, c->replaced = 0;
    return 0;
}

void curves_close(curves_file *c, FILE *echo)
{
    if (echo) {
        curves_file view = written_only(c);
        put_summaries(&view, echo);
    }
    for (int i = 0; i < c->count; i++) {
        free(c->curves[i].loss);
        free(c->curves[i].noise);
    }
    free(c->curves);
    free(c->earlier);
    memset(c, 0, sizeof *c);
}
