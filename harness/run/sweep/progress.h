/* Where a sweep stands, on stderr: "config i of N" and the time left at the
 * pace so far as each config starts, and a line naming the phase (the skip
 * probe, the gradient check, the trace pass...) when one runs silent for
 * long. On a terminal it is one status line rewritten in place and cleared
 * before each table row, so the table on stdout reads as without it; on a
 * pipe or a file, whole lines. Nothing at all under --quiet (f = NULL). */
#ifndef ACCUBENCH_PROGRESS_H
#define ACCUBENCH_PROGRESS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "eta.h"

/* A phase silent this long gets its line. */
#define PROGRESS_SILENT_S 3.0

typedef struct progress {
    FILE *f;               /* NULL: silent */
    int tty;               /* f is a terminal: one status line, rewritten */
    int total, started, done;
    int current;           /* the config the lines name, from 1 (a
                            * comparison's members come back in turn) */
    int group_lo, group_hi; /* a comparison's configs, from 1 (0: none) */
    int group_rounds;      /* its interleaved rounds run: the lines name it */
    uint64_t group_rounds_t0_ns; /* when its rounds began (0: not yet) */
    double silent_after_s;
    uint64_t t0_ns, done_ns; /* the sweep's start; time spent in finished configs */
    uint64_t config_t0_ns, phase_t0_ns;
    char config[160], phase[96];
    int phase_told;        /* the silent phase's line is out */
    int shown;             /* a status line is on the terminal */
    eta *eta;              /* the plan the time left is costed on (NULL: the
                            * mean time of the configs so far) */
    double current_pass_ms; /* the running config's single pass (NAN: not yet) */
    double current_noise_s; /* its noise pass's seconds (NAN: none yet) */
    int current_noise_windows; /* and the windows it ran */
    /* The watcher thread that notices silent phases. */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t watcher;
    int watching, stop;
} progress;

/* Starts reporting a sweep of `total` configs to f (NULL: nothing, no
 * thread). A phase silent for silent_after_s gets a line. Returns 0, or -1
 * when the watcher thread could not start (the per-config lines still
 * come). */
int progress_start(progress *p, FILE *f, int total, double silent_after_s);

/* Config i (counted from 1) begins; `label` names it ("S fp32 16x4 async
 * sum"). The line says how long the sweep has run and, once a config has
 * finished, about how long the rest will take at the pace so far. */
void progress_config(progress *p, const char *label);

/* A phase of the current config begins ("gradient check"). */
void progress_phase(progress *p, const char *what);

/* The current config is finished (its row is written). */
void progress_config_done(progress *p);

/* Configs run together (interleaved rounds): each is set aside when its
 * checks end, what the plan learns of it kept here, and finished later by
 * its mark with its share of the time they ran together. */
typedef struct progress_mark {
    int index;            /* its place in the sweep, from 0 */
    double pass_ms, noise_s, seconds; /* as far as it ran alone */
    int noise_windows;
    char label[160];
} progress_mark;
void progress_config_set_aside(progress *p, progress_mark *m);
/* The set-aside config of mark m runs again (its checks; after the rounds,
 * its counting and trace passes): the lines name it, and its time and
 * first measurements go on from the mark. `announce_line`: its "config i of N"
 * line is printed (off a terminal), as progress_config prints one. */
void progress_config_resume(progress *p, const progress_mark *m, int announce_line);
/* The next n configs are one comparison: their progress_config lines are
 * held back (each is announced when it is resumed for its checks), and
 * the time left is costed by the group's phases (eta_group_left_s). */
void progress_group_begin(progress *p, int n);
/* Its checks are done and its interleaved rounds run: the lines name the
 * group ("configs 15-21 of 21"). */
void progress_group_rounds(progress *p);
void progress_group_end(progress *p);
/* The running member's checks are done: it goes on to the rounds (`timed`
 * 1) or not. */
void progress_config_checked(progress *p, int timed);
/* The config of mark m is finished: its result (as progress_config_result
 * says), its comparison's `rounds` (kept and dropped) and, where it was
 * timed in them, `shared_s` seconds more (its share of the rounds and
 * the passes after them). */
void progress_config_done_marked(progress *p, const progress_mark *m, double step_ms,
                                 double pass_ms, long long samples, int rounds,
                                 double shared_s);

/* The time left is costed on e (eta.h: each config's pass and step time
 * against its budget), which the calls below keep up to date. */
void progress_set_eta(progress *p, eta *e);
/* The running config's single pass took pass_ms (its first measurement). */
void progress_config_pass(progress *p, double pass_ms);
/* The running config's noise pass took `seconds` over `windows` windows. */
void progress_config_noise(progress *p, double seconds, int windows);
/* The running config measured this step and pass time (NAN: it did not
 * run) over `samples` timed steps (0 or less: none); call before
 * progress_config_done. */
void progress_config_result(progress *p, double step_ms, double pass_ms, long long samples);

/* Clears the status line before something else is printed (a table row on
 * stdout, which is flushed first). A no-op off a terminal. */
void progress_clear(progress *p);

/* Stops the watcher and clears the status line. */
void progress_stop(progress *p);

/* "42 s", "3 min 05 s", "1 h 02 min": a duration for people. */
void progress_duration(double seconds, char *out, size_t len);

#endif
