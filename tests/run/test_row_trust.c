/* The noisy / disturbed classification (row_trust.h) from a row's own
 * columns, and the MFU against the higher of the probes beside it. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "row_flags.h"
#include "row_trust.h"

static const trust_limits ADAPTIVE = {.adaptive = 1, .min_samples = 5, .max_noise_pct = 2};

/* A clean row: enough samples, little noise, a plausible MFU. */
static void clean_row(result_row *r)
{
    result_row_clear(r);
    r->step_ms_median = 100;
    r->samples = 20;
    r->step_noise_pct = 1;
    r->accum_steps = 4;
    r->pass_ms = 24;
    r->mfu_pct = 60;
    r->probe_tflops_before = 1.0;
    r->probe_tflops_after = 0.97;
    r->probe_drift_pct = 3;
    r->other_cpu_pct = 2;
    r->steal_pct = 0;
}

static void test_clean(void)
{
    result_row r;
    clean_row(&r);
    row_classify(&r, &ADAPTIVE);
    CHECK(r.flags[0] == '\0' && r.note[0] == '\0');
    /* unmeasured disturbance columns are not a disturbance */
    clean_row(&r);
    r.other_cpu_pct = r.steal_pct = r.probe_drift_pct = NAN;
    row_classify(&r, &ADAPTIVE);
    CHECK(r.flags[0] == '\0');
}

static void test_noisy(void)
{
    result_row r;
    clean_row(&r);
    r.samples = 3; /* under --min-samples 5 */
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_NOISY));
    clean_row(&r);
    r.step_noise_pct = 18.6; /* over --max-noise 2 */
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_NOISY));
    /* --steps: the count is the user's; the noise still counts, with its figures */
    trust_limits fixed = ADAPTIVE;
    fixed.adaptive = 0;
    clean_row(&r);
    r.samples = 3;
    row_classify(&r, &fixed);
    CHECK(r.flags[0] == '\0');
    r.step_noise_pct = 5;
    row_classify(&r, &fixed);
    CHECK(!strcmp(r.flags, FLAG_NOISY) && strstr(r.note, "noise 5% over --max-noise 2%"));
    /* interleaved rounds: the stop note names only the rounds, so the
     * flag's figures are here too; the sample count does not count */
    trust_limits rounds = ADAPTIVE;
    rounds.rounds = 1;
    clean_row(&r);
    r.samples = 3;
    row_classify(&r, &rounds);
    CHECK(r.flags[0] == '\0' && r.note[0] == '\0');
    r.step_noise_pct = 28.9;
    row_classify(&r, &rounds);
    CHECK(!strcmp(r.flags, FLAG_NOISY) && strstr(r.note, "noise 28.9% over --max-noise 2%"));
}

static void test_disturbed(void)
{
    result_row r;
    clean_row(&r);
    r.mfu_pct = 117; /* of a probe: impossible */
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED) && strstr(r.note, "MFU 117%"));
    /* of the datasheet: as impossible, said as such; 99% of it is not */
    clean_row(&r);
    r.mfu_datasheet_pct = 99;
    row_classify(&r, &ADAPTIVE);
    CHECK(r.flags[0] == '\0');
    r.mfu_datasheet_pct = 104;
    r.tflops = 1029;
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED) && strstr(r.note, "MFU 104% of the device's datasheet"));
    clean_row(&r);
    r.probe_drift_pct = 12; /* over 10% */
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED) && strstr(r.note, "drifted 12%"));
    /* a drift within the probes' own spread is their noise */
    clean_row(&r);
    r.probe_drift_pct = 12;
    r.probe_noise_pct = 15;
    row_classify(&r, &ADAPTIVE);
    CHECK(r.flags[0] == '\0');
    r.probe_noise_pct = 4; /* beyond it: the machine changed */
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED) && strstr(r.note, "own spread of 4%"));
    clean_row(&r);
    r.other_cpu_pct = 48;
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED) && strstr(r.note, "other processes used 48%"));
    clean_row(&r);
    r.steal_pct = 6;
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED));
    /* a throttling clock event disturbs; idle does not */
    clean_row(&r);
    snprintf(r.clock_events, sizeof r.clock_events, "idle sync_boost");
    row_classify(&r, &ADAPTIVE);
    CHECK(r.flags[0] == '\0');
    snprintf(r.clock_events, sizeof r.clock_events, "idle sw_power_cap");
    r.sm_clock_mhz = 1410;
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED) && strstr(r.note, "sw_power_cap at SM clock 1410"));
    /* both flags, each once, and re-classifying starts over */
    clean_row(&r);
    r.samples = 3;
    r.mfu_pct = 246;
    r.probe_drift_pct = 40;
    row_classify(&r, &ADAPTIVE);
    CHECK(!strcmp(r.flags, "noisy disturbed"));
    CHECK(flags_have(r.flags, FLAG_NOISY) && flags_have(r.flags, FLAG_DISTURBED));
    CHECK(!flags_have("undisturbed", FLAG_DISTURBED));
}

static void test_serial_passes(void)
{
    /* where passes run one after another, a step shorter than its K passes
     * (the 685 ms of passes in a 541 ms step) cannot be */
    trust_limits serial = ADAPTIVE;
    serial.passes_serial = 1;
    result_row r;
    clean_row(&r);
    r.step_ms_median = 541;
    r.accum_steps = 5;
    r.pass_ms = 137;
    row_classify(&r, &serial);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED) && strstr(r.note, "541 ms"));
    clean_row(&r);
    r.step_ms_median = 541;
    r.accum_steps = 5;
    r.pass_ms = 137;
    row_classify(&r, &ADAPTIVE); /* on a GPU passes overlap their launches: allowed */
    CHECK(r.flags[0] == '\0');
    /* A quiet machine's 8x8 of model S: passes timed alone are a little
     * slower than inside the step; not a disturbance. */
    clean_row(&r);
    r.step_ms_median = 106.8;
    r.accum_steps = 8;
    r.pass_ms = 14.91;
    row_classify(&r, &serial);
    CHECK(r.flags[0] == '\0');
    /* 64+1 of S: one pass of 64 and one of 1, nowhere near two of 64;
     * the last pass was never timed, so no step is shorter than it */
    clean_row(&r);
    r.micro_batch = 64;
    r.last_micro_batch = 1;
    r.accum_steps = 2;
    r.pass_ms = 26;
    r.step_ms_median = 28;
    row_classify(&r, &serial);
    CHECK(r.flags[0] == '\0' && !strstr(r.note, "shorter than"));
}

static void test_fill(void)
{
    /* the MFU is against the higher probe, the drift over it */
    result_row r;
    clean_row(&r);
    r.tflops = 0.5;
    r.other_cpu_pct = r.steal_pct = NAN;
    r.mfu_pct = 500; /* against a start-up peak taken while something else ran */
    step_timing t = {.step = {.median = 100, .ci_lo = 95, .ci_hi = 104}};
    watch_mark before = {.probe_tflops = 1.0}, after = {.probe_tflops = 0.8};
    row_fill_trust(&r, &t, &before, &after, &ADAPTIVE);
    CHECK_NEAR(r.mfu_pct, 50, 1e-9);
    CHECK_NEAR(r.probe_drift_pct, 20, 1e-9);
    CHECK(r.step_ms_ci_lo == 95 && r.step_ms_ci_hi == 104);
    CHECK(!strcmp(r.flags, FLAG_DISTURBED)); /* the 20% drift */
    CHECK(isnan(r.other_cpu_pct) && r.clock_events[0] == '\0'); /* not measured: empty */
}

int main(void)
{
    test_clean();
    test_noisy();
    test_disturbed();
    test_serial_passes();
    test_fill();
    return check_finish("test_row_trust");
}
