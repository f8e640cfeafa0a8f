/* Timing statistics, the CSV writer and the console table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "test_files.h"
#include "console_table.h"
#include "csv_writer.h"
#include "stats.h"
#include "table.h"

static void test_stats(void)
{
    double v[] = {5, 1, 4, 2, 3}; /* unsorted on purpose */
    timing_stats s;
    CHECK(timing_stats_of(v, 5, &s) == 0);
    CHECK(s.samples == 5 && s.median == 3 && s.mean == 3);
    CHECK_NEAR(s.p10, 1.4, 1e-12);
    CHECK_NEAR(s.p90, 4.6, 1e-12);
    /* deviations from 3: 2 1 1 2 0 -> MAD 1 */
    CHECK_NEAR(s.noise_pct, 100 * 1.4826 / 3, 1e-9);
    double outlier[] = {10, 10, 10, 10, 10, 10, 10, 10, 11, 500};
    CHECK(timing_stats_of(outlier, 10, &s) == 0 && s.noise_pct == 0 && s.median == 10);
    CHECK(v[0] == 5); /* input untouched */
    double one = 7;
    /* one sample has no spread: its noise is unmeasured, not 0% */
    CHECK(timing_stats_of(&one, 1, &s) == 0 && s.median == 7 && isnan(s.noise_pct));
    CHECK(timing_stats_of(v, 0, &s) == -1);
    double even[] = {1, 2, 3, 4};
    CHECK(timing_stats_of(even, 4, &s) == 0 && s.median == 2.5);
}

static void test_csv(void)
{
    char dir[] = "/tmp/accubench-csv-XXXXXX", path[300], why[400];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/out.csv", dir);
    csv_writer w;
    csv_writer_init(&w, path);
    csv_writer_meta(&w, "device", "a device, with a comma");
    csv_writer_meta(&w, "seed", "%d", 1);
    csv_writer_meta(&w, "seed", "%d", 2); /* replaced, not repeated */
    csv_writer_meta(&w, "unfinished", "yes");
    csv_writer_meta(&w, "last", "kept");
    csv_writer_meta_remove(&w, "unfinished"); /* taken out, the lines after it kept */
    csv_writer_meta_remove(&w, "absent");
    /* a value as long as the run's column lists is kept whole; one past
     * the room is cut visibly */
    char list[700], huge[CSV_META_VALUE_LEN + 100];
    memset(list, 'c', sizeof list - 1);
    list[sizeof list - 1] = '\0';
    memset(huge, 'h', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    csv_writer_meta(&w, "list", "%s", list);
    csv_writer_meta(&w, "huge", "%s", huge);
    CHECK(strlen(w.values[w.meta_count - 2]) == sizeof list - 1);
    CHECK(strlen(w.values[w.meta_count - 1]) == CSV_META_VALUE_LEN - 1);
    CHECK(strstr(w.values[w.meta_count - 1], "hhh...") != NULL);
    csv_writer_meta_remove(&w, "list");
    csv_writer_meta_remove(&w, "huge");
    CHECK(csv_writer_flush(&w, why, sizeof why) == 0);
    result_row r;
    result_row_clear(&r);
    snprintf(r.model, sizeof r.model, "S");
    snprintf(r.note, sizeof r.note, "a note, with commas, and\nnewline");
    r.micro_batch = 8;
    r.step_ms_median = 1.5;
    CHECK(csv_writer_append(&w, &r, why, sizeof why) == 0);
    char *text = test_slurp(path);
    CHECK(text && strstr(text, "# seed: 2\n") && !strstr(text, "# seed: 1\n"));
    CHECK(text && strstr(text, "# seed: 2\n# last: kept\n") && !strstr(text, "unfinished"));
    CHECK(strstr(text, "\nbackend,device,model,params,") != NULL);
    const char *row = strstr(text, "\n,,S,");
    CHECK(row != NULL);
    if (row) {
        const char *line_end = strchr(row + 1, '\n');
        CHECK(line_end && line_end[1] == '\0'); /* one row, one line */
        CHECK(strstr(row, ",1.5,") != NULL && strstr(row, ",8,") != NULL);
        CHECK(strstr(row, "a note; with commas; and newline") != NULL);
    }
    /* every line of the table has as many fields as the header */
    int fields = 0, lines = 0;
    for (const char *p = strstr(text, "\nbackend,") + 1; *p; p = strchr(p, '\n') + 1) {
        int f = 1;
        for (const char *q = p; *q && *q != '\n'; q++)
            f += *q == ',';
        CHECK(lines == 0 || f == fields);
        fields = f;
        lines++;
    }
    CHECK(lines == 2);
    /* no temporary left behind */
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CHECK(access(tmp, F_OK) != 0);
    /* an unwritable place fails with a reason, and the old file stays */
    csv_writer bad;
    csv_writer_init(&bad, "/nonexistent-dir/x.csv");
    CHECK(csv_writer_flush(&bad, why, sizeof why) == -1 && strstr(why, "/nonexistent-dir"));
    csv_writer_free(&bad);
    csv_writer_free(&w);
    unlink(path);
    rmdir(dir);
}

/* The console table, column by column as RESULT_COLUMNS names them: a row
 * that ran, one with a ragged split and a note, and rows that did not run
 * (their config columns, the step "-", the status and why). */
static void test_console_table(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    result_row r;
    result_row_clear(&r);
    strcpy(r.model, "S");
    strcpy(r.dtype, "fp32");
    strcpy(r.mode, "async");
    strcpy(r.reduction, "sum");
    r.effective_batch = 64, r.micro_batch = 16, r.accum_steps = 4, r.last_micro_batch = 16;
    r.devices = 2;
    strcpy(r.sync, "window");
    strcpy(r.status, "ok");
    r.step_ms_median = 12.3456, r.step_ms_p10 = 12.0, r.step_ms_p90 = 13.25;
    r.step_noise_pct = 0.73, r.samples_per_s = 5184.21, r.mfu_pct = 12.34;
    r.grad_rel_err = 1.5e-7;
    console_table_header(f, CONSOLE_MODEL_WIDTH);
    console_table_row(f, &r, "");
    r.micro_batch = 24, r.accum_steps = 3;
    strcpy(r.mode, "alloc-async");
    strcpy(r.note, "noise 3.1% over the 2.0% target");
    console_table_row(f, &r, "");
    strcpy(r.status, "oom");
    strcpy(r.note, "needs 5 bytes");
    console_table_row(f, &r, "");
    strcpy(r.status, "error");
    r.note[0] = '\0';
    console_table_row(f, &r, "");
    /* a row set apart by a lever the columns do not show: the note says it */
    strcpy(r.status, "ok");
    console_table_row(f, &r, "recompute block");
    strcpy(r.note, "noisy");
    console_table_row(f, &r, "recompute block grad bf16");
    fclose(f);
    const char *want =
        "model      mode        reduction         E dev sync              split step ms noise "
        "   throughput  mfu% grad err status\n"
        "S          async       sum              64   2 window             16x4   12.35  0.7% "
        "  5.2k samp/s  12.3  1.5e-07 ok\n"
        "S          alloc-async sum              64   2 window    K=3: 24+24+16   12.35  0.7% "
        "  5.2k samp/s  12.3  1.5e-07 ok:\n"
        "    noise 3.1% over the 2.0% target\n"
        "S          alloc-async sum              64   2 window    K=3: 24+24+16       - "
        "oom: needs 5 bytes\n"
        "S          alloc-async sum              64   2 window    K=3: 24+24+16       - "
        "error\n"
        "S          alloc-async sum              64   2 window    K=3: 24+24+16   12.35  0.7% "
        "  5.2k samp/s  12.3  1.5e-07 ok:\n"
        "    recompute block\n"
        "S          alloc-async sum              64   2 window    K=3: 24+24+16   12.35  0.7% "
        "  5.2k samp/s  12.3  1.5e-07 ok:\n"
        "    recompute block grad bf16; noisy\n";
    CHECK(text && strcmp(text, want) == 0);
    if (text && strcmp(text, want) != 0)
        fprintf(stderr, "  got:\n%s  want:\n%s", text, want);
    free(text);
}

/* The longest realistic rows stay within CONSOLE_WIDTH: a custom GPT (its
 * name in a legend line, whole) on 16 devices with overlapped all-reduces,
 * the longest mode and reduction names, a ragged split, a slow step, and a
 * note too long for the line (it continues below, broken at spaces). */
static void test_console_width(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    const char *gpt = "gpt:d=128,layers=4,heads=4,seq=64,vocab=2048";
    result_row r;
    result_row_clear(&r);
    strcpy(r.model, gpt);
    strcpy(r.mode, "alloc-async");
    strcpy(r.reduction, "mean-of-means");
    strcpy(r.status, "ok");
    strcpy(r.sync, "overlap");
    r.effective_batch = 40960, r.micro_batch = 24, r.accum_steps = 107, r.last_micro_batch = 16;
    r.devices = 16;
    r.step_ms_median = 123456.789, r.step_noise_pct = 100.0, r.samples_per_s = 331.8;
    r.tokens_per_s = 21234567.0, r.mfu_pct = 101.2, r.grad_rel_err = 0.333;
    console_table_header(f, CONSOLE_MODEL_WIDTH);
    console_table_row(f, &r, "");
    console_table_row(f, &r, ""); /* the legend once */
    strcpy(r.model, "mlp:hidden=4096,layers=16,classes=1000");
    strcpy(r.note, "stopped when the 2s budget ran out: noise 31.2% over the 2% target after "
                   "3 samples; trace pass lost 12 activity records; model mlp reports no "
                   "gradient ranges");
    r.tokens_per_s = NAN;
    console_table_row(f, &r, "");
    strcpy(r.status, "skipped");
    strcpy(r.note, "one step would take about 1234.5 s (107 x a 11537 ms pass); over "
                   "--max-step-s 10");
    console_table_row(f, &r, "");
    fclose(f);
    int lines = 0, legends = 0, longest = 0;
    for (const char *p = text; p && *p; lines++) {
        size_t n = strcspn(p, "\n");
        longest = (int)n > longest ? (int)n : longest;
        legends += !strncmp(p, "gpt#1 = ", 8) || !strncmp(p, "mlp#1 = ", 8);
        p += n + (p[n] == '\n');
    }
    CHECK(longest <= CONSOLE_WIDTH);
    if (longest > CONSOLE_WIDTH)
        fprintf(stderr, "  a line of %d characters:\n%s", longest, text);
    CHECK(legends == 2);
    CHECK(text && strstr(text, gpt) && strstr(text, "gpt#1 "));
    CHECK(text && strstr(text, "21.2M tok/s") && strstr(text, "331.8 samp/s"));
    CHECK(text && strstr(text, "K=107: 24x106+16"));
    CHECK(text && strstr(text, "\n    records; model mlp reports no gradient ranges\n"));
    free(text);
}

/* A split wider than its column (a ragged A/A arm, "K=5: 3x4+1 (arm 2)")
 * takes the room an empty sync left, so the status stays under its
 * header; with no room before it (a full sync), the line shifts, never
 * overwrites. */
static void test_console_wide_split(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    result_row r;
    result_row_clear(&r);
    strcpy(r.model, "tiny");
    strcpy(r.mode, "async");
    strcpy(r.reduction, "sum");
    strcpy(r.status, "ok");
    r.effective_batch = 13, r.micro_batch = 3, r.accum_steps = 5, r.last_micro_batch = 1;
    r.arm = 2, r.devices = 1;
    r.step_ms_median = 0.082, r.step_noise_pct = 1.2, r.samples_per_s = 158400;
    r.mfu_pct = 19.3, r.grad_rel_err = 5.3e-8;
    console_table_header(f, CONSOLE_MODEL_WIDTH);
    console_table_row(f, &r, "");
    strcpy(r.sync, "overlap");
    console_table_row(f, &r, "");
    fclose(f);
    const char *header = text, *row = text ? strchr(text, '\n') + 1 : NULL;
    const char *full = row ? strchr(row, '\n') + 1 : NULL;
    CHECK(row && strstr(row, "K=5: 3x4+1 (arm 2)"));
    /* the step time as the run's summary prints it: four significant
     * digits, zeros kept ("0.08200", never "0.082" beside "0.08200") */
    CHECK(row && strstr(row, " 0.08200  1.2% "));
    int status_at = (int)(strstr(header, "status") - header);
    CHECK(row && (int)(strstr(row, " ok") + 1 - row) == status_at);
    CHECK(full && strstr(full, "overlap K=5: 3x4+1 (arm 2)"));
    if (row && (int)(strstr(row, " ok") + 1 - row) != status_at)
        fprintf(stderr, "  the status is not under its header:\n%s", text);
    free(text);
}

/* A preset longer than the least model column (llama3.2-1b) is shown as
 * it is, its row in line with the header; a custom shape past that width
 * still goes to the legend. (It was "llama3#1" with a legend line, as a
 * shape is.) */
static void test_console_preset_whole(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    int width = CONSOLE_MODEL_WIDTH;
    const char *shape = "llama:d=64,layers=2,heads=4,kv_heads=1,ffn=176,seq=32,vocab=512,tied=1";
    console_model_width("tiny", &width);
    console_model_width("llama3.2-1b", &width);
    console_model_width(shape, &width);
    CHECK(width == 11);
    result_row r;
    result_row_clear(&r);
    strcpy(r.model, "llama3.2-1b");
    strcpy(r.mode, "async");
    strcpy(r.reduction, "sum");
    strcpy(r.status, "ok");
    r.effective_batch = 8, r.micro_batch = 8, r.accum_steps = 1, r.devices = 1;
    r.step_ms_median = 12.5, r.step_noise_pct = 1.2, r.samples_per_s = 640;
    console_table_header(f, width);
    console_table_row(f, &r, "");
    strcpy(r.model, shape);
    console_table_row(f, &r, "");
    fclose(f);
    const char *row = text ? strchr(text, '\n') + 1 : NULL;
    CHECK(row && !strncmp(row, "llama3.2-1b async ", 18));
    CHECK(text && !strstr(text, "llama3#") && strstr(text, "\nllama#1 = llama:d=64,"));
    int status_at = text ? (int)(strstr(text, "status") - text) : -1;
    CHECK(row && (int)(strstr(row, " ok") + 1 - row) == status_at);
    free(text);
}

/* Remarks past the note's size: the note ends in "...", never in a remark
 * that reads whole but was cut. */
static void test_row_note(void)
{
    result_row r;
    result_row_clear(&r);
    row_note(&r, "first");
    row_note(&r, "second %d", 2);
    CHECK(strcmp(r.note, "first; second 2") == 0);
    for (int i = 0; i < 100; i++)
        row_note(&r, "remark number %d of many", i);
    size_t n = strlen(r.note);
    CHECK(n == sizeof r.note - 1 && strcmp(r.note + n - 3, "...") == 0);
    row_note(&r, "one more, left out");
    CHECK(strlen(r.note) == n && strcmp(r.note + n - 3, "...") == 0);
    result_row_clear(&r);
    row_note(&r, "fits");
    CHECK(strcmp(r.note, "fits") == 0);
}

/* A figure past a double (inf from an edited row's product) prints as
 * unmeasured, never "inf" or "+inf%" in a table. */
static void test_figures_past_a_double(void)
{
    char buf[32];
    CHECK(!strcmp(fmt_sig(buf, sizeof buf, INFINITY, 4), "-"));
    CHECK(!strcmp(fmt_sig(buf, sizeof buf, -INFINITY, 4), "-"));
    CHECK(!strcmp(fmt_pct(buf, sizeof buf, INFINITY), "-"));
    CHECK(!strcmp(fmt_pct(buf, sizeof buf, NAN), "-"));
    CHECK(!strcmp(fmt_sig(buf, sizeof buf, 1.5e300, 4), "1.500e+300"));
}

int main(void)
{
    test_figures_past_a_double();
    test_row_note();
    test_stats();
    test_csv();
    test_console_table();
    test_console_width();
    test_console_wide_split();
    test_console_preset_whole();
    return check_finish("test_results");
}
