/* "Is E right?": from the curves file and the timed rows of one run, per
 * series (model, backend, dtype, mode, devices, sync, recompute, shard),
 * each effective batch's steps and examples to a target loss, the fit of
 * S(B) = S_min + E_min / B (goodput.h), and the time to target: the
 * fastest split within the memory cap times the steps. One builder for
 * the report, plan --time-to-target and the chart's table, so that all
 * three say the same. */
#ifndef ACCUBENCH_GOODPUT_TABLE_H
#define ACCUBENCH_GOODPUT_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "csv_read.h"
#include "curves_read.h"
#include "goodput.h"

typedef struct goodput_point {
    long long e;            /* the effective batch, in examples */
    double lr;              /* the learning rate of the curve kept (NAN: not in the file) */
    int lrs;                /* how many learning rates were trained at this E */
    int lr_edge;            /* where lr lies in that grid: +1 its largest, -1 its smallest,
                             * 0 between them (or one rate alone): a best rate at an edge
                             * brackets nothing, and one beyond it may train faster */
    int no_best;            /* of a grid (lrs > 1), no rate is best: GOODPUT_ALL_DIVERGED,
                             * or GOODPUT_LEADER_DIVERGED (the rate ahead over the steps
                             * its curves share diverged later); lr is then NAN, lr_edge 0,
                             * and goodput_no_best_lr_why says why. 0: lr is the best */
    double final;           /* the kept curve's final loss */
    int curve_steps;        /* its length */
    double steps;           /* interpolated steps to the target; NAN: not reached */
    int sets_target;        /* its final loss is the default target: it reaches it by
                             * its curve's end by construction, whatever E it is */
    double resid;           /* (S - fit) / S, NAN where not fitted */
    const csv_row *fast;    /* the fastest timed split within the cap, or NULL */
    int timed;              /* timed rows of this E, within the cap or not */
    double time_s, time_lo, time_hi; /* steps x its step time (and the median's interval) */
    double time_cover;      /* that interval's coverage, the fast row's step time's (set
                             * wherever fast is, a time or not): 95%, or less where the
                             * step was timed 5 times, or in 5 interleaved rounds, or fewer
                             * (then [min, max]; NAN: unknown) */
    double pred_steps, pred_time_s;  /* S_min (1 + B_simple / E), and x its step time */
    double pred_steps_se;            /* its error (goodput_predicted_se) */
    const read_curve *curve;         /* the curve kept */
} goodput_point;

/* Why a grid names no best rate (goodput_point.no_best). */
enum { GOODPUT_ALL_DIVERGED = 1, GOODPUT_LEADER_DIVERGED = 2 };

typedef struct goodput_series {
    const read_curve *key;  /* a curve of the series, for its name */
    double target;          /* the loss aimed at */
    int target_given;       /* 1: --target-loss; 0: the highest final loss among the E */
    goodput_point *p;       /* effective batch ascending */
    size_t n;
    goodput_fit fit;        /* over the points that reached the target */
    double b_simple, b_simple_err; /* the rows' noise scale, pooled (noise_pool.h; NAN: none) */
    size_t b_simple_rows;          /* how many rows' estimates it pools */
    int best;               /* the point of least time to target, -1: fewer than two
                             * timed (nothing to be least among), or some point is
                             * at_start */
    double start_loss;      /* the lowest loss at step 0 among the kept curves */
    size_t at_start;        /* points whose curve meets the target at step 0: the
                             * target is at or above their starting loss, so they
                             * take no time and none is least (their time NAN) */
} goodput_series;

typedef struct goodput_request {
    double target;   /* NAN or <= 0: each series' default */
    int64_t mem_cap; /* bytes; -1: no cap */
} goodput_request;

/* The series of the correct reduction's forward curves. 0 (with *n 0
 * where none), or -1 out of memory. */
int goodput_build(const curves_table *ct, const csv_row *rows, size_t nrows,
                  const goodput_request *req, goodput_series **out, size_t *n);
void goodput_free(goodput_series *s, size_t n);

/* "gpt-tiny (cpu, fp32, eager)": the series' name for a heading or a line. */
void goodput_series_name(const goodput_series *s, char *out, size_t len);

/* Where the series has no target: none was given and every E's curve
 * diverged, so none has a final loss to be the default. Why, in words for
 * plan and the report alike, or NULL where it has one. */
const char *goodput_no_target_why(const goodput_series *s);

/* Where a point's grid names no best rate (no_best), why, in words for
 * plan and the report alike ("every rate of its grid diverged ..."), or
 * NULL where lr is the best (or the one rate trained). A rate whose own
 * curve diverged is no best rate, whatever it led by: the loss it would
 * be chosen for is not there. */
const char *goodput_no_best_lr_why(const goodput_point *p);

/* Where the target is at or above a curve's starting loss (at_start),
 * why no time to target is compared, in words for plan and the report
 * alike: 0 and the text, or -1 (out "") where every point had to train. */
int goodput_at_start_text(const goodput_series *s, char *out, size_t len);

/* Where the point's time interval covers less than MEDIAN_CI_LEVEL (its
 * step timed 5 times or in 5 rounds or fewer: [min, max]), " (a 75%
 * interval: the step timed 3 times)" (or "timed in 3 rounds") into out,
 * for plan and the report alike; else "". */
void goodput_cover_text(const goodput_point *p, char *out, size_t len);

/* Why a point that reached the target has no time to target: no timed row
 * of its E at all, or none within the cap (a phrase: "has no ..."). */
const char *goodput_untimed_why(const goodput_point *p);

/* Where no point of any series has a time to target (none reached the
 * target, every one met it at the start, or none that reached it was
 * timed), why, in one line for plan's exit 1: 0 and the text, or -1
 * (out "") where some point has one. */
int goodput_none_timed_text(const goodput_series *s, size_t n, char *out, size_t len);

/* A figure, its unit and its interval, the three to the decimals that
 * give the figure sig significant digits ("11.5 s [4.6..17.0]", not
 * "11.5 s [4.6..17]", nor "0.00107 [9.49e-04..0.00146]"); a time under a
 * second in ms ("1.07 ms [0.949..1.46]"); the figure alone ("1.07 ms")
 * where lo or hi is NAN; "-" where v is NAN. Returns out: plan and the
 * report print times to target through it alike. */
const char *goodput_figure_text(char *out, size_t len, double v, double lo, double hi, int sig,
                                const char *unit);

/* The same with a standard error instead of an interval, to the figure's
 * decimals ("2.22 +- 0.41 ms"); the figure alone where err is NAN. */
const char *goodput_figure_err_text(char *out, size_t len, double v, double err, int sig,
                                    const char *unit);

/* A point's time to target beside the best's: b over best with the widest
 * interval their step times allow (paired.h's ratio_of_intervals), and
 * where that interval does not clear the comparisons' threshold, what the
 * rule makes of it: the same as the least within it, or not yet separated
 * from the least. */
void goodput_slower_text(const goodput_series *s, long long e, char *out, size_t len);

/* How many other timed E the rule does not separate from the least: the
 * least is then the least by its median alone. */
int goodput_tied_count(const goodput_series *s);

/* B_crit / B_simple where both are measured (else NAN), its error into
 * *err: the ratio times the sum of their relative errors, which holds
 * however the fit and the noise pass correlate. */
double goodput_crit_ratio(const goodput_series *s, double *err);

/* How the series' B_simple was pooled, in words for plan and the report
 * alike: one row's own estimate, or the inverse-variance mean of n rows
 * with the error that does not shrink with their shared windows. */
void goodput_pooled_text(const goodput_series *s, char *out, size_t len);

/* The noise scale along the point's curve where it was measured
 * (--noise-windows with --train-steps, K > 1): "step 0: 19 +- 1, step 37:
 * 25 +- 2, ..." into out; 0, or -1 (out "") where none was. */
int goodput_noise_text(const goodput_point *p, char *out, size_t len);

/* Where the point's best rate is the largest or the smallest of its grid
 * (lr_edge), "its largest" or "its smallest", for plan and the report
 * alike; else "". */
const char *goodput_lr_edge_word(const goodput_point *p);

/* Where some point's best rate lies at an edge of its grid, what that
 * means for its steps, in one line for plan and the report alike: "the
 * best rate of E = 8 and 16 is the largest of its grid, and of E = 256
 * the smallest: ..."; 0 and the text, or -1 (out "") where none does. */
int goodput_lr_edge_text(const goodput_series *s, char *out, size_t len);

/* The key columns that end each row of the charts' tables, after their
 * own: what sets a series apart from another of its model. */
#define GOODPUT_KEY_HEADER "backend,dtype,mode,devices,sync,recompute,shard,grad_dtype"

/* The chart's table (plots/time_to_target.gp): a header, then a line per
 * series and E, comma-separated, ending with the series' key columns
 * (GOODPUT_KEY_HEADER), so that a chart of several series names each. */
void goodput_write_table(FILE *f, const goodput_series *s, size_t n);

/* The loss chart's table (plots/loss_to_target.gp): each E's kept curve
 * (its best rate), a line per logged step, with the examples seen before
 * it, its loss and the loss smoothed as steps to target reads it, then
 * the series' key columns (GOODPUT_KEY_HEADER). */
void goodput_write_curves(FILE *f, const goodput_series *s, size_t n);

/* A number for a table, then sep: empty where not measured (gnuplot's
 * missing), else %.6g. */
void goodput_put_num(FILE *f, double v, const char *sep);

#endif
