/* The models and data the sweep's place holds (sweep_state.h), one of
 * each in every dtype of the run, each made with the backend switched to
 * its dtype; what each dtype's hold is kept in sweep.held. */
#include "sweep_models.h"

#include <stdio.h>
#include <string.h>

#include "config_run.h"
#include "dispatch.h"
#include "dp_check.h"
#include "sweep_row.h"

/* Whether the least a row of config c's recompute value needs fits: its
 * state with one example's activations and data. Under mpirun, as one rank
 * keeps them where the run shards them: the least any device count and
 * shard value of the run needs a rank. */
static int recompute_fits(const sweep *s, const run_options *o, const config *c)
{
    result_row r;
    config one = *c;
    one.sp = (split){.effective = 1, .global = 1, .micro = 1, .accum = 1, .last = 1,
                     .devices = 1};
    one.data_parallel = 0;
    sweep_row_fill(&r, s, &one);
    int fit = sweep_row_fits(s, &r);
    if (fit || !s->world)
        return fit;
    one.data_parallel = 1;
    int n_devices = o->n_devices ? o->n_devices : 1;
    for (int d = 0; d < n_devices; d++)
        for (int h = 0; h < o->n_shards; h++) {
            one.sp.devices = o->n_devices ? o->devices[d] : s->world->size;
            one.shard = o->shards[h];
            sweep_row_fill(&r, s, &one);
            if (sweep_row_fits(s, &r))
                return 1;
        }
    return 0;
}

/* If not even the least any row of the model needs fits, no split of it
 * can, and it is not made (each row made is then held to its own need).
 * The least over every recompute value the run has and the kind runs: the
 * activations differ with it, and c is only the first (under `none`, a
 * model whose `block` rows fit was not made for them, and they were oom
 * rows that said nothing). */
static int model_fits(const sweep *s, const run_options *o, const config *c)
{
    config one = *c;
    char why[200];
    for (int i = 0; i < (o->n_recomputes ? o->n_recomputes : 1); i++) {
        if (o->n_recomputes)
            one.recompute = o->recomputes[i];
        model_spec spec = config_model_spec(&one);
        if (model_can_recompute(&spec, why, sizeof why) && recompute_fits(s, o, &one))
            return 1;
    }
    return 0;
}

/* Every rank has made it (rc BK_OK), or none goes on: the worst status;
 * `what` for the rank that made it while another did not. */
static int agree_made(sweep *s, int rc, const char *what)
{
    if (!s->world)
        return rc;
    int worst = dp_agree_status(s->world, rc);
    if (worst && !rc)
        snprintf(s->b->error, sizeof s->b->error, "another rank could not make the %s", what);
    return worst;
}

/* The dtypes the run's configs compute in: the options' list, or the one
 * a config made by hand names. */
static int run_dtypes(const run_options *o, const config *c, const dtype **out)
{
    *out = o->n_dtypes ? o->dtypes : &c->dtype;
    return o->n_dtypes ? o->n_dtypes : 1;
}

/* The models of config c, one in each dtype of the run (each made with
 * the backend in its dtype, so stored in it). A dtype whose model could
 * not be made (or whose state alone does not fit) has none, and its rows
 * say why (sweep_row_start); the others run. */
void sweep_open_models(sweep *s, const run_options *o, sweep_place *p, const config *c)
{
    const dtype *dts;
    int n = run_dtypes(o, c, &dts);
    for (int i = 0; i < n; i++) {
        config one = *c;
        one.dtype = dts[i];
        size_t before = s->b->mem_in_use;
        (void)bk_use_dtype(s->b, one.dtype); /* validated when the sweep began */
        /* Each rank may have its own cap: made on every rank or on none,
         * or one rank would agree on a model the others never made. */
        int fit = model_fits(s, o, &one);
        if (s->world)
            fit = dp_agree_all(s->world, fit);
        int rc = fit ? model_create(s->b, c->model, &o->optimizer, c->seed, &p->m[one.dtype])
                     : BK_OK;
        if (fit) {
            int worst = agree_made(s, rc, "model");
            if (worst && !rc)
                model_destroy(&p->m[one.dtype]);
            rc = worst;
        }
        p->model_rc[one.dtype] = rc;
        snprintf(p->model_why[one.dtype], sizeof p->model_why[one.dtype], "%s",
                 rc ? s->b->error : "");
        s->held[one.dtype] = s->b->mem_in_use - before;
    }
}

/* Each model's data, in its dtype. */
void sweep_open_data(sweep *s, sweep_place *p, const config *c)
{
    for (int d = 0; d < DTYPE_COUNT; d++) {
        if (!p->m[d].b)
            continue;
        input_spec in;
        model_input(&p->m[d].spec, &in);
        (void)bk_use_dtype(s->b, (dtype)d);
        size_t before = s->b->mem_in_use;
        int rc = dataset_create(s->b, &in, c->sp.global, c->buffers, c->seed, &p->d[d]);
        int worst = agree_made(s, rc, "data");
        if (worst && !rc)
            dataset_destroy(&p->d[d]);
        p->data_rc[d] = worst;
        s->held[d] += s->b->mem_in_use - before;
    }
}

/* The data of every dtype let go, and what it held. */
void sweep_close_data(sweep *s, sweep_place *p)
{
    for (int d = 0; d < DTYPE_COUNT; d++) {
        size_t before = s->b->mem_in_use;
        if (p->m[d].b && !p->data_rc[d])
            dataset_destroy(&p->d[d]);
        s->held[d] -= before - s->b->mem_in_use;
    }
}
