/* The sweep's progress lines off a terminal: "config i of N" as each config
 * starts, the time left once one has finished, a line for a phase that runs
 * silent past the threshold (and none for a short one), a comparison's
 * members each under its own number and its rounds under the group's,
 * nothing at all without a stream. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "progress.h"
#include "trace.h"

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* What the progress wrote to f so far (it flushes every line), read by
 * offset: the stream's own position, where the watcher thread writes,
 * stays where it is. */
static char *slurp(FILE *f)
{
    static char text[4096];
    ssize_t n = pread(fileno(f), text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    return text;
}

/* Waits for `line` to appear in f: a silent phase's line comes from the
 * watcher thread, which a loaded machine may run late; a fixed sleep
 * alone would fail the test there. 1 when it came within a minute. */
static int wait_for(FILE *f, const char *line)
{
    for (int i = 0; i < 6000; i++) {
        if (strstr(slurp(f), line))
            return 1;
        sleep_s(0.01);
    }
    return 0;
}

static double seconds_since(uint64_t t0)
{
    return (double)(trace_now_ns() - t0) / 1e9;
}

/* progress_duration's text for `s` seconds, or for a moment either side:
 * the program read its clock a little apart from the test's. */
static int duration_near(const char *text, double s)
{
    char lo[32], hi[32];
    progress_duration(s - 0.05, lo, sizeof lo);
    progress_duration(s + 0.05, hi, sizeof hi);
    return !strncmp(text, lo, strlen(lo)) || !strncmp(text, hi, strlen(hi));
}

int main(void)
{
    char d[32];
    progress_duration(42.4, d, sizeof d);
    CHECK(strcmp(d, "42 s") == 0);
    progress_duration(185, d, sizeof d);
    CHECK(strcmp(d, "3 min 05 s") == 0);
    progress_duration(3720, d, sizeof d);
    CHECK(strcmp(d, "1 h 02 min") == 0);
    progress_duration(-1, d, sizeof d);
    CHECK(strcmp(d, "0 s") == 0);

    FILE *f = tmpfile();
    CHECK(f != NULL);
    progress p;
    CHECK(progress_start(&p, f, 3, 0.1) == 0);
    uint64_t t0 = trace_now_ns();
    progress_config(&p, "S fp32 16x4 async sum");
    progress_phase(&p, "quick phase");
    progress_phase(&p, "gradient check");
    sleep_s(0.4);
    CHECK(wait_for(f, "config 1 of 3: gradient check (running for "));
    double first_s = seconds_since(t0);
    progress_config_done(&p);
    progress_config(&p, "S fp32 32x2 async sum");
    progress_config_done(&p);
    progress_stop(&p);
    char *out = slurp(f);
    CHECK(strstr(out, "config 1 of 3 (S fp32 16x4 async sum); 0 s so far\n") == out);
    CHECK(strstr(out, "quick phase") == NULL);
    /* One config of about 0.4 s done: the other two take twice its time
     * (about 1 s, where the machine kept the sleep). */
    char *second = strstr(out, "config 2 of 3 (S fp32 32x2 async sum); ");
    CHECK(second != NULL && duration_near(strstr(second, "; ") + 2, first_s));
    char *left = second ? strstr(second, " so far, about ") : NULL;
    CHECK(left != NULL && duration_near(left + strlen(" so far, about "), 2 * first_s));
    CHECK(left != NULL && strstr(left, " s left\n") != NULL);
    CHECK(strchr(out, '\r') == NULL && strstr(out, "\033[") == NULL);
    fclose(f);

    /* A comparison of two configs: no lines as they are registered; each
     * announced as its checks begin, under its own number; a silent phase
     * during the rounds names the group, one after them the member. */
    f = tmpfile();
    CHECK(f != NULL);
    CHECK(progress_start(&p, f, 3, 0.1) == 0);
    progress_config(&p, "tiny fp32 64x1 async sum");
    progress_config_done(&p);
    progress_group_begin(&p, 2);
    progress_mark a, b;
    progress_config(&p, "S fp32 8x8 async sum");
    progress_config_set_aside(&p, &a);
    progress_config(&p, "S fp32 64x1 async sum");
    progress_config_set_aside(&p, &b);
    progress_config_resume(&p, &a, 1);
    progress_config_pass(&p, 12.0);
    progress_phase(&p, "gradient check");
    sleep_s(0.3);
    CHECK(wait_for(f, "config 2 of 3: gradient check (running for "));
    progress_config_set_aside(&p, &a);
    progress_config_resume(&p, &b, 1);
    progress_config_pass(&p, 3.0);
    progress_config_set_aside(&p, &b);
    progress_group_rounds(&p);
    progress_phase(&p, "interleaved rounds: round 1");
    sleep_s(0.3);
    CHECK(wait_for(f, "configs 2-3 of 3: interleaved rounds: round 1 (running for "));
    progress_config_resume(&p, &b, 0);
    progress_phase(&p, "trace pass");
    sleep_s(0.3);
    CHECK(wait_for(f, "config 3 of 3: trace pass (running for "));
    progress_config_done_marked(&p, &a, 40.0, 12.0, 10, 5, 0.3);
    progress_config_done_marked(&p, &b, 20.0, 3.0, 10, 5, 0.3);
    progress_group_end(&p);
    progress_stop(&p);
    out = slurp(f);
    CHECK(a.index == 1 && b.index == 2);
    CHECK(strcmp(a.label, "S fp32 8x8 async sum") == 0 && a.pass_ms == 12.0);
    CHECK(strcmp(b.label, "S fp32 64x1 async sum") == 0 && b.pass_ms == 3.0);
    CHECK(a.seconds >= 0.25);
    char *first = strstr(out, "config 2 of 3 (S fp32 8x8 async sum); 0 s so far");
    char *check = strstr(out, "config 2 of 3: gradient check (running for ");
    char *other = strstr(out, "config 3 of 3 (S fp32 64x1 async sum); ");
    char *rounds = strstr(out, "configs 2-3 of 3: interleaved rounds: round 1 (running for ");
    char *trace = strstr(out, "config 3 of 3: trace pass (running for ");
    CHECK(first && check && other && rounds && trace);
    CHECK(first < check && check < other && other < rounds && rounds < trace);
    CHECK(strstr(first + 1, "config 2 of 3 (") == NULL); /* announced once */
    CHECK(strstr(other + 1, "config 3 of 3 (") == NULL);
    fclose(f);

    /* Costed on a plan: before any config has finished the time left is
     * a range said to be a guess (nothing of the machine's pace is learnt
     * yet); once one has, one figure. */
    eta_item items[2] = {{.flops = 1e9, .micro = 1, .accum = 1},
                         {.flops = 1e9, .micro = 1, .accum = 1}};
    for (int i = 0; i < 2; i++)
        items[i].step_ms = items[i].wall_s = items[i].noise_s = NAN;
    eta plan = {.items = items, .n = 2,
                .c = {.budget_s = 2, .warmup = 2, .min_samples = 5, .max_samples = 1000}};
    eta_record_probe(&plan, 0, 1000); /* 1 s passes, timed before the sweep */
    eta_record_probe(&plan, 1, 1000);
    f = tmpfile();
    CHECK(f != NULL);
    CHECK(progress_start(&p, f, 2, 10) == 0);
    progress_set_eta(&p, &plan);
    progress_config(&p, "S fp32 1x1 async sum");
    progress_config_result(&p, 1000, 1000, 5);
    progress_config_done(&p);
    progress_config(&p, "S fp32 1x1 sync sum");
    progress_stop(&p);
    out = slurp(f);
    first = strstr(out, "config 1 of 2 (S fp32 1x1 async sum); 0 s so far, about ");
    CHECK(first != NULL && strstr(first, " left (a guess until a config has finished)\n") ==
                               strchr(first, '\n') - strlen(" left (a guess until a config "
                                                             "has finished)"));
    CHECK(first != NULL && strstr(first, " to ") < strchr(first, '\n'));
    other = strstr(out, "config 2 of 2 (S fp32 1x1 sync sum); 0 s so far, about ");
    CHECK(other != NULL && strstr(other, "guess") == NULL && strstr(other, " to ") == NULL);
    CHECK(other != NULL && strstr(other, " left\n") != NULL);
    fclose(f);

    /* A guess whose ends round alike is one figure, not "0 s to 0 s". */
    eta_item tiny[2] = {{.flops = 1e3, .micro = 1, .accum = 1},
                        {.flops = 1e3, .micro = 1, .accum = 1}};
    for (int i = 0; i < 2; i++)
        tiny[i].step_ms = tiny[i].wall_s = tiny[i].noise_s = NAN;
    eta quick = {.items = tiny, .n = 2, .c = {.budget_s = 0.001, .warmup = 0, .min_samples = 1,
                                               .max_samples = 1}};
    eta_record_probe(&quick, 0, 0.001);
    eta_record_probe(&quick, 1, 0.001);
    f = tmpfile();
    CHECK(f != NULL);
    CHECK(progress_start(&p, f, 2, 10) == 0);
    progress_set_eta(&p, &quick);
    progress_config(&p, "S fp32 1x1 async sum");
    progress_stop(&p);
    out = slurp(f);
    first = strstr(out, "config 1 of 2 (S fp32 1x1 async sum); 0 s so far, about 0 s left (a "
                        "guess until a config has finished)");
    CHECK(first != NULL);
    if (!first)
        fprintf(stderr, "  the line: %s\n", out);
    fclose(f);

    /* No stream (--quiet): every call is a no-op. */
    CHECK(progress_start(&p, NULL, 3, 0.1) == 0);
    progress_config(&p, "x");
    progress_phase(&p, "y");
    progress_config_done(&p);
    progress_clear(&p);
    progress_stop(&p);
    progress_config(NULL, "x");
    progress_phase(NULL, "y");
    return check_finish("test_progress");
}
