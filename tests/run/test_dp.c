/* Data parallel, the parts that need no second process: how a window is
 * dealt to the ranks (every example exactly once, ragged where it must
 * be), the loss scales each rank gets (the global window's), what each
 * sync mode's row must say, and the ring all-reduce model's fit. The ranks
 * themselves run in tests/e2e_dp.sh under mpirun. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cpu_backend.h"
#include "csv_load.h"
#include "dataset.h"
#include "dispatch.h"
#include "dp_projection.h"
#include "split.h"
#include "sync_modes.h"

/* Every (E, micro, N) the sharded split accepts deals each example to
 * exactly one rank's micro-batch, at most micro and at least one each, the
 * same K on every rank; the ones it refuses would leave a rank empty. */
static void test_shards_cover_the_window(void)
{
    char why[200];
    for (int e = 1; e <= 40; e++)
        for (int n = 1; n <= 5; n++)
            for (int micro = 1; micro <= e; micro++) {
                split sp;
                int rc = split_make_sharded(e, micro, n, &sp, why, sizeof why);
                int per_device = (e + n - 1) / n;
                if (micro > per_device) {
                    CHECK(rc == -1 && strstr(why, "larger than"));
                    continue;
                }
                long long step = (long long)micro * n;
                int last_global = (int)(e - ((e + step - 1) / step - 1) * step);
                CHECK((rc == 0) == (last_global >= n));
                if (rc)
                    continue;
                CHECK(sp.global == e && sp.devices == n && sp.micro == micro);
                int seen[40] = {0}, biggest_last = 0;
                for (int k = 0; k < sp.accum; k++)
                    for (int r = 0; r < n; r++) {
                        int first, count;
                        split_shard(&sp, r, k, &first, &count);
                        CHECK(count >= 1 && count <= micro);
                        for (int i = first; i < first + count && i < e; i++)
                            seen[i]++;
                        if (k == sp.accum - 1 && count > biggest_last)
                            biggest_last = count;
                    }
                for (int i = 0; i < e; i++)
                    CHECK(seen[i] == 1);
                CHECK(sp.last == biggest_last);
                if (n == 1) {
                    split one;
                    CHECK(split_make(e, micro, 1, &one, why, sizeof why) == 0);
                    CHECK(one.accum == sp.accum && one.last == sp.last &&
                          one.effective == sp.effective && one.global == sp.global);
                }
            }
    /* The ragged case of the e2e test: 10 examples, micro 2, 3 ranks. */
    split sp;
    CHECK(split_make_sharded(10, 2, 3, &sp, why, sizeof why) == 0);
    CHECK(sp.accum == 2 && sp.last == 2 && sp.effective == 4);
    int first, count;
    split_shard(&sp, 2, 1, &first, &count);
    CHECK(first == 8 && count == 2);
    split_shard(&sp, 0, 1, &first, &count);
    CHECK(first == 6 && count == 1);
    CHECK(split_make_sharded(13, 4, 3, &sp, why, sizeof why) == -1 && strstr(why, "none"));
}

/* Each rank's scales are the whole window's: under `sum` every micro-batch
 * of every rank is divided by the valid items of the global window, and
 * the full batch's scale is the same. */
static void test_scales_are_global(void)
{
    char why[300];
    backend *b = NULL;
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    if (!b)
        return;
    input_spec in = {.kind = INPUT_FEATURES, .width = 8, .classes = 4, .loss_items = 1};
    dataset d;
    CHECK(dataset_create(b, &in, 10, 1, 3, &d) == BK_OK);
    int total = dataset_valid_count(&d, 0, 0, 10), covered = 0;
    for (int r = 0; r < 3; r++) {
        dataset_set_shard(&d, r, 3);
        CHECK(dataset_set_split(&d, 2, REDUCTION_SUM) == BK_OK);
        for (int k = 0; k < 2; k++) {
            micro_batch_view v = dataset_micro(&d, 0, 2, k);
            CHECK_NEAR(*v.scale, 1.0 / total, 1e-9);
            covered += dataset_valid_count(&d, 0, v.first, v.count);
        }
        micro_batch_view all = dataset_full_batch(&d, 0, 2);
        CHECK(all.first == 0 && all.count == 10);
        CHECK_NEAR(*all.scale, 1.0 / total, 1e-9);
    }
    CHECK(covered == total);
    dataset_destroy(&d);
    b->ops->destroy(b);
}

/* The all-reduce schedule each row implies: after micro-batch k when it
 * ends a run of `every` (or the window), the buffer zeroed (on ranks but
 * the first) before the micro-batch after an all-reduce, so that the
 * reduced sum counts every micro-batch once. Checked for every row on
 * windows of 1 to 9 micro-batches. */
static void test_sync_schedule(void)
{
    for (int s = 0; s < SYNC_COUNT; s++) {
        int every = sync_info_of(s)->every;
        CHECK(every >= 0);
        for (int accum = 1; accum <= 9; accum++) {
            int n = every == SYNC_EVERY_WINDOW ? 1 : (accum + every - 1) / every;
            CHECK(sync_reduces_per_window(s, accum) == n);
            CHECK(sync_reduces_after(s, accum - 1, accum)); /* the window ends reduced */
            CHECK(!sync_reduced_before(s, 0));
            for (int k = 1; k < accum; k++)
                CHECK(sync_reduced_before(s, k) == sync_reduces_after(s, k - 1, accum));
        }
    }
}

/* What the named rows must do, whatever the table's order. */
static void test_sync_rows(void)
{
    CHECK(sync_info_of(SYNC_MICRO)->every == 1 && !sync_info_of(SYNC_MICRO)->buckets_in_backward);
    CHECK(sync_info_of(SYNC_WINDOW)->every == SYNC_EVERY_WINDOW &&
          !sync_info_of(SYNC_WINDOW)->buckets_in_backward);
    CHECK(sync_info_of(SYNC_OVERLAP)->every == SYNC_EVERY_WINDOW &&
          sync_info_of(SYNC_OVERLAP)->buckets_in_backward);
    CHECK(sync_reduces_per_window(SYNC_MICRO, 4) == 4 && sync_reduces_per_window(SYNC_WINDOW, 4) == 1);
    int rows[] = {SYNC_MICRO, SYNC_OVERLAP};
    char line[128];
    sync_describe_schedule(rows, 2, line, sizeof line);
    CHECK(!strcmp(line, "micro every 1; overlap every K in buckets"));
}

/* The fit recovers the bandwidth and latency that made the samples; with
 * samples a latency cannot explain it falls back to bandwidth alone. */
static void test_ring_fit(void)
{
    ring_model truth = {.bw_bytes_per_s = 5e9, .latency_s = 20e-6}, fit;
    allreduce_sample s[6];
    int n = 0;
    double sizes[] = {4e6, 16e6, 64e3};
    int devices[] = {2, 4};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            s[n++] = (allreduce_sample){sizes[i], devices[j],
                                        ring_allreduce_s(&truth, sizes[i], devices[j])};
    char note[200];
    CHECK(ring_fit(s, n, &fit, note, sizeof note) == 0 && !note[0]);
    CHECK_NEAR(fit.bw_bytes_per_s / truth.bw_bytes_per_s, 1, 1e-9);
    CHECK_NEAR(fit.latency_s / truth.latency_s, 1, 1e-9);
    /* The model itself: 2 (N-1)/N B / bw + 2 (N-1) lat; nothing on one device. */
    CHECK_NEAR(ring_allreduce_s(&truth, 1e9, 4), 1.5 * 0.2 + 6 * 20e-6, 1e-12);
    CHECK(ring_allreduce_s(&truth, 1e9, 1) == 0);
    /* Times that fall with the ranks (a latency below zero): bandwidth alone. */
    allreduce_sample odd[2] = {{8e6, 2, 4e-3}, {8e6, 8, 3e-3}};
    CHECK(ring_fit(odd, 2, &fit, note, sizeof note) == 0 && fit.latency_s == 0 &&
          strstr(note, "bandwidth alone") && fit.bw_bytes_per_s > 0);
    CHECK(ring_fit(s, 1, &fit, note, sizeof note) == -1 && strstr(note, "two at least"));
    /* One gradient size at one device count (a sweep over splits on 2
     * ranks): x and y are proportional, and the determinant only rounding;
     * its quotient once read as bw 2^31 B/s and latency 0 on these times.
     * Bandwidth alone, said so, from the times themselves. */
    allreduce_sample same[4] = {{37440, 2, 21.655175e-6}, {37440, 2, 22.078e-6},
                                {37440, 2, 22.3152e-6}, {37440, 2, 22.6377e-6}};
    CHECK(ring_fit(same, 4, &fit, note, sizeof note) == 0 && fit.latency_s == 0 &&
          strstr(note, "same bytes per device"));
    CHECK(fit.bw_bytes_per_s > 37440 / 22.7e-6 && fit.bw_bytes_per_s < 37440 / 21.6e-6);
}

/* The projection keeps splits measured under different levers apart:
 * recompute block's compute is more work than none's, and one line with
 * the median of both is a compute neither config had. Each line's
 * compute_ms is its own row's step less its exposed communication. */
static void test_projection_keeps_levers_apart(void)
{
    char dir[] = "/tmp/accubench-dp-XXXXXX", csv[64];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    FILE *f = fopen(csv, "w");
    if (!f) {
        CHECK(0);
        return;
    }
    fputs("# device: x\nbackend,device,model,params,dtype,recompute,grad_dtype,mode,reduction,"
          "effective_batch,micro_batch,accum_steps,devices,sync,shard,status,step_ms_median,"
          "allreduce_calls_per_step,allreduce_bytes_per_step,comm_ms,comm_exposed_ms\n"
          "cpu,x,tiny,1000,fp32,none,fp32,async,sum,16,4,2,2,window,none,ok,10,1,4000,2,2\n"
          "cpu,x,tiny,1000,fp32,block,fp32,async,sum,16,4,2,2,window,none,ok,30,1,4000,2,2\n",
          f);
    fclose(f);
    projection_options o = {.csv_path = csv, .bw_gbps = 1, .latency_us = 0,
                            .devices = {8}, .n_devices = 1};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CHECK(out && projection_main(out, &o) == 0);
    if (out)
        fclose(out);
    double none = NAN, block = NAN;
    int lines = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        long long micro, k;
        double compute;
        char rest[64];
        if (line[0] == '#')
            continue;
        lines++;
        if (strstr(line, "recompute block") &&
            sscanf(strstr(line, "block") + 5, "%lld %lld %lf", &micro, &k, &compute) == 3)
            block = compute;
        else if (sscanf(line, " tiny %lld %lld %lf %63s", &micro, &k, &compute, rest) == 4)
            none = compute;
    }
    free(text);
    CHECK(lines == 2);
    CHECK_NEAR(none, 10 - 2, 1e-9);
    CHECK_NEAR(block, 30 - 2, 1e-9);
    remove(csv);
    rmdir(dir);
}

/* A config timed twice (arm 2: an A/A check) is one split and one
 * all-reduce sample: its second arm (a slow one here) is neither a second
 * compute in the split's median nor a second sample of the fit. */
static void test_projection_reads_first_arms(void)
{
    char dir[] = "/tmp/accubench-dp-XXXXXX", csv[64];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    FILE *f = fopen(csv, "w");
    if (!f) {
        CHECK(0);
        return;
    }
    fputs("# device: x\nbackend,device,model,params,dtype,mode,reduction,effective_batch,"
          "micro_batch,arm,accum_steps,devices,sync,status,step_ms_median,"
          "allreduce_calls_per_step,allreduce_bytes_per_step,comm_ms,comm_exposed_ms\n"
          "cpu,x,tiny,1000,fp32,async,sum,16,4,1,2,2,window,ok,10,1,4000,2,2\n"
          "cpu,x,tiny,1000,fp32,async,sum,16,4,2,2,2,window,ok,30,1,4000,6,6\n",
          f);
    fclose(f);
    csv_table t;
    csv_row *rows;
    char why[400];
    allreduce_sample s[4];
    if (!csv_load(csv, NULL, &t, &rows, why, sizeof why)) {
        CHECK(allreduce_samples(rows, t.rows, s, 4) == 1);
        free(rows);
        csv_free(&t);
    } else {
        CHECK(!"the CSV loads");
    }
    projection_options o = {.csv_path = csv, .bw_gbps = 1, .latency_us = 0,
                            .devices = {8}, .n_devices = 1};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CHECK(out && projection_main(out, &o) == 0);
    if (out)
        fclose(out);
    double compute = NAN;
    int lines = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        long long micro, k;
        if (line[0] != '#' && sscanf(line, " tiny %lld %lld %lf", &micro, &k, &compute) == 3)
            lines++;
    }
    free(text);
    CHECK(lines == 1);
    CHECK_NEAR(compute, 10 - 2, 1e-9);
    remove(csv);
    rmdir(dir);
}

int main(void)
{
    test_shards_cover_the_window();
    test_scales_are_global();
    test_sync_rows();
    test_sync_schedule();
    test_ring_fit();
    test_projection_keeps_levers_apart();
    test_projection_reads_first_arms();
    return check_finish("test_dp");
}
