/* What else ran on the CPUs while a config was timed, from Linux's /proc:
 * the machine's busy and steal time (/proc/stat, the "cpu" line) and this
 * process's own CPU time, every thread (/proc/self/stat). Other processes'
 * share is the machine's busy time less ours, over all the CPUs' time:
 * another tenant's build or a busy loop shows there; steal is the time a
 * hypervisor gave our virtual CPUs to someone else. Both in clock ticks
 * (USER_HZ), the unit both files share. */
#ifndef ACCUBENCH_CPU_SAMPLE_H
#define ACCUBENCH_CPU_SAMPLE_H

typedef struct cpu_sample {
    double busy;  /* user + nice + system + irq + softirq, every CPU */
    double steal; /* time stolen by the hypervisor */
    double total; /* busy + idle + iowait + steal */
    double self;  /* this process and the run's others: utime + stime */
} cpu_sample;

/* Parses the aggregate "cpu " line of /proc/stat's text into busy, steal
 * and total (self is left alone). Returns 0, or -1 when the text has no
 * such line or it holds fewer than the 8 fields steal needs. */
int cpu_stat_parse(const char *proc_stat, cpu_sample *out);

/* Parses /proc/self/stat's text: utime + stime (fields 14 and 15, counted
 * after the command name, which may hold spaces and parentheses) into
 * *ticks. Returns 0 or -1. */
int self_stat_parse(const char *self_stat, double *ticks);

/* The run's other processes on this host (the sibling ranks mpirun
 * started): their CPU time counts as the run's, not as other processes'.
 * Process-wide; pids not found on this host add nothing. At most: */
#define CPU_SAMPLE_MAX_PIDS 256
void cpu_sample_set_run(const long *pids, int n);

/* Reads both files now (and each run process's stat). Returns 0, or -1 where /proc is missing or
 * unreadable (not Linux): the disturbance is then not measured. */
int cpu_sample_now(cpu_sample *out);

/* Between two samples: other processes' CPU time and the steal time, each
 * in percent of all the CPUs' time in between. Returns 0, or -1 when no
 * tick passed (too short to say). */
int cpu_sample_between(const cpu_sample *a, const cpu_sample *b, double *other_pct,
                       double *steal_pct);
/* The CPUs' clock ticks between two samples (every CPU's, added up). */
static inline double cpu_sample_ticks(const cpu_sample *a, const cpu_sample *b)
{
    return b->total - a->total;
}

#endif
