#include "noise_row.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "noise_pass.h"
#include "stop_signal.h"

/* The last figure measured, and what it depends on: the model, its dtype,
 * the split, the data's seed and the pass's limits; not the reduction,
 * mode, sync or optimizer (each small batch is normalised by its own valid
 * items, from the starting weights, outside the step runner). The configs
 * that differ only in those follow one another in the sweep and take it
 * instead of measuring it again. Every rank walks the same configs, so all
 * reuse together and none waits in the pass's all-reduces alone. */
typedef struct noise_memo {
    int valid;
    model_spec spec;
    dtype dtype;
    split sp;
    uint64_t seed;
    int windows;
    double time_s;
    noise_result n;
} noise_memo;

static noise_memo last;

static int memo_matches(const noise_memo *k, const config *cfg, double time_s)
{
    const model_spec *a = &k->spec, *b = cfg->model;
    return k->valid && a->kind == b->kind && !memcmp(a->dims, b->dims, sizeof a->dims) &&
           !strcmp(a->name, b->name) && k->dtype == cfg->dtype &&
           !memcmp(&k->sp, &cfg->sp, sizeof k->sp) && k->seed == cfg->seed &&
           k->windows == cfg->noise_windows && k->time_s == time_s;
}

/* The pass, or the last figure where it is this config's too. */
static int measure_noise(model *m, const config *cfg, comm *c, double time_s, noise_result *n,
                         int *windows_run)
{
    if (memo_matches(&last, cfg, time_s)) {
        *n = last.n;
        return BK_OK;
    }
    last.valid = 0;
    noise_pass_options no = {.windows = cfg->noise_windows, .seed = cfg->seed, .comm = c,
                             .time_s = time_s, .stop = &stop_signal};
    int rc = noise_pass_run(m, &cfg->sp, &no, n);
    *windows_run = rc ? 0 : n->windows_run;
    if (!rc)
        last = (noise_memo){.valid = 1, .spec = *cfg->model, .dtype = cfg->dtype,
                            .sp = cfg->sp, .seed = cfg->seed, .windows = cfg->noise_windows,
                            .time_s = time_s, .n = *n};
    return rc;
}

/* The row has no noise scale: why, in its note and in p (the dump says it
 * too). */
static void no_scale(result_row *r, noise_row_pass *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void no_scale(result_row *r, noise_row_pass *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->none, sizeof p->none, fmt, ap);
    va_end(ap);
    row_note(r, "%s", p->none);
}

int noise_row_fill(model *m, const config *cfg, comm *c, result_row *r, noise_row_pass *p)
{
    const split *sp = &cfg->sp;
    *p = (noise_row_pass){0};
    if (cfg->noise_windows == 0) { /* asked for none: the row says nothing */
        snprintf(p->none, sizeof p->none, "no noise scale: --noise-windows 0");
        return BK_OK;
    }
    if (sp->accum * sp->devices < 2) {
        no_scale(r, p, "no noise scale: one micro-batch per window, nothing to compare the "
                       "window with");
        return BK_OK;
    }
    /* A share of the config's time, as the timed pass keeps to --budget-s:
     * the windows asked for, or fewer where the share runs out first. */
    double time_s = cfg->budget.budget_s * NOISE_BUDGET_SHARE;
    noise_result n;
    int rc = measure_noise(m, cfg, c, time_s, &n, &p->windows_run);
    if (rc)
        return rc;
    p->windows_complete = n.windows_complete;
    /* A window counts only where two of its small batches hold valid items
     * (a small batch of padding alone adds nothing): at micro-batch 1 and
     * few windows, fewer than the two the estimate needs may. */
    if (n.windows < 2) {
        no_scale(r, p, "no noise scale: %d of the %d windows run had two small batches with "
                       "valid items (one of padding alone adds nothing) and it takes 2; more "
                       "--noise-windows or a larger micro-batch", n.windows, n.windows_run);
        return BK_OK;
    }
    if (n.windows_run < cfg->noise_windows) /* the error column is over these windows */
        row_note(r, "noise scale from %d of %d windows: the pass keeps to %g of --budget-s "
                    "(%.3g s)", n.windows_run, cfg->noise_windows, NOISE_BUDGET_SHARE, time_s);
    r->grad_sq_micro = n.small_sq;
    r->grad_sq_window = n.window_sq;
    /* Both estimates are differences of noisy means: either can come out
     * zero or negative when the noise swamps the gradient, and a ratio of
     * them is then no noise scale at all: left empty, the reason said. */
    if (!(n.grad_sq > 0 && n.b_simple > 0)) {
        no_scale(r, p, "no noise scale: the %s estimate is not positive (%.3g; the gradient is "
                       "mostly noise at this micro-batch); more --noise-windows or a longer "
                       "--budget-s", n.grad_sq > 0 ? "tr(Sigma)" : "|G|^2",
                 n.grad_sq > 0 ? n.trace_sigma : n.grad_sq);
        return BK_OK;
    }
    noise_in_examples(&n, sp->global, &r->grad_noise_scale, &r->grad_noise_scale_err);
    r->noise_windows = n.windows;
    return BK_OK;
}

/* B_simple counts valid items (tokens for the GPT); E counts examples,
 * padding included: the scale in examples, so that E / it is a ratio. */
int noise_in_examples(const noise_result *n, int global, double *b, double *err)
{
    double per_example = n->window_valid / global;
    if (!(n->windows > 0 && n->grad_sq > 0 && n->b_simple > 0 && per_example > 0))
        return -1;
    *b = n->b_simple / per_example;
    *err = n->b_simple_err / per_example;
    return 0;
}
