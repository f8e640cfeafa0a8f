#include "cpu_sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cpu_stat_parse(const char *text, cpu_sample *out)
{
    /* the aggregate line is "cpu" then blanks; the per-CPU ones "cpu0" */
    const char *line = text;
    while (line && !(strncmp(line, "cpu", 3) == 0 && (line[3] == ' ' || line[3] == '\t'))) {
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (!line)
        return -1;
    /* user nice system idle iowait irq softirq steal [guest guest_nice]:
     * guest time is counted in user already, so it is not added again. */
    char one[512];
    size_t len = strcspn(line, "\n");
    if (len >= sizeof one)
        return -1;
    memcpy(one, line, len);
    one[len] = '\0';
    double f[8];
    if (sscanf(one + 3, "%lf %lf %lf %lf %lf %lf %lf %lf", &f[0], &f[1], &f[2], &f[3], &f[4],
               &f[5], &f[6], &f[7]) != 8)
        return -1;
    for (int i = 0; i < 8; i++)
        if (!(f[i] >= 0))
            return -1;
    out->busy = f[0] + f[1] + f[2] + f[5] + f[6];
    out->steal = f[7];
    out->total = out->busy + f[3] + f[4] + f[7];
    return 0;
}

int self_stat_parse(const char *text, double *ticks)
{
    /* "pid (comm) state ppid ...": the name may hold ") ", so the fields
     * start after the last ')'; state is field 3, utime 14, stime 15. */
    const char *p = strrchr(text, ')');
    if (!p)
        return -1;
    p++;
    double utime = 0, stime = 0;
    for (int field = 3; field <= 15; field++) {
        while (*p == ' ')
            p++;
        if (!*p || *p == '\n')
            return -1;
        if (field == 14 || field == 15) {
            char *end;
            double v = strtod(p, &end);
            if (end == p || v < 0)
                return -1;
            *(field == 14 ? &utime : &stime) = v;
        }
        while (*p && *p != ' ' && *p != '\n')
            p++;
    }
    *ticks = utime + stime;
    return 0;
}

/* The start of a small /proc file, NUL-terminated; -1 when unreadable. */
static int read_small(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n ? 0 : -1;
}

/* The run's other processes (sibling ranks under mpirun), counted as ours. */
static long run_pids[CPU_SAMPLE_MAX_PIDS];
static int n_run_pids;

void cpu_sample_set_run(const long *pids, int n)
{
    n_run_pids = 0;
    for (int i = 0; i < n && n_run_pids < CPU_SAMPLE_MAX_PIDS; i++)
        if (pids[i] > 0 && pids[i] != (long)getpid())
            run_pids[n_run_pids++] = pids[i];
}

int cpu_sample_now(cpu_sample *out)
{
    char buf[4096], path[64]; /* the "cpu " line comes first */
    if (read_small("/proc/stat", buf, sizeof buf) || cpu_stat_parse(buf, out))
        return -1;
    if (read_small("/proc/self/stat", buf, sizeof buf) || self_stat_parse(buf, &out->self))
        return -1;
    for (int i = 0; i < n_run_pids; i++) {
        double ticks;
        snprintf(path, sizeof path, "/proc/%ld/stat", run_pids[i]);
        /* a rank that has ended (or runs on another host) adds nothing */
        if (!read_small(path, buf, sizeof buf) && !self_stat_parse(buf, &ticks))
            out->self += ticks;
    }
    return 0;
}

int cpu_sample_between(const cpu_sample *a, const cpu_sample *b, double *other_pct,
                       double *steal_pct)
{
    double total = b->total - a->total;
    if (!(total > 0))
        return -1;
    /* Ticks are counted per CPU and per process separately, so ours may
     * read a tick ahead of the machine's: never below zero. */
    double other = (b->busy - a->busy) - (b->self - a->self);
    *other_pct = 100.0 * (other > 0 ? other : 0) / total;
    *steal_pct = 100.0 * (b->steal - a->steal) / total;
    return 0;
}
