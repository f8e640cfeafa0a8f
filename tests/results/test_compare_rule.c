/* compare's rule on hand-made rows: slower or faster only where the
 * ratio's interval clears the threshold, within it where the whole
 * interval lies inside it, else not yet separated at this noise; a config that
 * stopped running, now runs or ran in neither said so. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "compare.h"

static void test_verdicts(void)
{
    csv_row b, n;
    memset(&b, 0, sizeof b);
    b.status = "ok";
    b.step_ms_median = 10;
    b.step_ms_p10 = 9.8;
    b.step_ms_p90 = 10.3;
    b.step_noise_pct = 2;
    n = b;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED);
    n.step_ms_median = 10.4, n.step_ms_p10 = 10.3, n.step_ms_p90 = 10.5, n.step_noise_pct = 0.5;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED); /* inside base's band */
    n.step_ms_median = 11, n.step_ms_p10 = 10.9, n.step_ms_p90 = 11.1;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_SLOWER);
    n.step_noise_pct = 10; /* the new run is too noisy to tell */
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED);
    n.step_ms_median = 9, n.step_ms_p10 = 8.9, n.step_ms_p90 = 9.1, n.step_noise_pct = 0.5;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_FASTER);
    /* bands without noise figures: min_diff decides; a 0.5% change with
     * no noise to hide it is within 1%, not the noise's doing */
    b.step_ms_p10 = b.step_ms_p90 = b.step_noise_pct = NAN;
    n = b;
    n.step_ms_median = 10.05;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_WITHIN);
    n.step_ms_median = 10.5;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_SLOWER);
    n.status = "oom";
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_FAILED);
    CHECK(compare_rows(&n, &b, 0.01) == VERDICT_FIXED);
    CHECK(compare_rows(&n, &n, 0.01) == VERDICT_NOT_RUN);
}

int main(void)
{
    test_verdicts();
    /* the words are the rule's, at the threshold compare was given */
    CHECK(!strcmp(verdict_words(VERDICT_WITHIN, 0.01).s, "the same within 1%"));
    CHECK(!strcmp(verdict_words(VERDICT_NOT_SEPARATED, 0.01).s, "not yet separated"));
    CHECK(!strcmp(verdict_words(VERDICT_SLOWER, 0.01).s, "slower"));
    CHECK(!strcmp(verdict_words(VERDICT_FAILED, 0.01).s, "failed"));
    return check_finish("test_compare_rule");
}
