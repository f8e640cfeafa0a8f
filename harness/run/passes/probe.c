#include "probe.h"

#include <string.h>

#include "dispatch.h"
#include "memory_fit.h"
#include "optimizer.h"
#include "plural.h"
#include "report_parts.h"
#include "split.h"

int probe_fits(backend *b, const memory_need *need)
{
    enum { N = MEMORY_NEED_PARTS };
    size_t pieces[N];
    memory_need_parts(need, pieces);
    void *p[N] = {0};
    int rc = BK_OK;
    for (int i = 0; i < N && rc == BK_OK; i++)
        if (pieces[i])
            rc = bk_alloc(b, pieces[i], &p[i]);
    for (int i = N - 1; i >= 0; i--)
        bk_free(b, p[i], pieces[i]);
    return rc;
}

/* The need of a candidate micro-batch on b, with the effective batch it
 * plans for (the candidate itself when none was given). */
static void need_of(const backend *b, const probe_request *req, int micro, memory_need *need)
{
    int effective = req->effective ? req->effective : micro;
    model_spec spec = *req->model;
    model_spec_on(&spec, b);
    model_memory_need(&spec, req->dtype, req->optimizer, micro, effective, req->input_buffers,
                      need);
}

/* A candidate fits where run would let it run (memory_fit: the device's
 * usable share, with the gradient check's host copies where they share
 * it) and the device gives every piece of its need. */
static int try_micro(backend *b, const probe_request *req, int micro, probe_result *out)
{
    memory_need need;
    need_of(b, req, micro, &need);
    out->probes++;
    char why[sizeof b->error];
    if (!memory_fit(b, need.total, model_param_count(req->model), why, sizeof why)) {
        snprintf(b->error, sizeof b->error, "a micro-batch of %d %s", micro, why);
        return BK_OOM;
    }
    if (!req->arithmetic_cap)
        return probe_fits(b, &need);
    if (need.total <= req->arithmetic_cap)
        return BK_OK;
    snprintf(b->error, sizeof b->error, "a micro-batch of %d needs %zu bytes, over %zu", micro,
             need.total, req->arithmetic_cap);
    return BK_OOM;
}

int probe_find_max_micro(backend *b, const probe_request *req, probe_result *out)
{
    memset(out, 0, sizeof *out);
    int bound = req->max_micro > 0 ? req->max_micro
                : req->effective   ? req->effective
                                   : PROBE_DEFAULT_MAX_MICRO;
    if (req->effective && bound > req->effective)
        bound = req->effective; /* a micro-batch never exceeds the effective batch */
    out->bound = bound;

    /* Invariant: `fits` fits (0 stands for nothing yet), `fails` does not
     * (bound + 1 stands for nothing tried). Sizes only grow with the
     * micro-batch, so the answer lies in between. The bound goes first:
     * often everything fits. */
    int fits = 0, fails = bound + 1;
    for (int micro = bound; fails - fits > 1; micro = fits + (fails - fits) / 2) {
        int rc = try_micro(b, req, micro, out);
        if (rc == BK_OK)
            fits = micro;
        else if (rc == BK_OOM)
            fails = micro;
        else
            return rc;
    }

    out->micro = fits;
    out->effective = req->effective ? req->effective : fits;
    if (!fits) {
        need_of(b, req, 1, &out->need); /* what the answer says is too much */
        char reason[sizeof b->error];
        snprintf(reason, sizeof reason, "%s", b->error);
        snprintf(b->error, sizeof b->error, "not even a micro-batch of 1 fits: %s", reason);
        return BK_OOM;
    }
    /* The split run would take at that size: dealt over the ranks as run
     * deals it, a smaller micro-batch where the largest leaves a rank
     * without a part of the last one (always the largest on one device). */
    out->devices = req->devices > 1 ? req->devices : 1;
    split sp;
    char why[200];
    if (split_make_sharded_largest(out->effective, fits, out->devices, &sp, why, sizeof why)) {
        snprintf(b->error, sizeof b->error, "a micro-batch of %d fits, but no micro-batch up "
                 "to it splits the effective batch: %s", fits, why);
        out->micro = 0;
        out->fits = fits;
        return BK_OOM;
    }
    out->fits = fits;
    out->micro = sp.micro;
    out->accum = sp.accum;
    out->last = sp.last;
    need_of(b, req, out->micro, &out->need);
    return BK_OK;
}

/* The need's total and its pieces; `at` (may be empty) after the heading. */
static void print_need(FILE *f, const probe_request *req, const memory_need *n, const char *at)
{
    fprintf(f, "memory need%s%s:%*s%zu bytes (%s)\n", *at ? " " : "", at,
            *at ? 1 : 8, "", n->total, rp_bytes((int64_t)n->total).s);
    fprintf(f, "  weights %zu, compute copy %zu, gradients %zu, optimizer %zu,\n"
               "  activations %zu, loss sum %zu, inputs %zu (%d %s)\n",
            n->weights, n->master_copy, n->gradients, n->optimizer_state, n->activations,
            n->loss_sum, n->inputs, req->input_buffers,
            plural(req->input_buffers, "buffer", "buffers"));
}

void probe_print(FILE *f, const char *model_name, const probe_request *req,
                 const probe_result *r, size_t mem_cap)
{
    fprintf(f, "model:              %s (%s, %s)\n", model_name, dtype_name(req->dtype),
            optimizer_name(req->optimizer));
    if (mem_cap)
        fprintf(f, "memory cap:         %zu bytes (%s)\n", mem_cap, rp_bytes((int64_t)mem_cap).s);
    else
        fprintf(f, "memory cap:         none (run's own rule: %.0f%% of the device's memory, "
                   "less the gradient check's host copies where they share it)\n",
                MEMORY_FIT_USABLE_SHARE * 100);
    if (!r->micro && r->fits) {
        fprintf(f, "largest micro-batch: none splits %d examples over %d devices (%d fits; "
                   "%d %s)\n", r->effective, r->devices, r->fits, r->probes,
                plural(r->probes, "probe", "probes"));
        return;
    }
    if (!r->micro) {
        fprintf(f, "largest micro-batch: none fits (%d %s)\n", r->probes,
                plural(r->probes, "probe", "probes"));
        print_need(f, req, &r->need, "at micro-batch 1");
        /* the state every micro-batch holds: where it alone passes the
         * cap, no split helps, and the levers that cut it are named */
        size_t state = r->need.weights + r->need.master_copy + r->need.gradients +
                       r->need.optimizer_state;
        if (mem_cap && state > mem_cap)
            fprintf(f, "  the model's state alone (weights, compute copy, gradients, optimizer: "
                       "%s) passes the cap: no split helps; ZeRO's shards across ranks "
                       "(run --shard, under mpirun) cut it%s\n", rp_bytes((int64_t)state).s,
                    r->need.optimizer_state ? ", and SGD (--optimizer sgd) keeps no optimizer "
                                              "state" : "");
        return;
    }
    fprintf(f, "largest micro-batch: %d%s (%d %s)\n", r->micro,
            r->micro == r->bound ? ", the largest considered" : "", r->probes,
            plural(r->probes, "probe", "probes"));
    if (r->fits > r->micro)
        fprintf(f, "  (%d fits; %d is the largest that gives each of the %d devices a part "
                   "of the last micro-batch)\n", r->fits, r->micro, r->devices);
    print_need(f, req, &r->need, "");
    if (!req->effective) {
        /* the inputs held grow with the effective batch: this answer is
         * for none larger than the micro-batch */
        fprintf(f, "effective batch:    none given: the answer holds for %d unaccumulated; "
                   "--effective E plans for E (its inputs take memory too)\n", r->micro);
        return;
    }
    int devices = r->devices > 1 ? r->devices : 1, share = r->effective / devices;
    int ragged = r->effective % devices != 0; /* the ranks' shares differ by one */
    fprintf(f, "effective batch:    %d\n", r->effective);
    if (devices > 1 && ragged)
        fprintf(f, "devices:            %d (%d or %d examples each)\n", devices, share,
                share + 1);
    else if (devices > 1)
        fprintf(f, "devices:            %d (%d examples each)\n", devices, share);
    fprintf(f, "accumulation steps: %d%s\n", r->accum, devices > 1 ? " on each device" : "");
    if (r->last == r->micro)
        return;
    fprintf(f, "last micro-batch:   %d%s (the division is not whole)\n", r->last,
            ragged ? " at most" : "");
    if (ragged)
        return; /* no micro-batch divides shares that differ */
    int even = r->micro;
    while (share % even)
        even--;
    fprintf(f, "even split:         %d x %d (the largest micro-batch that divides %d)\n",
            even, share / even, share);
}

void probe_print_margin(FILE *f, const char *device_label, const probe_result *r, size_t cap)
{
    if (!r->micro)
        return;
    size_t margin = cap - r->need.total;
    fprintf(f, "margin:             %zu bytes (%s) under the cap, for what the need "
               "does not count\n"
               "  on %s: the runtime's context, the GEMM library's workspace, the allocator's "
               "rounding and reserve\n"
               "  (a run there measures them: mem_held_bytes - mem_need_bytes; --reserve keeps "
               "them)\n",
            margin, rp_bytes((int64_t)margin).s, device_label);
}
