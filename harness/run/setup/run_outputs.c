#include "run_outputs.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "curves_file.h"
#include "dtype_table.h"
#include "output_path.h"
#include "trace_export.h"

/* OUT/accubench-PROFILE-BACKEND-DTYPE-YYYYmmdd-HHMMSS, without ".csv";
 * DTYPE is each of the run's, "+" between them (fp32+bf16). */
static void default_stem(const run_options *o, const char *backend_name, char *stem, size_t n)
{
    char stamp[32], dtypes[64] = "";
    for (int i = 0, used = 0; i < o->n_dtypes && used < (int)sizeof dtypes; i++)
        used += snprintf(dtypes + used, sizeof dtypes - (size_t)used, "%s%s", i ? "+" : "",
                         dtype_name(o->dtypes[i]));
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
    const char *profile = o->profile[0] ? o->profile : "custom";
    const char *base = strrchr(profile, '/');
    base = base ? base + 1 : profile;
    snprintf(stem, n, "%s/accubench-%.*s-%s-%s-%s", o->out_dir, (int)strcspn(base, "."), base,
             backend_name, dtypes, stamp);
}

/* Two outputs at one place: the later write would replace, or a rename or
 * the lock's release remove, the other after everything was measured. */
static int collide(const run_options *o, char *why, size_t n)
{
    const char *csv = o->csv_path, *trace = o->trace_path, *dump = o->dump_dir;
    char lock[1100];
    snprintf(lock, sizeof lock, "%s.lock", csv);
    struct stat st;
    if (csv[0] && trace[0] && output_path_same(csv, trace))
        snprintf(why, n, "--csv and --trace name one file (%s): give each its own", trace);
    else if (csv[0] && trace[0] && output_path_same(lock, trace))
        snprintf(why, n, "--trace %s is the lock of --csv %s: give the trace another name",
                 trace, csv);
    else if (!dump[0])
        return 0;
    else if (lstat(dump, &st) == 0 && S_ISLNK(st.st_mode))
        snprintf(why, n, "--dump %s is a symbolic link (the dump would be renamed over it): "
                 "name the folder itself", dump);
    else if (csv[0] && (output_path_same(dump, csv) || output_path_within(csv, dump)))
        snprintf(why, n, "--dump %s would hold or be --csv %s: give them separate places", dump,
                 csv);
    else if (!csv[0] && (output_path_same(dump, o->out_dir) || output_path_within(o->out_dir,
                                                                                  dump)))
        snprintf(why, n, "--dump %s would hold or be --out %s: give them separate places", dump,
                 o->out_dir);
    else if (trace[0] && (output_path_same(dump, trace) || output_path_within(trace, dump)))
        snprintf(why, n, "--dump %s would hold or be --trace %s: give them separate places",
                 dump, trace);
    else
        return 0;
    return -1;
}

/* An earlier run's curves at path: a regular file, not empty (anything
 * else there is refused where curves are to be written, and by readers). */
static int holds_curves(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* NAME.csv and NAME have one curves file, NAME.curves.csv, which the
 * readers of both take as their own: a run that would write or remove it
 * where the other name holds something would give that CSV this run's
 * curves, or take its own away (the refusal below once said "--replace
 * to remove them" of the other CSV's curves). 0, or -1 with the reason. */
static int curves_shared(const char *csv, const char *curves, char *why, size_t n)
{
    char other[sizeof ((run_outputs *)0)->csv_path];
    size_t len = strlen(csv);
    if (len > 4 && !strcmp(csv + len - 4, ".csv"))
        snprintf(other, sizeof other, "%.*s", (int)(len - 4), csv);
    else
        snprintf(other, sizeof other, "%s.csv", csv);
    struct stat st;
    if (stat(other, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    snprintf(why, n, "%s is the loss curves file of %s too (NAME and NAME.csv share it): "
             "give this run another --csv", curves, other);
    return -1;
}

/* A run that trains no curves (no --train-steps) beside an earlier run's:
 * with --append they are the earlier rows' and stay; with --replace they
 * go with the rows they belong to (reserved here, replaced at the first
 * row); else refused, so that a report never reads them as this run's.
 * 0, or -1 with the reason; curves_path left "" where nothing is to do. */
static int reserve_earlier_curves(const run_options *o, run_outputs *out, char *why, size_t n)
{
    char path[sizeof out->curves_path];
    curves_path_of(out->csv_path, path, sizeof path);
    csv_existing want = options_csv_existing(o);
    if (!holds_curves(path) || want == CSV_APPEND)
        return 0;
    if (curves_shared(out->csv_path, path, why, n))
        return -1;
    if (want != CSV_REPLACE) {
        snprintf(why, n, "%s holds an earlier run's loss curves, which a report would read as "
                 "this run's: --replace to remove them, or another --csv", path);
        return -1;
    }
    /* removed once a row is measured: one it cannot remove (immutable, a
     * folder) is refused now, before the CSV's rows are replaced */
    if (output_path_check("the loss curves", path, OUTPUT_FILE, why, n))
        return -1;
    snprintf(out->curves_path, sizeof out->curves_path, "%s", path);
    out->curves_replace = 1;
    return csv_lock_take(&out->curves_lock, path, why, n);
}

/* The curves file beside the CSV, once the CSV's name is known: another
 * output's place refused, a path that is not a regular file refused, its
 * own lock taken (a run writing NAME.csv and one writing NAME hold the same
 * curves), and an earlier run's curves kept only as --append or --replace
 * asks. 0, or -1 with the reason. */
static int reserve_curves(const run_options *o, run_outputs *out, char *why, size_t n)
{
    if (o->train_steps <= 0)
        return reserve_earlier_curves(o, out, why, n);
    const char *path = out->curves_path;
    curves_path_of(out->csv_path, out->curves_path, sizeof out->curves_path);
    if (o->trace_path[0] && output_path_same(path, o->trace_path)) {
        snprintf(why, n, "--trace %s is where --train-steps writes its loss curves: give the "
                 "trace another name", o->trace_path);
        return -1;
    }
    if (o->dump_dir[0] && (output_path_same(path, o->dump_dir) ||
                           output_path_within(path, o->dump_dir))) {
        snprintf(why, n, "--dump %s would hold or be the loss curves %s: give them separate "
                 "places", o->dump_dir, path);
        return -1;
    }
    if (output_path_check("the loss curves", path, OUTPUT_FILE, why, n) ||
        csv_lock_take(&out->curves_lock, path, why, n) ||
        curves_shared(out->csv_path, path, why, n))
        return -1;
    if (holds_curves(path)) {
        csv_existing want = options_csv_existing(o);
        if (want != CSV_APPEND && want != CSV_REPLACE) {
            snprintf(why, n, "%s holds an earlier run's loss curves: --append to add to them, "
                     "--replace to replace them", path);
            return -1;
        }
        out->curves_append = want == CSV_APPEND;
        out->curves_replace = want == CSV_REPLACE;
    }
    atomic_file_remove_stale(path);
    return 0;
}

/* The CSV: --csv reserved, or a fresh name in --out claimed; locked. */
static int reserve_csv(const run_options *o, const char *backend_name, run_outputs *out,
                       char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->lock.fd = -1;
    out->curves_lock.fd = -1;
    if (collide(o, why, why_len))
        return -1;
    /* The trace first: it takes no lock, so a refusal leaves nothing held. */
    if (o->trace_path[0]) {
        if (o->trace_steps == 0) {
            snprintf(why, why_len, "--trace %s needs a trace pass, and --trace-steps is 0",
                     o->trace_path);
            return -1;
        }
        if (output_path_check("--trace", o->trace_path, OUTPUT_FILE, why, why_len))
            return -1;
        if (!trace_export_replaceable(o->trace_path)) {
            snprintf(why, why_len, "--trace %s holds something other than an accubench "
                     "trace (refused: writing the trace would replace it)", o->trace_path);
            return -1;
        }
        atomic_file_remove_stale(o->trace_path);
    }
    if (o->csv_path[0]) {
        snprintf(out->csv_path, sizeof out->csv_path, "%s", o->csv_path);
        return csv_reserve("--csv", out->csv_path, options_csv_existing(o), &csv_kind_results,
                           &out->lock, &out->existing, why, why_len);
    }
    char stem[1200];
    if (output_path_check("--out", o->out_dir, OUTPUT_DIR, why, why_len))
        return -1;
    default_stem(o, backend_name, stem, sizeof stem);
    if (csv_claim_new(stem, out->csv_path, sizeof out->csv_path, why, why_len))
        return -1;
    out->named_here = 1;
    if (csv_lock_take(&out->lock, out->csv_path, why, why_len)) {
        run_outputs_close(out, 1);
        return -1;
    }
    atomic_file_remove_stale(out->csv_path);
    return 0;
}

int run_outputs_open(const run_options *o, const char *backend_name, run_outputs *out,
                     char *why, size_t why_len)
{
    int rc = reserve_csv(o, backend_name, out, why, why_len);
    if (!rc && (rc = reserve_curves(o, out, why, why_len)))
        run_outputs_close(out, 1);
    return rc;
}

void run_outputs_close(run_outputs *out, int discard)
{
    if (discard && out->named_here)
        unlink(out->csv_path);
    csv_lock_release(&out->curves_lock);
    csv_lock_release(&out->lock);
}
