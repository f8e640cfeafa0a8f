/* RUN.json: the run's record as typed JSON, beside the report's Markdown
 * and HTML, for programs (a dashboard, a CI check) that would otherwise
 * parse the CSV's text: the metadata lines as an object, every row with
 * each column typed (a number, a string, or null where the CSV says "not
 * measured"), and where a row has a paired ratio to its reference, the
 * rule's verdict in the words the report uses; where it has a twin in the
 * reference dtype, the report's comparison with it (report_dtype.c);
 * whether it is a config's later row (a repeat). Then the A/B/C verdicts
 * (report_verdict.c) and the A/A checks (report_aa.c) as records, from
 * the code the Markdown's sentences come from. */
#include "report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aa_check.h"
#include "paired.h"
#include "report_parts.h"
#include "report_verdict.h"
#include "row_compare.h"
#include "row_index.h"

/* The length of the UTF-8 sequence at s, or 0 where it is not one
 * (a stray or overlong byte, a surrogate, past U+10FFFF). */
static int utf8_length(const unsigned char *s)
{
    int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
                            : s[0] >= 0xe0 && s[0] < 0xf0 ? 3
                            : s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
        (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * a byte that is not UTF-8 written as U+FFFD (a CSV's text is whatever
 * bytes the run was given; JSON must be UTF-8). */
static void json_string(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    fputc('"', f);
    while (*s) {
        int n = utf8_length(s);
        if (!n) {
            fputs("\\ufffd", f);
            s++;
        } else if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s++);
        } else if (*s < 0x20) {
            fprintf(f, "\\u%04x", *s++);
        } else {
            fwrite(s, 1, (size_t)n, f);
            s += n;
        }
    }
    fputc('"', f);
}

/* A number, null where it is not finite (not measured, no interval). */
static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

/* One field of a row: null where the CSV left it empty (text "", an
 * integer -1, a number NAN: csv_read.h). */
static void json_field(FILE *f, const csv_row *r, int column)
{
    const char *at = (const char *)r + csv_row_offset[column];
    switch (result_columns[column].type) {
    case RESULT_IS_TEXT: {
        const char *s = *(const char *const *)(const void *)at;
        if (s && *s)
            json_string(f, s);
        else
            fputs("null", f);
        break;
    }
    case RESULT_IS_INT: {
        int64_t v;
        memcpy(&v, at, sizeof v);
        if (v < 0)
            fputs("null", f);
        else
            fprintf(f, "%lld", (long long)v);
        break;
    }
    default: {
        double v;
        memcpy(&v, at, sizeof v);
        json_number(f, v);
        break;
    }
    }
}

/* The rule's words for the row's paired ratio to its reference; null for
 * the reference itself and where the row has no interval. */
static void json_verdict(FILE *f, const csv_row *r)
{
    paired_ratio p = {.rounds = r->rounds > 0 ? (size_t)r->rounds : 0,
                      .ratio = r->vs_ref, .lo = r->vs_ref_lo, .hi = r->vs_ref_hi};
    paired_verdict v = paired_judge(&p, PAIRED_THRESHOLD);
    int reference = p.ratio == 1 && p.lo == 1 && p.hi == 1;
    if (reference || v == PAIRED_UNKNOWN)
        fputs("null", f);
    else
        json_string(f, paired_verdict_words(v, PAIRED_THRESHOLD).s);
}

/* The row against its twin in the reference dtype, as "One dtype against
 * another" gives it; every field null where the row has no twin. */
static void json_vs_dtype(FILE *f, const char *ref, const dtype_pair *pair)
{
    if (!pair || pair->twin == ROW_NONE) {
        fputs(", \"vs_dtype\": null, \"vs_dtype_ratio\": null, \"vs_dtype_lo\": null, "
              "\"vs_dtype_hi\": null, \"vs_dtype_paired_rounds\": null, "
              "\"vs_dtype_verdict\": null", f);
        return;
    }
    fputs(", \"vs_dtype\": ", f);
    json_string(f, ref);
    fputs(", \"vs_dtype_ratio\": ", f);
    json_number(f, pair->p.ratio);
    fputs(", \"vs_dtype_lo\": ", f);
    json_number(f, pair->p.lo);
    fputs(", \"vs_dtype_hi\": ", f);
    json_number(f, pair->p.hi);
    fprintf(f, ", \"vs_dtype_paired_rounds\": %zu, \"vs_dtype_verdict\": ", pair->p.rounds);
    if (pair->v == PAIRED_UNKNOWN)
        fputs("null", f);
    else
        json_string(f, paired_verdict_words(pair->v, PAIRED_THRESHOLD).s);
}

/* `"name": {"ratio": .., "lo": .., "hi": .., "paired_rounds": N,
 * "verdict": ..}`: a comparison of two rows by the rule (paired_rounds 0
 * where they were timed apart and compare by their intervals; the verdict
 * null where there is no interval). */
static void json_comparison(FILE *f, const char *name, const paired_ratio *p)
{
    paired_verdict v = paired_judge(p, PAIRED_THRESHOLD);
    fprintf(f, "\"%s\": {\"ratio\": ", name);
    json_number(f, p->ratio);
    fputs(", \"lo\": ", f);
    json_number(f, p->lo);
    fputs(", \"hi\": ", f);
    json_number(f, p->hi);
    fprintf(f, ", \"paired_rounds\": %zu, \"verdict\": ", p->rounds);
    if (v == PAIRED_UNKNOWN)
        fputs("null}", f);
    else {
        json_string(f, paired_verdict_words(v, PAIRED_THRESHOLD).s);
        fputs("}", f);
    }
}

/* "verdicts": the A/B/C verdicts the report opens with (report_verdict.c),
 * each naming its rows by their place in "rows". */
static void json_verdicts(FILE *f, const report_input *in, const abc_verdict *v, size_t n)
{
    fputs(",\n  \"verdicts\": [", f);
    for (size_t i = 0; i < n; i++) {
        const csv_row *a = &in->rows[v[i].row[0]];
        fputs(i ? ",\n    {\"model\": " : "\n    {\"model\": ", f);
        json_string(f, a->model);
        fprintf(f, ", \"effective_batch\": %lld, \"mode\": ", (long long)a->effective_batch);
        json_string(f, a->mode);
        fputs(", \"dtype\": ", f);
        json_string(f, a->dtype);
        fputs(", \"backend\": ", f);
        json_string(f, a->backend);
        /* the rest of the series' keys (one device: no sync, no shard), as
         * its rows give them, so that two verdicts apart only in these are
         * told apart */
        static const char *const rest[] = {"reduction", "recompute", "grad_dtype"};
        for (size_t k = 0; k < sizeof rest / sizeof *rest; k++) {
            fprintf(f, ", \"%s\": ", rest[k]);
            json_field(f, a, (int)(result_column_find(rest[k]) - result_columns));
        }
        fprintf(f, ", \"rows\": [%zu, %zu, %zu], \"splits\": [", v[i].row[0], v[i].row[1],
                v[i].row[2]);
        for (int k = 0; k < 3; k++) {
            fputs(k ? ", " : "", f);
            json_string(f, rp_split(&in->rows[v[i].row[k]]).s);
        }
        fprintf(f, "], \"ran\": %s", v[i].ran ? "true" : "false");
        if (v[i].ran) {
            fputs(", ", f);
            json_comparison(f, "b_vs_a", &v[i].over_a[1]);
            fputs(", ", f);
            json_comparison(f, "c_vs_a", &v[i].over_a[2]);
            fputs(", ", f);
            json_comparison(f, "c_vs_b", &v[i].c_over_b);
        }
        fputs(", \"fastest\": ", f);
        if (v[i].fastest >= 0)
            json_string(f, abc_name(v[i].fastest));
        else
            fputs("null", f);
        /* its series' A/A check, so that a program reading the verdict
         * sees the bias the report and the console warn of */
        fprintf(f, ", \"aa_rule_held\": %s}", v[i].aa_held < 0 ? "null"
                                              : v[i].aa_held ? "true" : "false");
    }
    fputs(n ? "\n  ]" : "]", f);
}

/* "aa_checks": each config timed twice, arm 2 over arm 1 (report_aa.c),
 * and whether the rule held: never faster nor slower than itself (null
 * where there is no interval). */
static void json_aa(FILE *f, const report_input *in, const size_t (*pairs)[2], size_t n)
{
    fputs(",\n  \"aa_checks\": [", f);
    for (size_t i = 0; i < n; i++) {
        const csv_row *one = &in->rows[pairs[i][0]], *two = &in->rows[pairs[i][1]];
        paired_ratio p = row_ratio(one, two);
        paired_verdict v = paired_judge(&p, PAIRED_THRESHOLD);
        fprintf(f, "%s{\"rows\": [%zu, %zu], \"model\": ", i ? ",\n    " : "\n    ",
                pairs[i][0], pairs[i][1]);
        json_string(f, two->model);
        fprintf(f, ", \"effective_batch\": %lld, \"split\": ", (long long)two->effective_batch);
        json_string(f, rp_split(one).s);
        fputs(", ", f);
        json_comparison(f, "arm2_vs_arm1", &p);
        fprintf(f, ", \"rule_held\": %s, \"recheck\": ", v == PAIRED_UNKNOWN ? "null"
                                            : paired_not_separated(v) ? "true" : "false");
        /* the command the report's and the console's failed line give */
        if (aa_failed(one, two)) {
            char command[1400];
            aa_recheck_command(in->rows, in->t->rows, one, command, sizeof command);
            json_string(f, command);
        } else {
            fputs("null", f);
        }
        fputs("}", f);
    }
    fputs(n ? "\n  ]" : "]", f);
}

int report_json_write(FILE *f, void *ctx, char *why, size_t why_len)
{
    const report_input *in = ctx;
    const char *ref;
    dtype_pair *pairs = NULL;
    size_t ng = 0, nv = 0, naa = 0;
    report_group *g = report_groups(in->rows, in->t->rows, &ng);
    abc_verdict *v = NULL;
    size_t(*aa)[2] = malloc((in->t->rows ? in->t->rows : 1) * sizeof *aa);
    if (!g || !aa || dtype_pairs_of(in, &ref, &pairs) ||
        abc_verdicts(in, g, ng, rp_main_mode(in->t, in->rows, in->t->rows), &v, &nv)) {
        report_groups_free(g, ng);
        free(aa);
        free(pairs);
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    naa = aa_pairs(in, g, ng, aa);
    fputs("{\n  \"csv\": ", f);
    json_string(f, in->csv_path);
    fputs(",\n  \"meta\": {", f);
    for (size_t i = 0; i < in->t->meta_count; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_string(f, in->t->meta[i].key);
        fputs(": ", f);
        json_string(f, in->t->meta[i].value);
    }
    fputs(in->t->meta_count ? "\n  },\n  \"rows\": [" : "},\n  \"rows\": [", f);
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        fputs(i ? ",\n    {" : "\n    {", f);
        for (int c = 0; c < result_column_count; c++) {
            fputs(c ? ", " : "", f);
            json_string(f, result_columns[c].name);
            fputs(": ", f);
            json_field(f, r, c);
        }
        fputs(", \"vs_ref_verdict\": ", f);
        json_verdict(f, r);
        json_vs_dtype(f, ref, pairs ? &pairs[i] : NULL);
        fprintf(f, ", \"repeat\": %s}", r->repeat ? "true" : "false");
    }
    fputs(in->t->rows ? "\n  ]" : "]", f);
    json_verdicts(f, in, v, nv);
    json_aa(f, in, (const size_t(*)[2])aa, naa);
    fputs("\n}\n", f);
    report_groups_free(g, ng);
    free(v);
    free(aa);
    free(pairs);
    return 0;
}
