/* The curves file read back (curves_read.h). */
#include "curves_read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void curves_path_beside(const char *main_csv, char *out, size_t len)
{
    size_t n = strlen(main_csv);
    if (n > 4 && !strcmp(main_csv + n - 4, ".csv"))
        n -= 4;
    snprintf(out, len, "%.*s.curves.csv", (int)n, main_csv);
}

enum { C_BACKEND, C_MODEL, C_DTYPE, C_MODE, C_REDUCTION, C_E, C_MICRO, C_K, C_DEVICES, C_SYNC,
       C_ORDER, C_STEP, C_LOSS, C_RECOMPUTE, C_SHARD, C_ARM, C_LR, C_NOISE, C_NOISE_ERR,
       C_COUNT };
static const char *const COLUMN[C_COUNT] = {
    "backend", "model", "dtype", "mode", "reduction", "effective_batch", "micro_batch",
    "accum_steps", "devices", "sync", "order", "step", "loss", "recompute", "shard", "arm", "lr",
    "grad_noise_scale", "grad_noise_scale_err"};
/* Columns a file from before them lacks: read as empty. */
#define C_FIRST_OPTIONAL C_RECOMPUTE

#define MAX_FIELDS 64

/* Splits a line in place into at most MAX_FIELDS fields: a quoted field
 * loses its quotes (a doubled quote is one) and its commas become ';'. */
static size_t split_quoted(char *line, char **field)
{
    size_t n = 0;
    char *w = line, *p = line;
    for (;;) {
        if (n == MAX_FIELDS)
            return n;
        field[n++] = w;
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

static const char *cell(char **f, size_t n, const int *at, int c)
{
    return at[c] >= 0 && (size_t)at[c] < n ? f[at[c]] : "";
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
            c->effective_batch == k->effective_batch && c->micro_batch == k->micro_batch &&
            c->accum_steps == k->accum_steps && c->devices == k->devices && c->arm == k->arm &&
            c->reverse == k->reverse &&
            (c->lr == k->lr || (isnan(c->lr) && isnan(k->lr))))
            return c;
    }
    return NULL;
}

static int add_row(curves_table *t, size_t *cap, char **f, size_t n, const int *at)
{
    read_curve k = {.lr = NAN};
    snprintf(k.backend, CURVE_TEXT, "%s", cell(f, n, at, C_BACKEND));
    snprintf(k.model, CURVE_TEXT, "%s", cell(f, n, at, C_MODEL));
    snprintf(k.dtype, CURVE_TEXT, "%s", cell(f, n, at, C_DTYPE));
    snprintf(k.mode, CURVE_TEXT, "%s", cell(f, n, at, C_MODE));
    snprintf(k.reduction, CURVE_TEXT, "%s", cell(f, n, at, C_REDUCTION));
    snprintf(k.sync, CURVE_TEXT, "%s", cell(f, n, at, C_SYNC));
    snprintf(k.recompute, CURVE_TEXT, "%s", cell(f, n, at, C_RECOMPUTE));
    snprintf(k.shard, CURVE_TEXT, "%s", cell(f, n, at, C_SHARD));
    k.effective_batch = atoll(cell(f, n, at, C_E));
    k.micro_batch = atoll(cell(f, n, at, C_MICRO));
    k.accum_steps = atoll(cell(f, n, at, C_K));
    k.devices = atoll(cell(f, n, at, C_DEVICES));
    k.arm = atoll(cell(f, n, at, C_ARM));
    k.reverse = !strcmp(cell(f, n, at, C_ORDER), "reverse");
    const char *lr = cell(f, n, at, C_LR);
    if (*lr)
        k.lr = strtod(lr, NULL);
    long step = strtol(cell(f, n, at, C_STEP), NULL, 10);
    if (step < 0 || step > 10000000)
        return 0; /* not a step: the row says nothing */
    const char *ls = cell(f, n, at, C_LOSS), *ns = cell(f, n, at, C_NOISE),
               *es = cell(f, n, at, C_NOISE_ERR);
    double loss = *ls ? strtod(ls, NULL) : NAN;
    double noise = *ns ? strtod(ns, NULL) : NAN, noise_err = *es ? strtod(es, NULL) : NAN;
    read_curve *c = curve_of(t, &k);
    if (!c) {
        if (t->n == *cap) {
            size_t grown_cap = *cap ? 2 * *cap : 16;
            read_curve *g = realloc(t->c, grown_cap * sizeof *g);
            if (!g)
                return -1;
            t->c = g;
            *cap = grown_cap;
        }
        c = &t->c[t->n++];
        *c = k;
    }
    if (step >= c->steps) {
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
            return -1;
        for (long s = c->steps; s <= step; s++)
            c->loss[s] = c->noise[s] = c->noise_err[s] = NAN;
        c->steps = (int)step + 1;
    }
    c->loss[step] = loss;
    c->noise[step] = noise;
    c->noise_err[step] = noise_err;
    return 0;
}

int curves_read(const char *path, curves_table *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 1;
        say(why, why_len, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL, *field[MAX_FIELDS];
    size_t line_cap = 0, cap = 0;
    int at[C_COUNT], header = 0, rc = 0;
    while (getline(&line, &line_cap, f) >= 0) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!*line || *line == '#')
            continue;
        size_t n = split_quoted(line, field);
        if (!header) {
            for (int c = 0; c < C_COUNT; c++) {
                at[c] = -1;
                for (size_t i = 0; i < n; i++)
                    if (!strcmp(field[i], COLUMN[c]))
                        at[c] = (int)i;
                if (at[c] < 0 && c < C_FIRST_OPTIONAL) {
                    say(why, why_len, "%s: not a curves file (no %s column)", path, COLUMN[c]);
                    rc = -1;
                    break;
                }
            }
            if (rc)
                break;
            header = 1;
            continue;
        }
        if (add_row(out, &cap, field, n, at)) {
            say(why, why_len, "%s: out of memory", path);
            rc = -1;
            break;
        }
    }
    free(line);
    fclose(f);
    if (!rc && !header) {
        say(why, why_len, "%s: not a curves file (no header row)", path);
        rc = -1;
    }
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
