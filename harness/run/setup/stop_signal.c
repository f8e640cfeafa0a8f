#include "stop_signal.h"

#include <string.h>
#include <unistd.h>

volatile sig_atomic_t stop_signal;

/* Rank 0 under mpirun: mpirun follows its SIGTERM with SIGKILL within a
 * second or two, before a busy rank reaches its next check. So the
 * handler itself lets the lock go and says where the rows are (both with
 * calls safe in a handler; the CSV on disk is whole after every row), and
 * the rank writes no more. NULL: one process, which says it at the end. */
static run_outputs *stop_outputs;
static volatile sig_atomic_t said; /* the interrupted line is out */

/* The rows on disk and the configs planned, as the end of a run says
 * them (stop_signal_progress). */
static volatile sig_atomic_t rows_done, configs_planned;

static void put(const char *text)
{
    if (write(STDERR_FILENO, text, strlen(text)) < 0) {
        /* nothing to do about stderr from a handler */
    }
}

/* A count in decimal, with write alone: safe in a handler. */
static void put_count(long n)
{
    char digits[24], *p = digits + sizeof digits - 1;
    *p = '\0';
    do
        *--p = (char)('0' + n % 10);
    while ((n /= 10) > 0 && p > digits);
    put(p);
}

void stop_signal_progress(size_t rows, int planned)
{
    rows_done = (sig_atomic_t)rows;
    configs_planned = (sig_atomic_t)planned;
}

void stop_signal_say(int sig)
{
    run_outputs *out = stop_outputs;
    if (said || !out)
        return;
    said = 1;
    /* the CSV's lock and the curves file's (--train-steps) alike: the
     * run's end that lets both go is never reached (unlink and close
     * alone, safe here) */
    csv_lock_release(&out->lock);
    csv_lock_release(&out->curves_lock);
    if (sig) {
        put("accubench: interrupted (");
        put(stop_signal_name(sig));
        put(")");
    } else {
        put("accubench: stopped because a rank failed or stopped answering (a line says "
            "which)");
    }
    if (rows_done) { /* as one process's end says it */
        put(" after ");
        put_count(rows_done);
        put(" of ");
        put_count(configs_planned);
        put(" configs; the rows measured so far are in ");
        put(out->csv_path);
    } else if (out->existing) { /* a file is written whole once a row is measured */
        put(" before a row was finished; no row written: ");
        put(out->csv_path);
        put(" is as it was");
    } else {
        put(" before a row was finished");
    }
    put("\n");
}

static void on_stop_signal(int sig)
{
    stop_signal = sig;
    stop_signal_say(sig);
}

const char *stop_signal_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM"
           : sig == SIGHUP ? "SIGHUP: its terminal went away"
           : sig == SIGPIPE ? "SIGPIPE: the reader of its output went away"
                            : "SIGINT";
}

static struct sigaction old_int, old_term, old_hup;

void stop_signal_restore(void)
{
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    /* The end's lines (where the rows are, the summary) come after this:
     * a reader gone by then, whether during the sweep (its stop) or only
     * at its end (`run --quiet | head -0`, `run | head -n 30`), would kill
     * the run before it lets its lock go. They fail quietly instead. */
    signal(SIGPIPE, SIG_IGN);
}

/* The handlers run on a stack of their own, not on the stack of the code
 * they interrupt: the measuring thread runs the GEMM library's kernels
 * too (oneDNN's JIT code). With the handler on the interrupted stack,
 * 3 of 15 interrupted sweeps on a loaded machine died of a corrupted heap
 * (free() inside oneDNN's sgemm); on its own stack, with the pool's
 * threads blocking the signals (cpu_parallel.c), 0 of 20. An alternate
 * stack already set (a sanitizer's) is kept. */
static void use_alternate_stack(void)
{
    static char stack[1 << 16];
    stack_t now;
    if (sigaltstack(NULL, &now) == 0 && !(now.ss_flags & SS_DISABLE))
        return;
    stack_t ours = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
    sigaltstack(&ours, NULL);
}

void stop_signal_install(void)
{
    use_alternate_stack();
    struct sigaction sa = {0};
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    /* a closed terminal or a dropped ssh session: killed, it left its
     * lock and its `# unfinished` line unsaid; now it stops as SIGTERM.
     * But where SIGHUP came ignored (nohup, a session that asked for its
     * jobs to outlive it), the run is to go on, as it did. */
    sigaction(SIGHUP, NULL, &old_hup);
    if (old_hup.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
    /* `run ... | head`: the reader leaving killed the sweep mid-config,
     * unsaid; now it stops as Ctrl-C does, its rows kept, the CSV whole.
     * Not put back after (stop_signal_restore). */
    sigaction(SIGPIPE, &sa, NULL);
}

void stop_signal_announce(run_outputs *out)
{
    stop_outputs = out;
}

int stop_signal_said(void)
{
    return said;
}
