/* plan --find-max-micro (plan_probe.h): each dtype's and recompute
 * value's largest micro-batch, asked of the device allocation by
 * allocation, or from the exact need where the device is not here. */
#include "plan_probe.h"

#include <stdio.h>
#include <string.h>

#include "backend_registry.h"
#include "dispatch.h"
#include "plan_jobs.h"
#include "probe.h"

/* One recompute value's answer (printed under its name when --recompute
 * was given): 0 found, 1 none fits, 2 the backend failed; a kind that
 * cannot run the value says so and counts as found nothing. */
static int probe_one(const probe_args *a, backend *b, recompute r, size_t arithmetic_cap)
{
    const run_options *o = a->shared;
    model_spec model = o->models[0];
    char why[200];
    model.recompute = r;
    if (a->recompute_given)
        printf("recompute:          %s\n", recompute_name(r));
    if (!model_can_recompute(&model, why, sizeof why)) {
        printf("largest micro-batch: skipped: %s\n", why);
        return 1;
    }
    /* Over --devices each rank takes its share of the effective batch (the
     * largest share where they differ); its inputs are the whole batch's,
     * as a rank of run holds them. */
    int bound = a->max_micro, share = (a->effective + a->devices - 1) / a->devices;
    if (a->effective && (!bound || bound > share))
        bound = share;
    probe_request req = {.model = &model, .dtype = b->dtype, .optimizer = o->optimizer.kind,
                         .effective = a->effective, .input_buffers = o->buffers,
                         .max_micro = bound, .arithmetic_cap = arithmetic_cap,
                         .devices = a->devices};
    probe_result res;
    int rc = probe_find_max_micro(b, &req, &res);
    if (rc == BK_OK || rc == BK_OOM)
        probe_print(stdout, model.name, &req, &res, (size_t)o->mem_cap);
    if (rc == BK_OK && arithmetic_cap)
        probe_print_margin(stdout, backend_find(b->name)->label, &res, (size_t)o->mem_cap);
    if (rc != BK_OK)
        fprintf(stderr, "accubench: %s\n", b->error);
    return rc == BK_OK ? 0 : rc == BK_OOM ? 1 : 2;
}

/* Every recompute value's answer on b; the exit status is the worst. */
static int probe_each_recompute(const probe_args *a, backend *b, size_t arithmetic_cap)
{
    const run_options *o = a->shared;
    int worst = 0;
    for (int i = 0; i < o->n_recomputes && worst < 2; i++) {
        if (i)
            printf("\n");
        int rc = probe_one(a, b, o->recomputes[i], arithmetic_cap);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* The backend a plan from the arithmetic is for, where the one asked for
 * did not open: the named row, or under `auto` the first GPU row, if it
 * has an outline (it is built in); else NULL. */
static const backend_entry *arithmetic_target(const char *name)
{
    const backend_entry *e = strcmp(name, "auto") == 0 ? backend_first(1) : backend_find(name);
    return e && e->outline ? e : NULL;
}

/* No device to ask (none here, or none that computes in the dtype): with
 * --mem-cap the answer comes from the exact need against the cap, for the
 * GPU backend's arrangement; without, the reason and how to plan anyway. */
static int plan_from_arithmetic(const probe_args *a, const char *why_not_opened)
{
    const run_options *o = a->shared;
    const backend_entry *e = arithmetic_target(o->backend);
    if (!e) {
        fprintf(stderr, "accubench: %s\n", why_not_opened);
        return 2;
    }
    if (!o->mem_cap) {
        fprintf(stderr, "accubench: %s; with --mem-cap BYTES, plan answers for %s of that size "
                        "from the arithmetic\n", why_not_opened, e->label);
        return 2;
    }
    printf("planned for:        %s from the arithmetic, the exact need against --mem-cap%s: "
           "nothing allocated (%s)\n", e->label, a->reserve ? " less --reserve" : "",
           why_not_opened);
    int worst = 0;
    for (int i = 0; i < o->n_dtypes && worst < 2; i++) {
        backend b;
        e->outline(o->dtypes[i] == DTYPE_AUTO ? e->auto_dtype : o->dtypes[i], &b);
        if (i)
            printf("\n");
        int rc = probe_each_recompute(a, &b, (size_t)(o->mem_cap - a->reserve));
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* Every dtype's answers on the one open backend b (opened in the first it
 * computes in), in the order --dtype named them; a dtype it does not
 * compute in says so and counts as nothing found. The exit status is the
 * worst answer's. */
static int probe_each_dtype(const probe_args *a, backend *b)
{
    const run_options *o = a->shared;
    int worst = 0;
    for (int i = 0; i < o->n_dtypes && worst < 2; i++) {
        if (i)
            printf("\n");
        /* auto stands alone: the dtype b was opened in */
        if (o->dtypes[i] != DTYPE_AUTO && bk_use_dtype(b, o->dtypes[i]) != BK_OK) {
            printf("dtype:              %s\nlargest micro-batch: skipped: %s\n",
                   dtype_name(o->dtypes[i]), b->error);
            worst = worst > 1 ? worst : 1;
            continue;
        }
        int rc = probe_each_recompute(a, b, 0);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* plan --find-max-micro: ask the device, allocation by allocation, once
 * per dtype and recompute value; the exit status is the worst answer's. */
int plan_probe(const probe_args *a)
{
    const run_options *o = a->shared;
    if (!a->model_given || o->n_models != 1) {
        plan_usage_error("plan --find-max-micro needs one --model NAME");
        return 2;
    }
    if (a->devices > 1 && a->effective < a->devices) {
        plan_usage_error("plan --find-max-micro --devices N needs an --effective of at least "
                             "N examples (one a device)");
        return 2;
    }
    char note[400], why[400];
    const backend_entry *entry;
    backend *b;
    int at; /* opened in the first dtype it computes in: the others' order is no matter */
    int rc = backend_open_first(o->backend, o->dtypes, o->n_dtypes, &at, &b, &entry, note,
                                sizeof note, why, sizeof why);
    if (rc == BK_NO_DEVICE || rc == BK_UNSUPPORTED)
        return plan_from_arithmetic(a, why);
    if (rc != BK_OK) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    if (note[0])
        printf("%s\n", note);
    b->mem_cap = (size_t)(o->mem_cap - a->reserve);
    int worst = probe_each_dtype(a, b);
    b->ops->destroy(b);
    return worst;
}
