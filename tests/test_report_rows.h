/* A report from rows written here: the CSV `header` + `rows` as
 * dir/name.csv, `accubench report` on it, its Markdown read back. */
#ifndef ACCUBENCH_TEST_REPORT_ROWS_H
#define ACCUBENCH_TEST_REPORT_ROWS_H

#include <stdio.h>

#include "check.h"
#include "report.h"
#include "test_files.h"

/* dir/name.md as text (test_slurp's buffer), or NULL where the report
 * failed or wrote none. */
static inline const char *test_report_rows(const char *dir, const char *name,
                                           const char *header, const char *rows)
{
    char csv[300], md[300], text[4000];
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, name);
    snprintf(text, sizeof text, "%s%s", header, rows);
    test_write_file(csv, text);
    char *argv[] = {"report", csv, "--no-charts", NULL};
    CHECK(report_main(3, argv) == 0);
    snprintf(md, sizeof md, "%s/%s.md", dir, name);
    return test_slurp(md);
}

#endif
