#include "report_trust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "row_flags.h"

/* Appends "what" to out with ", " between. */
static void append_listed(char *out, size_t len, size_t *used, const char *what)
{
    if (*used < len)
        *used += (size_t)snprintf(out + *used, len - *used, "%s%s", *used ? ", " : "", what);
}

static void disturbed_why(const csv_row *r, char *out, size_t len, size_t *used)
{
    char t[96];
    if (r->mfu_pct > 100) {
        snprintf(t, sizeof t, "MFU %s%% of its probe", rp_num(r->mfu_pct, 3).s);
        append_listed(out, len, used, t);
    }
    if (r->mfu_datasheet_pct > 100) {
        snprintf(t, sizeof t, "MFU %s%% of the datasheet", rp_num(r->mfu_datasheet_pct, 3).s);
        append_listed(out, len, used, t);
    }
    if (r->probe_drift_pct > 0 && strstr(r->note, "probes drifted")) {
        snprintf(t, sizeof t, "probes drifted %s%%", rp_num(r->probe_drift_pct, 2).s);
        append_listed(out, len, used, t);
    }
    if (strstr(r->note, "other processes used")) {
        snprintf(t, sizeof t, "other processes %s%% of the CPUs, steal %s%%",
                 rp_num(r->other_cpu_pct, 2).s, rp_num(r->steal_pct, 2).s);
        append_listed(out, len, used, t);
    }
    if (strstr(r->note, "GPU clocks held down")) {
        snprintf(t, sizeof t, "GPU clock events %s", r->clock_events);
        append_listed(out, len, used, t);
    }
    if (strstr(r->note, "shorter than its"))
        append_listed(out, len, used, "step shorter than its K passes");
}

void trust_reason(const csv_row *r, char *out, size_t len)
{
    size_t used = 0, n = 0;
    char t[96], why[320] = "";
    out[0] = '\0';
    if (flags_have(r->flags, FLAG_NOISY)) {
        if (r->samples >= 0)
            snprintf(t, sizeof t, "noisy: %lld samples, noise %s%%", (long long)r->samples,
                     rp_num(r->step_noise_pct, 2).s);
        else /* a file without the column */
            snprintf(t, sizeof t, "noisy: noise %s%%", rp_num(r->step_noise_pct, 2).s);
        append_listed(out, len, &used, t);
    }
    if (flags_have(r->flags, FLAG_DISTURBED)) {
        disturbed_why(r, why, sizeof why, &n);
        snprintf(t, sizeof t, "disturbed: %s", n ? "" : "see its note");
        append_listed(out, len, &used, t);
        if (used < len)
            used += (size_t)snprintf(out + used, len - used, "%s", why);
    }
}

size_t report_trust_findings(const report_input *in, doc *d)
{
    size_t clean = 0, flagged = 0, ran = 0;
    for (size_t i = 0; i < in->t->rows; i++) {
        ran += result_ran(&in->rows[i]);
        clean += result_clean(&in->rows[i]);
    }
    flagged = ran - clean;
    if (!flagged)
        return clean;
    size_t cap = 720 * flagged + 1, used = 0;
    char *list = malloc(cap);
    for (size_t i = 0; list && i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (!result_ran(r) || result_clean(r))
            continue;
        char why[440];
        trust_reason(r, why, sizeof why);
        /* with its levers (sync, shard, recompute): the three syncs of one
         * split under mpirun read alike without them */
        used += (size_t)snprintf(list + used, cap - used, "%s%s %s %s%s (%s)", used ? "; " : "",
                                 r->model, rp_split(r).s, r->mode, rp_levers(r).s, why);
        if (used >= cap)
            break;
    }
    doc_bullet(d, "%zu of the %zu rows that ran carry flags, which explain their figures and "
                  "veto no finding (comparisons follow the paired intervals): %s.", flagged, ran,
               list ? list : "out of memory");
    free(list);
    return clean;
}
