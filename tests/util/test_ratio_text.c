/* The one ratio formatter: a ratio that is not 1 never prints as 1, an
 * interval's two bounds never print as one number, all three share their
 * decimals ("[1.17..1.30]", not "[1.17..1.3]"), and a ratio near 1 has
 * the tenth of a percent it is read against the 2% threshold with. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ratio_text.h"

static int text_is(double r, double lo, double hi, const char *want)
{
    char out[128];
    ratio_text(out, sizeof out, r, lo, hi);
    if (strcmp(out, want))
        fprintf(stderr, "ratio_text(%g, %g, %g) = \"%s\", want \"%s\"\n", r, lo, hi, out, want);
    return !strcmp(out, want);
}

/* What the text says, read back as a reader would. */
static void read_back(double r, double lo, double hi, double *pr, double *plo, double *phi)
{
    char out[128];
    ratio_text(out, sizeof out, r, lo, hi);
    *plo = *phi = NAN;
    sscanf(out, "%lfx [%lf..%lf]", pr, plo, phi);
}

int main(void)
{
    CHECK(text_is(2.3456, 2.111, 2.6249, "2.35x [2.11..2.62]"));
    CHECK(text_is(1.234, 1.17, 1.3, "1.23x [1.17..1.30]"));
    CHECK(text_is(1.005, NAN, NAN, "1.005x"));
    CHECK(text_is(1.004, 0.998, 1.012, "1.004x [0.998..1.012]"));
    CHECK(text_is(1, 1, 1, "1.000x [1.000..1.000]"));
    CHECK(text_is(1.015, 0.99, 1.04, "1.015x [0.990..1.040]")); /* read against 2% */
    CHECK(text_is(NAN, NAN, NAN, "-"));
    /* a ratio past a double (1e300 ms over 1e-300 ms) is none, not "infx" */
    CHECK(text_is(INFINITY, INFINITY, INFINITY, "-"));
    CHECK(text_is(2.0, 1.5, INFINITY, "2.00x"));
    CHECK(text_is(6.29e298, 6e298, 6.5e298, "6.29e+298x [6e+298..6.5e+298]"));
    CHECK(text_is(1.84, NAN, 1.9, "1.84x"));
    CHECK(text_is(123.4, 120.1, 130.6, "123x [120..131]"));
    CHECK(text_is(0.05, 0.04, 0.06, "0.050x [0.040..0.060]"));
    /* a range's decimals, as the interval's: "from 1.03x to 1.12x" */
    CHECK(ratio_decimals(1.11, 1.034, 1.12) == 2);
    CHECK(ratio_decimals(1.07, 1.011, 1.089) == 3);
    CHECK(ratio_decimals(1.0004, 0.9996, 1.0012) == 4);
    /* no decimals the interval cannot back: an A/A pair over 40 rounds */
    CHECK(text_is(0.99998, 0.97763, 1.02285, "1.000x [0.978..1.023]"));
    CHECK(text_is(1.00004, NAN, NAN, "1.00004x")); /* no interval: not 1 */
    /* the figure as the CSV writes it (6 digits), which a chart formats
     * from the file: a run's C over A in full precision and as its
     * vs_ref..vs_ref_hi cells read the same */
    CHECK(text_is(1.3933223242853585, 1.3916475206213823, 1.394999143522439,
                  "1.39x [1.39..1.40]"));
    CHECK(text_is(1.39332, 1.39165, 1.395, "1.39x [1.39..1.40]"));
    CHECK(ratio_decimals(1.3933223242853585, 1.3916475206213823, 1.394999143522439) == 2);
    /* read back: on the right side of 1, and bounds apart, wherever they are */
    const double cases[][3] = {{1.003, 1.001, 1.006}, {0.997, 0.994, 0.999},
                               {1.02, 1.0149, 1.0151}, {1.5, 1.4999, 1.5002}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double r, lo, hi;
        read_back(cases[i][0], cases[i][1], cases[i][2], &r, &lo, &hi);
        CHECK((r - 1) * (cases[i][0] - 1) > 0);
        CHECK((lo - 1) * (cases[i][1] - 1) > 0);
        CHECK((hi - 1) * (cases[i][2] - 1) > 0);
        CHECK(hi > lo);
        CHECK_NEAR(r, cases[i][0], 5e-4);
    }
    return check_finish("test_ratio_text");
}
