/* The A/A check in words (aa_check.h). */
#include "aa_check.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "levers.h"
#include "paired.h"
#include "reduction.h"
#include "report_parts.h"
#include "row_compare.h"
#include "row_index.h"

void aa_sentence(const csv_row *one, const csv_row *two, char *out, size_t len)
{
    paired_ratio p = row_ratio(one, two);
    char ratio[400];
    paired_aa_text(&p, ratio, sizeof ratio);
    snprintf(out, len, "%s, E = %lld, %s (%s): arm 2 / arm 1 = %s.", two->model,
             (long long)two->effective_batch, rp_split(one).s, rp_series(two).s, ratio);
}

int aa_failed(const csv_row *one, const csv_row *two)
{
    paired_verdict v = row_verdict(one, two);
    return v == PAIRED_FASTER || v == PAIRED_SLOWER;
}

/* Appends " OPTION VALUE" to out at *used, the value single-quoted where a
 * shell would read it otherwise (a custom model's name is the user's
 * text); the CSV's ';' back to the ',' the command line takes. */
static void put_option(char *out, size_t len, size_t *used, const char *option,
                       const char *value)
{
    int plain = *value != '\0';
    for (const char *c = value; *c && plain; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                (*c >= '0' && *c <= '9') || strchr(":=;,._-", *c);
    if (*used < len)
        *used += (size_t)snprintf(out + *used, len - *used, " %s %s", option, plain ? "" : "'");
    for (const char *c = value; *c && *used + 5 < len; c++) {
        if (*c == '\'')
            *used += (size_t)snprintf(out + *used, len - *used, "'\\''");
        else
            out[(*used)++] = *c == ';' ? ',' : *c;
    }
    if (*used < len)
        *used += (size_t)snprintf(out + *used, len - *used, "%s", plain ? "" : "'");
    if (*used >= len)
        *used = len - 1;
    out[*used] = '\0';
}

void aa_recheck_command(const csv_row *rows, size_t n, const csv_row *one, char *out,
                        size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    if (one->devices > 1)
        used += (size_t)snprintf(out, len, "mpirun -np %lld ", (long long)one->devices);
    if (used < len)
        used += (size_t)snprintf(out + used, len - used, "accubench run");
    put_option(out, len, &used, "--backend", one->backend);
    put_option(out, len, &used, "--model", one->model);
    char e[32], micro[600] = "";
    snprintf(e, sizeof e, "%lld", (long long)one->effective_batch);
    put_option(out, len, &used, "--effective", e);
    /* the series as the run timed it: its rounds are what the pair's
     * ratio and the verdicts beside it were drawn from */
    row_key series = row_key_series();
    size_t m = 0;
    for (size_t i = 0; i < n && m + 24 < sizeof micro; i++)
        if (result_ran(&rows[i]) && !rows[i].repeat && row_key_equal(&series, &rows[i], one))
            m += (size_t)snprintf(micro + m, sizeof micro - m, "%s%lld", m ? "," : "",
                                  (long long)rows[i].micro_batch);
    put_option(out, len, &used, "--micro", micro);
    put_option(out, len, &used, "--mode", one->mode);
    put_option(out, len, &used, "--dtype", one->dtype);
    /* the reduction and the sync where the series set them, and every
     * lever (levers.h) the series set other than its default */
    if (one->reduction && *one->reduction &&
        strcmp(one->reduction, reduction_name(REDUCTION_SUM)) != 0)
        put_option(out, len, &used, "--reduction", one->reduction);
    if (one->sync && *one->sync)
        put_option(out, len, &used, "--sync", one->sync);
    for (int k = 0; k < LEVER_COUNT; k++) {
        const char *v = lever_in_csv(&levers[k], one);
        if (lever_set(&levers[k], v))
            put_option(out, len, &used, levers[k].option, v);
    }
    if (one->devices > 1) {
        snprintf(e, sizeof e, "%lld", (long long)one->devices);
        put_option(out, len, &used, "--devices", e);
    }
}

void aa_failed_line(const csv_row *rows, size_t n, const csv_row *one, const csv_row *two,
                    char *out, size_t len)
{
    paired_ratio p = row_ratio(one, two);
    char ratio[300], command[1400];
    paired_ratio_text(&p, ratio, sizeof ratio);
    aa_recheck_command(rows, n, one, command, sizeof command);
    /* a bias of that size: every ratio of the series may be off by it, so
     * a verdict past the threshold by less than it is in doubt */
    snprintf(out, len, AA_FAILED_LEAD " for model %s at effective batch %lld (%s; %s): arm 2 / "
             "arm 1 = %s. This model's verdicts at this effective batch may carry a bias of "
             "that size; re-check: %s", two->model, (long long)two->effective_batch,
             rp_split(one).s, rp_series(two).s, ratio, command);
}
