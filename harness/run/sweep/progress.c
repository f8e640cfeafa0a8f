#include "progress.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

void progress_duration(double s, char *out, size_t len)
{
    long t = s > 0 ? (long)(s + 0.5) : 0;
    if (t < 60)
        snprintf(out, len, "%ld s", t);
    else if (t < 3600)
        snprintf(out, len, "%ld min %02ld s", t / 60, t % 60);
    else
        snprintf(out, len, "%ld h %02ld min", t / 3600, t / 60 % 60);
}

static double seconds_since(uint64_t t0_ns, uint64_t now_ns)
{
    return (double)(now_ns - t0_ns) / 1e9;
}

/* "config 3 of 12", or "configs 15-21 of 21" while a comparison's
 * rounds run. */
static int which_text(const progress *p, char *out, size_t len)
{
    if (p->group_rounds)
        return snprintf(out, len, "configs %d-%d of %d", p->group_lo, p->group_hi, p->total);
    return snprintf(out, len, "config %d of %d", p->current, p->total);
}

/* The costed seconds left (eta.h), NAN without a plan. A comparison's
 * members are checked one by one and then timed together, so no one of
 * them is "the current config": the group is costed by its phases (the
 * checks left, then its rounds and passes), then the configs after it. */
static double costed_left(const progress *p, uint64_t now)
{
    if (!p->eta || p->current <= 0)
        return NAN;
    if (!p->group_lo)
        return eta_left_s(p->eta, p->current - 1,
                          p->started > p->done ? seconds_since(p->config_t0_ns, now) : 0,
                          p->current_pass_ms);
    double group = p->group_rounds_t0_ns
                       ? eta_group_left_s(p->eta, p->group_lo - 1, p->group_hi - 1, -1, 0,
                                          seconds_since(p->group_rounds_t0_ns, now))
                       : eta_group_left_s(p->eta, p->group_lo - 1, p->group_hi - 1,
                                          p->current - 1, seconds_since(p->config_t0_ns, now),
                                          NAN);
    double after = p->group_hi < p->total ? eta_left_s(p->eta, p->group_hi, 0, NAN) : 0;
    return group + after; /* NAN where either is */
}

/* "config 3 of 12 (S fp32 16x4 async sum); 42 s so far, about 1 min 30 s
 * left". The estimate is costed (eta.h) once a config has been measured;
 * else, or without a plan, the mean time of the finished configs times the
 * configs not finished, less what the current one has already run. */
static void config_text(const progress *p, uint64_t now, char *out, size_t len)
{
    char so_far[32], left[32];
    progress_duration(seconds_since(p->t0_ns, now), so_far, sizeof so_far);
    int used = which_text(p, out, len);
    if (used < (int)len)
        used += snprintf(out + used, len - (size_t)used, " (%s); %s so far", p->config, so_far);
    double costed = costed_left(p, now);
    if (!isnan(costed) && !eta_any_finished(p->eta) && used < (int)len) {
        char most[32]; /* nothing of this machine's pace learnt yet (eta.h) */
        progress_duration(costed, left, sizeof left);
        progress_duration(ETA_GUESS_SPAN * costed, most, sizeof most);
        if (!strcmp(left, most)) /* "about 1 s to 1 s": one figure at that rounding */
            snprintf(out + used, len - (size_t)used,
                     ", about %s left (a guess until a config has finished)", left);
        else
            snprintf(out + used, len - (size_t)used,
                     ", about %s to %s left (a guess until a config has finished)", left, most);
    } else if (!isnan(costed) && used < (int)len) {
        progress_duration(costed, left, sizeof left);
        snprintf(out + used, len - (size_t)used, ", about %s left", left);
    } else if (p->done > 0 && used < (int)len) {
        double per = (double)p->done_ns / 1e9 / p->done;
        double in_current = p->started > p->done ? seconds_since(p->config_t0_ns, now) : 0;
        double rest = per * (p->total - p->done) - in_current;
        if (rest < per * (p->total - p->started))
            rest = per * (p->total - p->started);
        progress_duration(rest, left, sizeof left);
        snprintf(out + used, len - (size_t)used, ", about %s left", left);
    }
}

/* The terminal's status line: the config and, when one runs, its phase. */
static void draw_status(progress *p, uint64_t now)
{
    char text[400], phase[160] = "", took[32];
    config_text(p, now, text, sizeof text);
    if (p->phase[0]) {
        progress_duration(seconds_since(p->phase_t0_ns, now), took, sizeof took);
        snprintf(phase, sizeof phase, ": %s, %s", p->phase, took);
    }
    /* One line, or \r would not get back to its start. */
    struct winsize ws;
    int width = ioctl(fileno(p->f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
    fprintf(p->f, "\r\033[K%.*s", width, strncat(text, phase, sizeof text - strlen(text) - 1));
    fflush(p->f);
    p->shown = 1;
}

static void clear_locked(progress *p)
{
    if (p->f && p->tty && p->shown) {
        fputs("\r\033[K", p->f);
        fflush(p->f);
        p->shown = 0;
    }
}

/* Wakes every tick: on a terminal the status line's clocks move; a phase
 * silent for longer than silent_after_s gets its line, once. */
static void *watch(void *arg)
{
    progress *p = arg;
    double tick = p->silent_after_s < 2 ? p->silent_after_s / 2 : 1.0;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        long ns = until.tv_nsec + (long)(tick * 1e9);
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&p->wake, &p->mu, &until);
        if (p->stop)
            break;
        uint64_t now = trace_now_ns();
        if (p->phase[0] && !p->phase_told &&
            seconds_since(p->phase_t0_ns, now) >= p->silent_after_s) {
            p->phase_told = 1;
            if (!p->tty) {
                char took[32], which[64];
                progress_duration(seconds_since(p->phase_t0_ns, now), took, sizeof took);
                which_text(p, which, sizeof which);
                fprintf(p->f, "%s: %s (running for %s)\n", which, p->phase, took);
                fflush(p->f);
            }
        }
        if (p->tty && p->shown)
            draw_status(p, now);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int progress_start(progress *p, FILE *f, int total, double silent_after_s)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->total = total;
    p->silent_after_s = silent_after_s > 0 ? silent_after_s : PROGRESS_SILENT_S;
    p->t0_ns = trace_now_ns();
    if (!f)
        return 0;
    p->tty = isatty(fileno(f));
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, &attr);
    pthread_condattr_destroy(&attr);
    /* Signals (SIGINT, SIGTERM) stay with the thread that measures. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    p->watching = pthread_create(&p->watcher, NULL, watch, p) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return p->watching ? 0 : -1;
}

/* The config's line: the status line on a terminal, else a line of its own. */
static void announce(progress *p, uint64_t now)
{
    if (p->tty) {
        draw_status(p, now);
    } else {
        char text[400];
        config_text(p, now, text, sizeof text);
        fprintf(p->f, "%s\n", text);
        fflush(p->f);
    }
}

void progress_config(progress *p, const char *label)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    uint64_t now = trace_now_ns();
    p->started++;
    p->current = p->started;
    p->config_t0_ns = now;
    p->current_pass_ms = NAN;
    p->current_noise_s = NAN;
    p->current_noise_windows = 0;
    p->phase[0] = '\0';
    snprintf(p->config, sizeof p->config, "%s", label);
    if (!p->group_lo) /* a comparison's member is announced as it is resumed */
        announce(p, now);
    pthread_mutex_unlock(&p->mu);
}

void progress_config_resume(progress *p, const progress_mark *m, int announce_line)
{
    if (!p || !p->f || m->index < 0)
        return;
    pthread_mutex_lock(&p->mu);
    uint64_t now = trace_now_ns();
    p->current = m->index + 1;
    p->config_t0_ns = now - (uint64_t)(m->seconds * 1e9);
    p->current_pass_ms = m->pass_ms;
    p->current_noise_s = m->noise_s;
    p->current_noise_windows = m->noise_windows;
    p->phase[0] = '\0';
    p->group_rounds = 0;
    snprintf(p->config, sizeof p->config, "%s", m->label);
    if (announce_line)
        announce(p, now);
    else if (p->tty)
        draw_status(p, now);
    pthread_mutex_unlock(&p->mu);
}

void progress_group_begin(progress *p, int n)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    p->group_lo = p->started + 1;
    p->group_hi = p->started + n;
    p->group_rounds = 0;
    p->group_rounds_t0_ns = 0;
    pthread_mutex_unlock(&p->mu);
}

void progress_group_rounds(progress *p)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    p->group_rounds = 1;
    if (!p->group_rounds_t0_ns)
        p->group_rounds_t0_ns = trace_now_ns();
    p->phase[0] = '\0';
    snprintf(p->config, sizeof p->config, "timed together in interleaved rounds");
    if (p->tty)
        draw_status(p, trace_now_ns());
    pthread_mutex_unlock(&p->mu);
}

void progress_group_end(progress *p)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    p->group_lo = p->group_hi = p->group_rounds = 0;
    p->group_rounds_t0_ns = 0;
    pthread_mutex_unlock(&p->mu);
}

void progress_phase(progress *p, const char *what)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    snprintf(p->phase, sizeof p->phase, "%s", what);
    p->phase_t0_ns = trace_now_ns();
    p->phase_told = 0;
    if (p->tty)
        draw_status(p, p->phase_t0_ns);
    pthread_mutex_unlock(&p->mu);
}

void progress_config_done(progress *p)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    p->done++;
    p->done_ns += trace_now_ns() - p->config_t0_ns;
    p->phase[0] = '\0';
    pthread_mutex_unlock(&p->mu);
}

void progress_clear(progress *p)
{
    if (!p || !p->f)
        return;
    fflush(stdout);
    pthread_mutex_lock(&p->mu);
    clear_locked(p);
    pthread_mutex_unlock(&p->mu);
}

void progress_stop(progress *p)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->mu);
    if (p->watching)
        pthread_join(p->watcher, NULL);
    clear_locked(p);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    p->f = NULL;
}

void progress_set_eta(progress *p, eta *e)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    p->eta = e;
    pthread_mutex_unlock(&p->mu);
}

void progress_config_pass(progress *p, double pass_ms)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    if (isnan(p->current_pass_ms))
        p->current_pass_ms = pass_ms;
    pthread_mutex_unlock(&p->mu);
}

void progress_config_noise(progress *p, double seconds, int windows)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    p->current_noise_s = seconds;
    p->current_noise_windows = windows;
    pthread_mutex_unlock(&p->mu);
}

void progress_config_result(progress *p, double step_ms, double pass_ms, long long samples)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->eta) {
        int i = p->current - 1;
        eta_record(p->eta, i, step_ms, pass_ms > 0 ? pass_ms : p->current_pass_ms,
                   seconds_since(p->config_t0_ns, trace_now_ns()));
        eta_record_parts(p->eta, i, p->current_noise_s, p->current_noise_windows,
                         samples > 0 ? (int)samples : 0);
    }
    pthread_mutex_unlock(&p->mu);
}

void progress_config_checked(progress *p, int timed)
{
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->eta)
        eta_record_checked(p->eta, p->current - 1, timed);
    pthread_mutex_unlock(&p->mu);
}

void progress_config_set_aside(progress *p, progress_mark *m)
{
    *m = (progress_mark){.index = -1};
    if (!p || !p->f)
        return;
    pthread_mutex_lock(&p->mu);
    *m = (progress_mark){.index = p->current - 1, .pass_ms = p->current_pass_ms,
                         .noise_s = p->current_noise_s,
                         .noise_windows = p->current_noise_windows,
                         .seconds = seconds_since(p->config_t0_ns, trace_now_ns())};
    snprintf(m->label, sizeof m->label, "%s", p->config);
    /* what the plan may cost the rest of the comparison on before it ends:
     * the member's pass, and what its noise pass took (the host's cost per
     * pass, learnt from it, is most of model M's minutes on 2 cores) */
    if (p->eta && p->current_pass_ms > 0)
        eta_record_probe(p->eta, m->index, p->current_pass_ms);
    if (p->eta && p->current_noise_s > 0)
        eta_record_parts(p->eta, m->index, p->current_noise_s, p->current_noise_windows, 0);
    pthread_mutex_unlock(&p->mu);
}

void progress_config_done_marked(progress *p, const progress_mark *m, double step_ms,
                                 double pass_ms, long long samples, int rounds,
                                 double shared_s)
{
    if (!p || !p->f || m->index < 0)
        return;
    pthread_mutex_lock(&p->mu);
    /* a member skipped or failed in its checks took no part in the rounds */
    double wall_s = m->seconds + (step_ms > 0 ? shared_s : 0);
    if (p->eta) {
        eta_record(p->eta, m->index, step_ms, pass_ms > 0 ? pass_ms : m->pass_ms, wall_s);
        eta_record_parts(p->eta, m->index, m->noise_s, m->noise_windows,
                         samples > 0 ? (int)samples : 0);
        eta_record_rounds(p->eta, m->index, rounds);
    }
    p->done++;
    p->done_ns += (uint64_t)(wall_s * 1e9);
    p->phase[0] = '\0';
    pthread_mutex_unlock(&p->mu);
}
