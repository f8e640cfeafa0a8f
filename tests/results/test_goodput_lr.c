/* A learning-rate grid whose curves diverged names no best rate: where
 * every rate of an E diverged, or the rate ahead over the steps its curves
 * share diverged later in its own, the point has no rate (not the first
 * in the file standing in as "best", nor at an edge of the grid), and
 * plan and the report say why. A grid with a curve that finished still
 * names its best. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "goodput_table.h"

static double loss[4][20];

/* Rates 0.1 and 0.2 at E = 256 (curves 0, 1) and at E = 512 (2, 3). */
static curves_table grid(void)
{
    curves_table ct = {.c = calloc(4, sizeof(read_curve)), .n = 4};
    for (int i = 0; i < 4; i++) {
        read_curve *c = &ct.c[i];
        strcpy(c->backend, "cpu"), strcpy(c->model, "tiny"), strcpy(c->dtype, "fp32");
        strcpy(c->mode, "async"), strcpy(c->reduction, "sum"), strcpy(c->recompute, "none");
        c->effective_batch = 256 << (i / 2), c->micro_batch = 128;
        c->accum_steps = c->effective_batch / 128, c->devices = 1, c->arm = 1;
        c->lr = 0.1 * (1 + i % 2), c->steps = 10, c->loss = loss[i];
        for (int t = 0; t < 20; t++)
            loss[i][t] = 4 - t * 0.1 * (1 + i % 2);
    }
    return ct;
}

static void test_every_rate_diverged(void)
{
    curves_table ct = grid();
    for (int i = 0; i < 2; i++) /* E = 256: both rates leave the numbers */
        for (int t = 3 + i; t < 10; t++)
            loss[i][t] = NAN;
    goodput_request req = {.target = 3.5, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    char text[1200];
    CHECK(goodput_build(&ct, NULL, 0, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        const goodput_point *p = &s->p[0];
        CHECK(p->e == 256 && p->lrs == 2 && isnan(p->final));
        CHECK(p->no_best == GOODPUT_ALL_DIVERGED && isnan(p->lr) && p->lr_edge == 0);
        CHECK(goodput_no_best_lr_why(p) &&
              strstr(goodput_no_best_lr_why(p), "every rate of its grid diverged"));
        CHECK(!*goodput_lr_edge_word(p));
        /* E = 512 finished: its best is named, and at its grid's top */
        CHECK(s->p[1].no_best == 0 && s->p[1].lr == 0.2 && s->p[1].lr_edge == 1);
        CHECK(!goodput_no_best_lr_why(&s->p[1]));
        CHECK(goodput_lr_edge_text(s, text, sizeof text) == 0 &&
              strstr(text, "the best rate of E = 512 is the largest") && !strstr(text, "256"));
        /* the charts' table leaves the rate empty: the key names none */
        char *table = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&table, &len);
        CHECK(f != NULL);
        if (f) {
            goodput_write_table(f, s, n);
            fclose(f);
            CHECK(strstr(table, "\n1,tiny,256,,") && strstr(table, "\n1,tiny,512,0.2,"));
            free(table);
        }
        goodput_free(s, n);
    }
    free(ct.c);
}

/* 0.2 falls faster over the 10 steps both ran, then diverges in its own
 * 20; 0.1 ran 10 and finished: the one ahead has no final loss. */
static void test_leader_diverged(void)
{
    curves_table ct = grid();
    ct.n = 2;
    ct.c[1].steps = 20;
    for (int t = 14; t < 20; t++)
        loss[1][t] = NAN;
    goodput_request req = {.target = 3.5, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    CHECK(goodput_build(&ct, NULL, 0, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        const goodput_point *p = &s->p[0];
        CHECK(p->lrs == 2 && p->curve == &ct.c[1] && isnan(p->final));
        CHECK(p->no_best == GOODPUT_LEADER_DIVERGED && isnan(p->lr) && p->lr_edge == 0);
        CHECK(goodput_no_best_lr_why(p) && strstr(goodput_no_best_lr_why(p), "diverged later"));
        goodput_free(s, n);
    }
    /* one rate alone is no grid: it is named, diverged or not, and no best */
    ct.n = 1;
    for (int t = 3; t < 10; t++)
        loss[0][t] = NAN;
    CHECK(goodput_build(&ct, NULL, 0, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].lrs == 1 && s->p[0].no_best == 0 && s->p[0].lr == 0.1);
        CHECK(!goodput_no_best_lr_why(&s->p[0]));
        goodput_free(s, n);
    }
    free(ct.c);
}

int main(void)
{
    test_every_rate_diverged();
    test_leader_diverged();
    return check_finish("test_goodput_lr");
}
