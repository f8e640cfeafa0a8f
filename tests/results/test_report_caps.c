/* The report's sentences on launch overhead and device busy time follow
 * the backend's capabilities in the file's backend_caps line, not the
 * backend's name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "report.h"
#include "test_files.h"

static char tmpdir[] = "/tmp/accubench-caps-XXXXXX";

/* A copy of fixture `src` at `dst` with `line` before its first line. */
static void write_with_line(const char *src, const char *dst, const char *line)
{
    const char *text = test_slurp(src);
    FILE *f = text ? fopen(dst, "w") : NULL;
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "%s\n%s", line, text);
        fclose(f);
    }
}

/* What the report says about launch overhead follows the backend's
 * capabilities in the file's backend_caps line, not its name; files
 * without the line (the fixtures) read as before. */
static void test_backend_caps(void)
{
    char csv[256], md[256];
    snprintf(csv, sizeof csv, "%s/caps.csv", tmpdir);
    snprintf(md, sizeof md, "%s/caps.md", tmpdir);
    char *argv[] = {"report", csv, "--no-charts", NULL};

    /* a GPU file whose backend says it computes on the host as it issues */
    write_with_line("tests/fixtures/abc.csv", csv,
                    "# backend_caps: dispatch-is-device-work shares-host-memory");
    CHECK(report_main(3, argv) == 0);
    const char *text = test_slurp(md);
    CHECK(text && strstr(text, "Device (CPU backend) busy time is 13.5% of the step"));
    CHECK(text && strstr(text, "4 configs ran on the CPU backend, where the host computes"));
    CHECK(text && !strstr(text, "none is launch-bound"));

    /* a cpu file whose backend says it does not */
    write_with_line("tests/fixtures/cpu_notrace.csv", csv, "# backend_caps: none");
    CHECK(report_main(3, argv) == 0);
    text = test_slurp(md);
    CHECK(text && !strstr(text, "ran on the CPU backend"));
    CHECK(text && strstr(text, "launch-bound"));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_backend_caps();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_caps");
}
