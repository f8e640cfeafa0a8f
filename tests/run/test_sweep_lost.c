/* A device the backend marks lost (backend.lost: CUDA's sticky errors)
 * ends the sweep after the row that lost it, instead of one error row per
 * config left. The CPU backend with its GEMM made to fail as a sticky
 * error would: the first config's row, and no other. The run fails (exit
 * 1, as any failed config does; 2 is for input refused and files not
 * written), and the file says where it stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cpu_backend.h"
#include "options.h"
#include "sweep.h"

static backend_ops lossy_ops;

static int lost_gemm(backend *b, const gemm_desc *g)
{
    (void)g;
    snprintf(b->error, sizeof b->error, "fake: an illegal address");
    b->lost = 1;
    return BK_ERROR;
}

static int data_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    int rows = -1; /* the header */
    while (f && fgets(line, sizeof line, f))
        rows += line[0] != '#';
    if (f)
        fclose(f);
    return rows;
}

static int has_line(const char *path, const char *want)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = !strncmp(line, want, strlen(want));
    if (f)
        fclose(f);
    return found;
}

int main(void)
{
    char why[400], csv[64];
    snprintf(csv, sizeof csv, "/tmp/test_sweep_lost.%d.csv", (int)getpid());
    run_options o;
    options_defaults(&o);
    const char *set[][2] = {{"model", "tiny"}, {"effective", "8"}, {"micro", "1,2,4,8"},
                            {"steps", "1"}, {"warmup", "0"}, {"trace-steps", "0"},
                            {"csv", csv}, {"quiet", NULL}, {"dtype", "fp32"}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        CHECK(options_set(&o, set[i][0], set[i][1], why, sizeof why) == 0);
    CHECK(options_validate(&o, why, sizeof why) == 0);
    backend *b;
    if (cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "cpu backend: %s\n", why);
        return 1;
    }
    lossy_ops = *b->ops;
    lossy_ops.gemm = lost_gemm;
    const backend_ops *real = b->ops;
    b->ops = &lossy_ops;
    sweep_device dev = {.b = b, .trace_source = "none", .note = "", .dtype_note = "",
                        .optimizer_note = ""};
    run_context ctx = {.argv0 = "test", .git_rev = "test", .command_line = "test"};
    int rc = sweep_run(&o, &dev, &ctx);
    CHECK(rc == 1);
    CHECK(data_rows(csv) == 1);
    CHECK(has_line(csv, "# unfinished: the device was lost after 1 of 4 configs: "
                        "the rest did not run"));
    b->ops = real;
    b->ops->destroy(b);
    unlink(csv);
    return check_finish("test_sweep_lost");
}
