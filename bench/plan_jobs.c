/* What each of plan's jobs reads (see plan_jobs.h). */
#include "plan_jobs.h"

#include <stdio.h>
#include <string.h>

static const char *const job_names[] = {
    [PLAN_SPLIT] = "the arithmetic (--effective, --max-micro)",
    [PLAN_PROBE] = "--find-max-micro",
    [PLAN_FIT] = "--fit",
    [PLAN_NOISE] = "--noise",
    [PLAN_TIME] = "--time-to-target",
    [PLAN_RECOMMEND] = "a measuring --recommend",
    [PLAN_RECOMMEND_FROM] = "--recommend --from",
    [PLAN_GOAL_TIME] = "--recommend --goal time",
};
#define N_JOBS (sizeof job_names / sizeof job_names[0])

#define SPLIT (1u << PLAN_SPLIT)
#define PROBE (1u << PLAN_PROBE)
#define FIT (1u << PLAN_FIT)
#define TIME (1u << PLAN_TIME)
#define REC (1u << PLAN_RECOMMEND)
#define FROM (1u << PLAN_RECOMMEND_FROM)
#define GOAL_TIME (1u << PLAN_GOAL_TIME)

/* What a job cannot run without, beyond the option that chose it
 * (job_of() in plan.c): --from and --goal time choose theirs, and alone
 * they leave --recommend out. */
static const struct {
    const char *needs[2];
    const char *refusal;
} job_needs[] = {
    [PLAN_RECOMMEND_FROM] = {{"recommend"}, "--from goes with --recommend"},
    [PLAN_GOAL_TIME] = {{"recommend", "from"},
                        "--goal time goes with --recommend --from FILE.csv (a run with "
                        "--train-steps over several --effective)"},
};

/* The options some jobs do not read, and the jobs that do; an option that
 * needs another beside it (--reserve is kept back from --mem-cap); and
 * where the jobs in `when` refuse it, why (with --from nothing is
 * measured: what to measure would be dropped unsaid). The options that
 * choose a job (--find-max-micro, --fit, --noise, --time-to-target,
 * --recommend) are not here: one_job() in plan.c refuses two of them. */
#define MEASURED(k, j)                                                                  \
    {.key = k, .jobs = j, .when = FROM | GOAL_TIME,                                     \
     .why = "nothing is measured there, the file's rows are ranked as they ran "      \
            "(--model picks one of its models)"}
static const struct {
    const char *key;
    unsigned jobs;
    const char *needs;
    unsigned when;
    const char *why;
} reads[] = {
    {.key = "effective", .jobs = SPLIT | PROBE | REC | FROM},
    {.key = "max-micro", .jobs = SPLIT | PROBE}, /* the probe's upper bound */
    {.key = "devices", .jobs = SPLIT | PROBE | FIT | REC | FROM},
    {.key = "reserve", .jobs = PROBE, .needs = "mem-cap"},
    {.key = "fit-devices", .jobs = FIT},
    {.key = "bw", .jobs = FIT},
    {.key = "latency-us", .jobs = FIT},
    {.key = "target-loss", .jobs = TIME | GOAL_TIME},
    {.key = "table", .jobs = TIME},
    {.key = "curve-table", .jobs = TIME},
    {.key = "goal", .jobs = REC | FROM | GOAL_TIME},
    {.key = "from", .jobs = FROM | GOAL_TIME},
    {.key = "model", .jobs = PROBE | REC | FROM},
    {.key = "mem-cap", .jobs = PROBE | TIME | REC | FROM | GOAL_TIME},
    /* what to measure and where */
    MEASURED("dtype", PROBE | REC),
    MEASURED("optimizer", PROBE | REC),
    MEASURED("backend", PROBE | REC),
    MEASURED("buffers", PROBE | REC),
    MEASURED("recompute", PROBE | REC),
    MEASURED("csv", REC),
    MEASURED("append", REC),
    MEASURED("replace", REC),
    MEASURED("budget-s", REC),
};

/* "A, B and C": the jobs in mask. */
static void jobs_text(unsigned mask, char *out, size_t len)
{
    size_t used = 0, left = 0;
    out[0] = '\0';
    for (size_t j = 0; j < N_JOBS; j++)
        left += (mask >> j) & 1;
    for (size_t j = 0; j < N_JOBS && used < len; j++) {
        if (!((mask >> j) & 1))
            continue;
        left--;
        used += (size_t)snprintf(out + used, len - used, "%s%s", job_names[j],
                                 left > 1 ? ", " : left == 1 ? " and " : "");
    }
}

void plan_given_add(plan_given *g, const char *key)
{
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(g->keys[i], key))
            return;
    if (g->n < sizeof g->keys / sizeof g->keys[0])
        snprintf(g->keys[g->n++], sizeof g->keys[0], "%s", key);
}

static int given_has(const plan_given *given, const char *key)
{
    for (size_t k = 0; k < given->n; k++)
        if (!strcmp(given->keys[k], key))
            return 1;
    return 0;
}

int plan_job_reads(plan_job job, const plan_given *given, char *why, size_t why_len)
{
    if (job < sizeof job_needs / sizeof job_needs[0])
        for (size_t i = 0; i < 2 && job_needs[job].needs[i]; i++)
            if (!given_has(given, job_needs[job].needs[i])) {
                snprintf(why, why_len, "%s", job_needs[job].refusal);
                return -1;
            }
    for (size_t k = 0; k < given->n; k++)
        for (size_t r = 0; r < sizeof reads / sizeof reads[0]; r++) {
            const char *key = given->keys[k];
            if (strcmp(key, reads[r].key))
                continue;
            char others[300];
            jobs_text(reads[r].jobs, others, sizeof others);
            if ((reads[r].jobs >> job) & 1) {
                if (!reads[r].needs || given_has(given, reads[r].needs))
                    continue;
                snprintf(why, why_len, "--%s goes with %s and --%s", key, others,
                         reads[r].needs);
                return -1;
            }
            int said = (reads[r].when >> job) & 1;
            snprintf(why, why_len, "--%s goes with %s, not with %s: %s%sdrop it", key, others,
                     job_names[job], said ? reads[r].why : "", said ? "; " : "");
            return -1;
        }
    return 0;
}

int plan_usage_error(const char *msg)
{
    fprintf(stderr, "accubench: %s (see accubench help plan)\n", msg);
    return 2;
}
