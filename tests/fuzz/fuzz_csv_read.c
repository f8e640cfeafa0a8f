/* libFuzzer target: any bytes as a results CSV, read the way `report` and
 * `compare` read one (csv_load: the table, then every row converted to a
 * csv_row), then every metadata lookup and cell. Every outcome is a 0 or
 * a -1 with a reason; a crash, a hang or a sanitizer report is the bug. */
#include <string.h>

#include "csv_load.h"
#include "csv_read.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size, ".csv");
    if (!path)
        return 0;
    csv_table t;
    csv_row *rows = NULL;
    char why[600];
    why[0] = '\0';
    if (csv_load(path, csv_required_columns, &t, &rows, why, sizeof why) != 0) {
        if (!why[0])
            abort(); /* a refusal always says why */
        return 0;
    }
    size_t ran = 0;
    for (size_t i = 0; i < t.rows; i++) {
        ran += result_ran(&rows[i]) != 0;
        for (size_t c = 0; c < t.cols; c++)
            (void)strlen(csv_cell(&t, i, (int)c));
    }
    (void)ran;
    (void)csv_meta_get(&t, "backend");
    (void)csv_meta_has_word(&t, "backend_caps", "shares-host-memory");
    free(rows);
    csv_free(&t);
    return 0;
}
