/* libFuzzer target: any bytes as a loss curves file, read the way `report`
 * and `plan --time-to-target` read one (curves_read), then every curve's
 * every step. Every outcome is a 0, a 1 (no file) or a -1 with a reason; a
 * crash, a hang or a sanitizer report is the bug, and so is a curve whose
 * rows outnumber its steps (the reader refuses a step written twice). */
#include <math.h>
#include <stdlib.h>

#include "curves_read.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size, ".curves.csv");
    if (!path)
        return 0;
    curves_table t;
    char why[600];
    why[0] = '\0';
    int rc = curves_read(path, &t, why, sizeof why);
    if (rc != 0) {
        if (rc == -1 && !why[0])
            abort(); /* a refusal always says why */
        return 0;
    }
    double sum = 0;
    for (size_t i = 0; i < t.n; i++) {
        const read_curve *c = &t.c[i];
        if (c->steps < 1 || c->rows > c->steps)
            abort();
        for (int s = 0; s < c->steps; s++)
            sum += isnan(c->loss[s]) + isnan(c->noise[s]) + isnan(c->noise_err[s]);
    }
    (void)sum;
    curves_table_free(&t);
    return 0;
}
