/* The memory-time frontier and plan --recommend's ranking (frontier.h,
 * recommend.h) on tests/fixtures/frontier.csv: the fastest split is over
 * the cap and the recommendation is the fastest under it; each faster one
 * left out is named with its bytes over (peak where measured, need
 * otherwise) or its status; an interval reaching past the 2% band is not
 * yet separated, one inside it the same within 2%, each tie named so;
 * the Pareto front; a file without the recompute and shard columns reads
 * as "none" for each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "csv_load.h"
#include "csv_read.h"
#include "frontier.h"
#include "recommend.h"

#define FIXTURE "tests/fixtures/frontier.csv"
#define CAP 96000000

static csv_table t;
static csv_row *rows;

/* The item of the set at micro-batch `micro` with recompute `rc`, shard
 * `sh` and reduction `red`, or NULL. */
static const frontier_item *find(const frontier_set *s, int micro, const char *rc,
                                 const char *sh, const char *red)
{
    for (size_t i = 0; i < s->n; i++) {
        const frontier_item *it = &s->items[i];
        const csv_row *r = &rows[it->row];
        if (r->micro_batch == micro && !strcmp(it->lever[LEVER_RECOMPUTE], rc) &&
            !strcmp(it->lever[LEVER_SHARD], sh) && !strcmp(r->reduction, red))
            return it;
    }
    return NULL;
}

static void test_ranking(void)
{
    frontier_set s;
    char why[300];
    frontier_query q = {.effective = 256, .devices = 1, .cap = CAP};
    CHECK(frontier_build(&t, rows, &q, &s, why, sizeof why) == 0);
    CHECK(s.n == 9 && s.other_effective == 2 && s.other_devices == 3);
    /* the fastest of all (256x1, 60 ms) needs 110 MB at its measured peak */
    const frontier_item *fastest = &s.items[0];
    CHECK(rows[fastest->row].micro_batch == 256 && !strcmp(fastest->lever[LEVER_RECOMPUTE], "none"));
    CHECK(fastest->verdict == FR_OVER_CAP && fastest->mem_measured &&
          fastest->over == 110000000 - CAP);
    /* the recommendation: the fastest clean, exact one within the cap */
    CHECK(s.best >= 0 && s.items[s.best].row == find(&s, 128, "gelu", "none", "sum")->row);
    /* 128x2 without recompute has no peak: its exact need is over by 3 MB */
    const frontier_item *need = find(&s, 128, "none", "none", "sum");
    CHECK(need && need->verdict == FR_OVER_CAP && !need->mem_measured &&
          need->over == 99000000 - CAP);
    /* flagged noisy: a candidate still, its flag shown beside it (it is slower) */
    CHECK(find(&s, 32, "none", "none", "sum")->verdict == FR_FITS);
    CHECK(find(&s, 64, "none", "none", "mean-of-means")->verdict == FR_INEXACT);
    CHECK(find(&s, 16, "none", "none", "sum")->verdict == FR_NOT_OK);
    /* 64x4 (63.2..64.5) overlaps the recommended 128x2 gelu (62..64) */
    const frontier_item *tie = find(&s, 64, "none", "none", "sum");
    CHECK(tie->verdict == FR_FITS && frontier_differ(rows, tie, &s.items[s.best]) == 0);
    CHECK(frontier_differ(rows, find(&s, 64, "block", "none", "sum"), &s.items[s.best]) == 1);
    /* the front: 256x1 (fastest), 128x2 none (less memory), 128x2 gelu,
     * 256x1 block, 64x4 block; 64x4 none is slower and larger than 128x2 gelu */
    CHECK(fastest->on_front && need->on_front && s.items[s.best].on_front);
    CHECK(find(&s, 256, "block", "none", "sum")->on_front);
    CHECK(find(&s, 64, "block", "none", "sum")->on_front);
    CHECK(!tie->on_front && !find(&s, 32, "none", "none", "sum")->on_front);
    char label[256];
    frontier_label(&s, rows, &s.items[s.best], label, sizeof label);
    CHECK(strstr(label, "128x2 fp32 recompute=gelu shard=none") == label);
    frontier_free(&s);
}

/* The shard lever at 2 devices: ZeRO-1 fits where the unsharded does not. */
static void test_shard(void)
{
    frontier_set s;
    char why[300];
    frontier_query q = {.effective = 256, .devices = 2, .cap = CAP};
    CHECK(frontier_build(&t, rows, &q, &s, why, sizeof why) == 0);
    CHECK(s.n == 3 && s.best == 1 && !strcmp(s.items[1].lever[LEVER_SHARD], "optimizer"));
    CHECK(s.items[0].verdict == FR_OVER_CAP && s.items[0].over == 100000000 - CAP);
    frontier_free(&s);
}

/* Runs recommend_print into a temporary file and returns its text. */
static int listing(const frontier_query *q, char *text, size_t len)
{
    FILE *f = tmpfile();
    recommend_request req = {.csv_path = FIXTURE, .q = *q};
    int rc = recommend_print(f, &t, rows, &req);
    rewind(f);
    size_t n = fread(text, 1, len - 1, f);
    text[n] = '\0';
    fclose(f);
    return rc;
}

static void test_listing(void)
{
    static char text[8192];
    frontier_query q = {.effective = 256, .devices = 1, .cap = CAP};
    CHECK(listing(&q, text, sizeof text) == 0);
    const char *first = strstr(text, "   1  128x2 fp32 recompute=gelu");
    CHECK(first && strstr(first, "recommended"));
    CHECK(strstr(text, "vs 1: 1.008x [0.988..1.040], not yet separated (from the two medians' "
                       "intervals, timed apart; threshold 2%); the ratio itself is within the "
                       "threshold") != NULL);
    /* B 1.6-8% slower by its interval is not the same as the pick */
    CHECK(strstr(text, "vs 1: 1.048x [1.016..1.081], not yet separated (from the two medians' "
                       "intervals, timed apart; threshold 2%)") != NULL);
    CHECK(strstr(text, "pick: 128x2 fp32 recompute=gelu shard=none reduction=sum, not separated "
                       "by the rule from 2: 64x4 fp32 recompute=none shard=none reduction=sum "
                       "(not yet separated), 256x1 fp32 recompute=block shard=none "
                       "reduction=sum (not yet separated); of them 256x1"));
    CHECK(!strstr(text, "indistinguishable") && !strstr(text, "the same"));
    CHECK(strstr(text, "over the cap by 14000000 bytes (measured peak 110000000 bytes)"));
    CHECK(strstr(text, "over the cap by 3000000 bytes (exact need 99000000 bytes)"));
    /* a flagged row is ranked, its flag beside it */
    CHECK(strstr(text, "32x8 fp32 recompute=none shard=none") && strstr(text, " noisy "));
    CHECK(strstr(text, "1 did not run (status not ok)") != NULL);
    /* the faster ones left out come after the ranking, never in it */
    CHECK(strstr(text, "left out, ranked before the pick by their medians:") > first);
    /* no cap fits: exit 1; a cap below the least need: exit 2 */
    q.cap = 69000000;
    CHECK(listing(&q, text, sizeof text) == 1 && strstr(text, "none reaches"));
    /* the flagged row is left out for its memory, as any other */
    CHECK(strstr(text, "over the cap by 22000000 bytes (measured peak 91000000 bytes)"));
    q.cap = 1000000;
    CHECK(listing(&q, text, sizeof text) == 2);

    /* narrow intervals for the pick and 64x4: the same within 2%, a tie
     * the rule resolved, named apart from 256x1 block's, widened to stay
     * undecided */
    frontier_set s;
    char why[300];
    q.cap = CAP;
    CHECK(frontier_build(&t, rows, &q, &s, why, sizeof why) == 0);
    csv_row *best = &rows[s.items[s.best].row];
    csv_row *same = &rows[find(&s, 64, "none", "none", "sum")->row];
    csv_row *wide = &rows[find(&s, 256, "block", "none", "sum")->row];
    csv_row keep[3] = {*best, *same, *wide};
    frontier_free(&s);
    best->step_ms_ci_lo = 62.9, best->step_ms_ci_hi = 63.1;
    same->step_ms_ci_lo = 63.4, same->step_ms_ci_hi = 63.6;
    wide->step_ms_ci_lo = 60, wide->step_ms_ci_hi = 72;
    CHECK(listing(&q, text, sizeof text) == 0);
    CHECK(strstr(text, "vs 1: 1.008x [1.005..1.011], the same within 2% (from the two medians' "
                       "intervals, timed apart)") != NULL);
    CHECK(strstr(text, "not separated by the rule from 2: 64x4 fp32 recompute=none shard=none "
                       "reduction=sum (the same within 2%), 256x1 fp32 recompute=block "
                       "shard=none reduction=sum (not yet separated)"));
    *best = keep[0], *same = keep[1], *wide = keep[2];
}

/* A file from before the levers: recompute and shard read as none. */
static void test_old_file(void)
{
    csv_table old;
    csv_row *old_rows;
    char why[300];
    CHECK(csv_load("tests/fixtures/abc.csv", csv_required_columns, &old, &old_rows, why,
                   sizeof why) == 0);
    frontier_set s;
    frontier_query q = {.effective = 64, .devices = 1, .cap = -1};
    CHECK(frontier_build(&old, old_rows, &q, &s, why, sizeof why) == 0);
    CHECK(s.n > 0 && !strcmp(s.items[0].lever[LEVER_RECOMPUTE], "none") &&
          !strcmp(s.items[0].lever[LEVER_SHARD], "none"));
    frontier_free(&s);
    free(old_rows);
    csv_free(&old);
}

/* `text` written to a temporary CSV (its name into path) and loaded into
 * *ct and *rows: 0, or -1 (a failed CHECK said why). */
static int load_text(const char *text, char *path, csv_table *ct, csv_row **cr)
{
    char why[300];
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    int rc = csv_load(path, csv_required_columns, ct, cr, why, sizeof why);
    CHECK(rc == 0);
    return rc;
}

/* A custom shape's name is stored with ';' for its commas: --model's own
 * spelling still finds its rows. */
static void test_custom_model(void)
{
    char path[] = "/tmp/accubench-frontier-XXXXXX", why[300];
    csv_table ct;
    csv_row *cr;
    if (load_text(
            "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
            "devices,step_ms_median,mem_need_bytes,status\n"
            "cpu,x,gpt:d=8;layers=1,fp32,async,sum,4,4,1,1,2.5,1000,ok\n"
            "cpu,x,S,fp32,async,sum,4,4,1,1,1.5,1000,ok\n",
            path, &ct, &cr))
        return;
    frontier_set s;
    frontier_query q = {.effective = 4, .devices = 1, .cap = 2000, .model = "gpt:d=8,layers=1"};
    CHECK(frontier_build(&ct, cr, &q, &s, why, sizeof why) == 0);
    CHECK(s.n == 1 && s.other_model == 1 && s.best == 0);
    frontier_free(&s);
    /* without --model, two models at one E are refused, both named */
    q.model = NULL;
    CHECK(frontier_build(&ct, cr, &q, &s, why, sizeof why) == -1 &&
          strstr(why, "name one with --model"));
    free(cr);
    csv_free(&ct);
    unlink(path);
}

/* An A/A check's second arm is the same config timed again: ranked once,
 * from its first arm, and counted among the rows left aside. */
static void test_second_arm(void)
{
    char path[] = "/tmp/accubench-frontier-XXXXXX", why[300];
    csv_table ct;
    csv_row *cr;
    if (load_text(
            "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
            "arm,devices,step_ms_median,mem_need_bytes,status\n"
            "cpu,x,S,fp32,async,sum,64,64,1,1,1,40,3000,ok\n"
            "cpu,x,S,fp32,async,sum,64,16,4,1,1,50,2000,ok\n"
            "cpu,x,S,fp32,async,sum,64,16,4,2,1,49,2000,ok\n",
            path, &ct, &cr))
        return;
    frontier_set s;
    frontier_query q = {.effective = 64, .devices = 1, .cap = 5000};
    CHECK(frontier_build(&ct, cr, &q, &s, why, sizeof why) == 0);
    CHECK(s.n == 2 && s.second_arm == 1);
    for (size_t i = 0; i < s.n; i++)
        CHECK(cr[s.items[i].row].arm == 1);
    frontier_free(&s);
    free(cr);
    csv_free(&ct);
    unlink(path);
}

/* Two splits timed in one comparison whose medians and rounds disagree:
 * 64x1's median is the least, but round by round 16x4 took 0.8 of its
 * time. The verdict follows the rounds, and so does the pick. */
static void test_rule_over_medians(void)
{
    char path[] = "/tmp/accubench-frontier-XXXXXX", why[300];
    csv_table ct;
    csv_row *cr;
    if (load_text(
            "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
            "devices,step_ms_median,mem_need_bytes,status,comparison,rounds,round_ms\n"
            "cpu,x,S,fp32,async,sum,64,64,1,1,10,3000,ok,c1,5,12.5 12.5 12.4 12.6 12.5\n"
            "cpu,x,S,fp32,async,sum,64,16,4,1,11,2000,ok,c1,5,10 10 10.1 9.9 10\n"
            "cpu,x,S,fp32,async,sum,64,8,8,1,30,1000,ok,c1,5,30 30 30 30 30\n",
            path, &ct, &cr))
        return;
    frontier_set s;
    frontier_query q = {.effective = 64, .devices = 1, .cap = 5000};
    CHECK(frontier_build(&ct, cr, &q, &s, why, sizeof why) == 0);
    CHECK(s.n == 3 && s.best == 0 && cr[s.items[0].row].micro_batch == 16);
    CHECK(cr[s.items[1].row].micro_batch == 64 && cr[s.items[2].row].micro_batch == 8);
    frontier_free(&s);
    /* the pick says why it ranks first against its median */
    static char text[4096];
    FILE *out = tmpfile();
    recommend_request req = {.csv_path = path, .q = q};
    CHECK(out && recommend_print(out, &ct, cr, &req) == 0);
    if (out) {
        rewind(out);
        text[fread(text, 1, sizeof text - 1, out)] = '\0';
        fclose(out);
    }
    CHECK(strstr(text, "pick: 16x4 fp32 recompute=none shard=none; it clears the next, 64x1 "));
    CHECK(strstr(text, "the medians' own ratio, 0.909x, lies outside it: the rounds disagreed"));
    free(cr);
    csv_free(&ct);
    unlink(path);
}

/* A pick tied with many candidates names every one of them: a measuring
 * run's sweep (every split, recompute value and dtype) ties ten and more,
 * and the line once cut its list short mid-name under the count. */
static void test_many_ties(void)
{
    char path[] = "/tmp/accubench-frontier-XXXXXX", why[300];
    static char csv[4096], text[16384];
    size_t used = (size_t)snprintf(csv, sizeof csv,
                                   "backend,device,model,dtype,recompute,mode,reduction,"
                                   "effective_batch,micro_batch,accum_steps,devices,"
                                   "step_ms_median,step_ms_ci_lo,step_ms_ci_hi,"
                                   "mem_need_bytes,status\n");
    static const char *const rc[] = {"none", "gelu", "block"};
    for (int m = 64, i = 0; m >= 8; m /= 2)
        for (int r = 0; r < 3; r++, i++)
            used += (size_t)snprintf(csv + used, sizeof csv - used,
                                     "cpu,x,S,fp32,%s,async,sum,64,%d,%d,1,%.2f,9,12,1000,ok\n",
                                     rc[r], m, 64 / m, 10 + 0.01 * i);
    csv_table ct;
    csv_row *cr;
    if (load_text(csv, path, &ct, &cr))
        return;
    frontier_set s;
    frontier_query q = {.effective = 64, .devices = 1, .cap = 5000};
    CHECK(frontier_build(&ct, cr, &q, &s, why, sizeof why) == 0);
    CHECK(s.n == 12 && s.best == 0);
    frontier_free(&s);
    FILE *out = tmpfile();
    recommend_request req = {.csv_path = path, .q = q};
    CHECK(out && recommend_print(out, &ct, cr, &req) == 0);
    if (out) {
        rewind(out);
        text[fread(text, 1, sizeof text - 1, out)] = '\0';
        fclose(out);
    }
    const char *line = strstr(text, "pick: 64x1 fp32 recompute=none shard=none, not separated "
                                    "by the rule from 11: ");
    CHECK(line != NULL);
    /* the last tie (8x8 with block recompute, slowest) is named whole */
    const char *end = line ? strchr(line, '\n') : NULL;
    const char *last = line ? strstr(line, "8x8 fp32 recompute=block shard=none (") : NULL;
    CHECK(last && end && last < end);
    free(cr);
    csv_free(&ct);
    unlink(path);
}

int main(void)
{
    char why[300];
    CHECK(csv_load(FIXTURE, csv_required_columns, &t, &rows, why, sizeof why) == 0);
    test_ranking();
    test_shard();
    test_listing();
    test_old_file();
    test_custom_model();
    test_second_arm();
    test_rule_over_medians();
    test_many_ties();
    free(rows);
    csv_free(&t);
    return check_finish("test_frontier");
}
