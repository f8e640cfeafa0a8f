#include "sweep_block.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_run.h"
#include "ranges.h"
#include "rounds.h"
#include "stop_signal.h"
#include "trace.h"
#include "sweep_row.h"

int rounds_on(const run_options *o)
{
    return o->rounds > 0 || (o->rounds == ROUNDS_AUTO && o->steps == 0);
}

int config_block_add(config_block *b, const config *c)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        config *grown = realloc(b->c, cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "accubench: out of host memory for the sweep's configs\n");
            return -1;
        }
        b->c = grown;
        b->cap = cap;
    }
    b->c[b->n++] = *c;
    return 0;
}

void config_block_free(config_block *b)
{
    free(b->c);
    memset(b, 0, sizeof *b);
}

/* A member timed alone (the only one of its comparison left to time): its
 * runner set up again where it was let go, then timed as config_run times. */
static void time_alone(sweep *s, sweep_place *p, round_member *mb, int resident)
{
    progress_config_resume(s->progress, &mb->mark, 0);
    config_range_push(mb->c);
    model *m = &p->m[mb->c->dtype];
    dataset *d = &p->d[mb->c->dtype];
    config_use(s, mb->c, m);
    int rc = resident ? step_runner_resume(&mb->run)
                      : config_runner_setup(s, m, d, mb->c, &mb->run);
    if (rc) {
        row_status_from(mb->r, rc, s->b);
        step_runner_free(&mb->run);
    } else {
        config_time_prepared(s, m, d, mb->c, &mb->run, mb->r);
    }
    range_pop();
}

/* The row of member i's first arm where i is a config's second (an A/A
 * check) and the first was prepared before it and passed its checks. */
static const result_row *first_arm_checked(const round_member *mem, size_t i)
{
    if (!RESULT_SECOND_ARM(mem[i].c))
        return NULL;
    for (size_t j = 0; j < i; j++)
        if (mem[j].live && result_same_config_but(mem[j].r, mem[i].r, "arm"))
            return mem[j].r;
    return NULL;
}

/* Prepares each member (its row started, its runner set up and checked);
 * a member not resident lets its runner go once checked. Each is announced
 * in turn (as its checks begin, or at once where it cannot run) and set
 * aside in the progress until the rounds end. */
static void prepare(sweep *s, round_member *mem, size_t n, int resident)
{
    for (size_t i = 0; i < n && !stop_signal; i++) {
        round_member *mb = &mem[i];
        progress_config_resume(s->progress, &mb->mark, 1);
        if (!mb->live)
            continue;
        config_range_push(mb->c);
        mb->live = config_prepare(s, mb->m, mb->d, mb->c, &mb->run, mb->r, &mb->own_bytes,
                                  first_arm_checked(mem, i));
        progress_config_checked(s->progress, mb->live);
        if (mb->live && !resident)
            step_runner_free(&mb->run);
        range_pop();
        progress_config_set_aside(s->progress, &mb->mark);
    }
}

/* The members of one shard value: started, prepared, timed, written. */
static int run_group(sweep *s, sweep_place *p, const config *const *cs, size_t n)
{
    round_member *mem = calloc(n, sizeof *mem);
    result_row *rows = calloc(n, sizeof *rows);
    int failed = !mem || !rows;
    if (failed)
        fprintf(stderr, "accubench: out of host memory for the sweep's rows\n");
    else
        progress_group_begin(s->progress, (int)n);
    for (size_t i = 0; !failed && i < n; i++) {
        /* its dtype's model and data: a comparison may hold several */
        mem[i] = (round_member){.c = cs[i], .r = &rows[i], .m = &p->m[cs[i]->dtype],
                                .d = &p->d[cs[i]->dtype]};
        /* a row that cannot run is final here; its progress too */
        mem[i].live = sweep_row_start(s, p, cs[i], &rows[i]);
        progress_config_set_aside(s->progress, &mem[i].mark);
    }
    int resident = !failed && rounds_resident(s, mem, n);
    if (!failed)
        prepare(s, mem, n, resident);
    size_t live = 0;
    for (size_t i = 0; !failed && i < n; i++)
        live += mem[i].live;
    uint64_t t0 = trace_now_ns();
    if (!failed && !stop_signal && live >= 2) {
        rounds_run(s, mem, n, resident);
    } else {
        for (size_t i = 0; !failed && i < n; i++)
            if (mem[i].live && !stop_signal)
                time_alone(s, p, &mem[i], resident);
            else if (mem[i].live)
                step_runner_free(&mem[i].run);
    }
    double shared_s = live ? (double)(trace_now_ns() - t0) / 1e9 / (double)live : 0;
    /* An interrupted comparison's rows are not complete: none is written. */
    for (size_t i = 0; !failed && !stop_signal && i < n; i++) {
        const result_row *r = &rows[i];
        progress_config_done_marked(s->progress, &mem[i].mark, r->step_ms_median, r->pass_ms,
                                    (long long)r->samples,
                                    (int)(r->rounds + r->rounds_dropped), shared_s);
        failed = sweep_row_write(s, r) != 0;
    }
    progress_group_end(s->progress);
    free(mem);
    free(rows);
    return failed ? -1 : 0;
}

/* The block's configs by shard value (each cuts the model's state its own
 * way, so only configs of one value can be set up side by side), in the
 * order the sweep gave them. */
int sweep_block_run(sweep *s, sweep_place *p, config_block *b)
{
    const config **group = malloc((b->n ? b->n : 1) * sizeof *group);
    char *done = calloc(b->n ? b->n : 1, 1);
    int failed = !group || !done;
    if (failed)
        fprintf(stderr, "accubench: out of host memory for the sweep's configs\n");
    for (size_t i = 0; !failed && !stop_signal && i < b->n; i++) {
        if (done[i])
            continue;
        size_t n = 0;
        for (size_t j = i; j < b->n; j++)
            if (!done[j] && b->c[j].shard == b->c[i].shard) {
                group[n++] = &b->c[j];
                done[j] = 1;
            }
        failed = run_group(s, p, group, n);
    }
    free(group);
    free(done);
    b->n = 0;
    return failed ? -1 : 0;
}
