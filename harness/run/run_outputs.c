#include "run_outputs.h"

#include <stdio.h>

#include "atomic_file.h"
#include "output_path.h"

int run_outputs_open(const run_options *o, run_outputs *out, char *why, size_t why_len)
{
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
    if (!o->csv_path[0])
        return output_path_check("--out", o->out_dir, OUTPUT_DIR, why, why_len);
    if (output_path_check("--csv", o->csv_path, OUTPUT_FILE, why, why_len) ||
        csv_lock_take(&out->lock, o->csv_path, why, why_len))
        return -1;
    /* Only the lock's holder may take a dead writer's temporaries away. */
    atomic_file_remove_stale(o->csv_path);
    return 0;
}

void run_outputs_close(run_outputs *out)
{
    csv_lock_release(&out->lock);
}
