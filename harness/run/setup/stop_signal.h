/* SIGINT, SIGTERM, SIGHUP (its terminal closed) and SIGPIPE (`run |
 * head`: its reader went away) during a sweep: the configs stop and the
 * rows measured so far stay on disk. Under mpirun, rank 0's handler also
 * lets the CSV's lock go and says where the rows are, because mpirun follows
 * its SIGTERM with SIGKILL before a busy rank reaches its next check. */
#ifndef ACCUBENCH_STOP_SIGNAL_H
#define ACCUBENCH_STOP_SIGNAL_H

#include <signal.h>

#include "run_outputs.h"

/* The signal that stopped the sweep, or 0. */
extern volatile sig_atomic_t stop_signal;

/* Catches SIGINT, SIGTERM, SIGHUP (unless it came ignored: nohup) and
 * SIGPIPE, keeping the handlers they had. */
void stop_signal_install(void);
/* The signal's name as the "interrupted (...)" lines give it. */
const char *stop_signal_name(int sig);
/* Puts the handlers back as they were, but for SIGPIPE's: ignored, so
 * that the end's lines to a reader gone fail quietly. */
void stop_signal_restore(void);
/* The outputs a handler releases and names (NULL: none, the end of the
 * run says it instead). */
void stop_signal_announce(run_outputs *out);
/* The "interrupted" line for sig (0: a rank failed or stopped answering,
 * and a line said so),
 * once, with the lock let go: what the handler does, and what a rank's
 * watch calls. Safe in a handler. */
void stop_signal_say(int sig);
/* The rows on disk so far and the configs planned, for that line to say
 * (the sweep's writer calls it after each row). */
void stop_signal_progress(size_t rows, int planned);
/* Whether that line is out. */
int stop_signal_said(void);

#endif
