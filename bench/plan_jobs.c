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

/* The options some jobs do not read, and the jobs that do. The ones that
 * choose a job (--find-max-micro, --fit, --noise, --time-to-target,
 * --recommend) are not here: one_job() in plan.c refuses two of them. */
static const struct {
    const char *key;
    unsigned jobs;
} reads[] = {
    {"effective", SPLIT | PROBE | REC | FROM},
    {"max-micro", SPLIT | PROBE}, /* the probe's upper bound */
    {"devices", SPLIT | PROBE | FIT | REC | FROM},
    {"reserve", PROBE},
    {"fit-devices", FIT},
    {"bw", FIT},
    {"latency-us", FIT},
    {"target-loss", TIME | GOAL_TIME},
    {"table", TIME},
    {"goal", REC | FROM | GOAL_TIME},
    {"from", FROM | GOAL_TIME},
    {"model", PROBE | REC | FROM},
    {"dtype", PROBE | REC},
    {"optimizer", PROBE | REC},
    {"backend", PROBE | REC},
    {"buffers", PROBE | REC},
    {"recompute", PROBE | REC},
    {"mem-cap", PROBE | TIME | REC | FROM | GOAL_TIME},
    {"csv", REC},
    {"append", REC},
    {"replace", REC},
    {"budget-s", REC},
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

int plan_job_reads(plan_job job, const plan_given *given, char *why, size_t why_len)
{
    for (size_t k = 0; k < given->n; k++)
        for (size_t r = 0; r < sizeof reads / sizeof reads[0]; r++) {
            const char *key = given->keys[k];
            if (strcmp(key, reads[r].key) || (reads[r].jobs >> job) & 1)
                continue;
            char others[300];
            jobs_text(reads[r].jobs, others, sizeof others);
            snprintf(why, why_len, "--%s goes with %s, not with %s: drop it", key, others,
                     job_names[job]);
            return -1;
        }
    return 0;
}
