/* The loss curves' trainer (train_curves.h): a curve that diverges keeps
 * the loss it diverged at and is empty after it, so its readers
 * (final_loss, the default target, the gaps) know it diverged by its
 * empty last step; one that diverges at its last step has no step after
 * it, and that step is left empty itself. It was kept, the curve read as
 * trained on, and its final loss (past three times its start) set the
 * default target above every E's start: each met it at step 0. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "cpu_backend.h"
#include "goodput.h"
#include "test_spec.h"
#include "train_curves.h"

enum { LONG = 40 };

/* The tiny MLP on SGD at a rate that blows it up within LONG steps. */
static int train(model *m, int steps, double *loss)
{
    char why[200];
    split sp;
    CHECK(split_make(8, 8, 1, &sp, why, sizeof why) == 0);
    int interrupted = 0;
    curve_run o = {.steps = steps, .seed = 5, .mode = MODE_ASYNC, .red = REDUCTION_SUM,
                   .sync = SYNC_WINDOW, .interrupted = &interrupted};
    return train_curve_run(m, &sp, &o, loss);
}

static void test_diverged_at_last_step(void)
{
    static const optimizer_config SGD = {OPT_SGD, 9.0f, 0, 0, 0, 0, OPT_AT_STEP};
    model_spec tiny = test_spec("tiny");
    backend *b = NULL;
    char why[200];
    model m;
    if (cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "cpu backend: %s\n", why);
        CHECK(0);
        return;
    }
    CHECK(model_create(b, &tiny, &SGD, 7, &m) == BK_OK);
    double loss[LONG];
    CHECK(train(&m, LONG, loss) == BK_OK);
    /* the step it diverged at: the last with a loss */
    int at = -1;
    for (int t = 0; t < LONG; t++)
        if (isfinite(loss[t]))
            at = t;
    fprintf(stderr, "  diverged at step %d of %d (loss %.4g, start %.4g)\n", at, LONG,
            at >= 0 ? loss[at] : NAN, loss[0]);
    CHECK(at > 0 && at < LONG - 1); /* the rate does blow it up, after step 0 */
    if (at > 0 && at < LONG - 1) {
        CHECK(loss[at] > 3 * loss[0]); /* kept: how it left */
        CHECK(isnan(final_loss(loss, LONG, 0)));
        /* the same curve cut at the step it diverged at: that step is
         * the last, and empty */
        double cut[LONG];
        CHECK(train(&m, at + 1, cut) == BK_OK);
        for (int t = 0; t < at; t++)
            CHECK(cut[t] == loss[t]);
        CHECK(isnan(cut[at]));
        CHECK(isnan(final_loss(cut, at + 1, 0)));
        /* a step short of it: trained on, nothing diverged */
        CHECK(train(&m, at, cut) == BK_OK);
        CHECK(isfinite(cut[at - 1]) && isfinite(final_loss(cut, at, 0)));
    }
    model_destroy(&m);
    b->ops->destroy(b);
}

int main(void)
{
    test_diverged_at_last_step();
    return check_finish("test_train_curves");
}
