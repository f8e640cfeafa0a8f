#include "run_outputs.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dtype_table.h"
#include "output_path.h"

/* OUT/accubench-PROFILE-BACKEND-DTYPE-YYYYmmdd-HHMMSS, without ".csv". */
static void default_stem(const run_options *o, const char *backend_name, char *stem, size_t n)
{
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
    const char *profile = o->profile[0] ? o->profile : "custom";
    const char *base = strrchr(profile, '/');
    base = base ? base + 1 : profile;
    snprintf(stem, n, "%s/accubench-%.*s-%s-%s-%s", o->out_dir, (int)strcspn(base, "."), base,
             backend_name, dtype_name(o->dtype), stamp);
}

int run_outputs_open(const run_options *o, const char *backend_name, run_outputs *out,
                     char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->lock.fd = -1;
    /* The trace first: it takes no lock, so a refusal leaves nothing held. */
    if (o->trace_path[0]) {
        if (o->trace_steps == 0) {
            snprintf(why, why_len, "--trace %s needs a trace pass, and --trace-steps is 0",
                     o->trace_path);
            return -1;
        }
        if (output_path_check("--trace", o->trace_path, OUTPUT_FILE, why, why_len))
            return -1;
        atomic_file_remove_stale(o->trace_path);
    }
    if (o->csv_path[0]) {
        if (output_path_check("--csv", o->csv_path, OUTPUT_FILE, why, why_len))
            return -1;
        snprintf(out->csv_path, sizeof out->csv_path, "%s", o->csv_path);
    } else {
        char stem[1200];
        if (output_path_check("--out", o->out_dir, OUTPUT_DIR, why, why_len))
            return -1;
        default_stem(o, backend_name, stem, sizeof stem);
        if (csv_claim_new(stem, out->csv_path, sizeof out->csv_path, why, why_len))
            return -1;
        out->named_here = 1;
    }
    if (csv_lock_take(&out->lock, out->csv_path, why, why_len)) {
        run_outputs_close(out, 1);
        return -1;
    }
    /* Under the lock: what the file holds now is what this run would lose. */
    int held = out->named_here ? 0 : csv_existing_check(out->csv_path, o->csv_existing, why,
                                                        why_len);
    if (held < 0) {
        run_outputs_close(out, 1);
        return -1;
    }
    out->existing = held ? o->csv_existing : CSV_REFUSE;
    /* Only the lock's holder may take a dead writer's temporaries away. */
    atomic_file_remove_stale(out->csv_path);
    return 0;
}

void run_outputs_close(run_outputs *out, int discard)
{
    if (discard && out->named_here)
        unlink(out->csv_path);
    csv_lock_release(&out->lock);
}
