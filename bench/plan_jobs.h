/* What each of plan's jobs reads. plan does one job a call, chosen by its
 * options (--find-max-micro, --fit, --noise, ...); an option the job does
 * not read would be dropped unsaid (`plan --effective 256 --max-micro 32
 * --mem-cap 16G` never looks at the cap), so it is refused instead. */
#ifndef ACCUBENCH_PLAN_JOBS_H
#define ACCUBENCH_PLAN_JOBS_H

#include <stddef.h>

typedef enum plan_job {
    PLAN_SPLIT,          /* the arithmetic: --effective, --max-micro */
    PLAN_PROBE,          /* --find-max-micro */
    PLAN_FIT,            /* --fit */
    PLAN_NOISE,          /* --noise */
    PLAN_TIME,           /* --time-to-target */
    PLAN_RECOMMEND,      /* --recommend, measuring */
    PLAN_RECOMMEND_FROM, /* --recommend --from */
    PLAN_GOAL_TIME,      /* --recommend --from --goal time */
} plan_job;

/* The options one plan call was given, by key (without the dashes), once
 * each. */
typedef struct plan_given {
    char keys[64][64];
    size_t n;
} plan_given;

void plan_given_add(plan_given *g, const char *key);

/* 0 when job has what it needs (--goal time: --recommend and --from) and
 * reads every option given (the options that choose the job count as
 * read), each with the option it needs beside it (--reserve: --mem-cap);
 * else -1 with the refusal naming the first one that it does not and the
 * jobs that do: "--max-micro goes with the arithmetic (--effective,
 * --max-micro) and --find-max-micro, not with --noise: drop it". The one
 * place that says which option goes with which job. */
int plan_job_reads(plan_job job, const plan_given *given, char *why, size_t why_len);

/* "accubench: MSG (see accubench help plan)" on stderr; returns 2, the
 * exit status of bad input. */
int plan_usage_error(const char *msg);

#endif
