/* RUN.json, the record beside the report: every column typed (numbers as
 * numbers, text as strings, null where the CSV left a field empty), the
 * metadata as an object, the rule's verdict of each row's paired ratio,
 * and text that is not valid JSON as it stands (quotes, backslashes,
 * control characters, bytes that are not UTF-8) written so that it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-json-XXXXXX";

#define HEADER                                                                            \
    "# device: a \"quoted\" back\\slash\tand tab \xff byte\n"                              \
    "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"  \
    "arm,status,step_ms_median,pass_ms,samples,mfu_pct,vs_ref,vs_ref_lo,vs_ref_hi,sync\n"

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *md = test_report_rows(
        tmpdir, "run", HEADER,
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,50,,1,1,1,\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50.5,12,50,61.25,1.25,1.2,1.3,\n"
        "cpu,x,S,fp32,async,sum,64,8,8,1,ok,52,6.5,50,60,1.3,0.99,1.7,\n");
    CHECK(md != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/run.json", tmpdir);
    const char *json = test_slurp(path);
    CHECK(json != NULL);
    if (json) {
        CHECK(strstr(json, "\"device\": \"a \\\"quoted\\\" back\\\\slash\\u0009and tab "
                           "\\ufffd byte\""));
        CHECK(strstr(json, "\"micro_batch\": 16, \"arm\": 1, \"accum_steps\": 4, "));
        CHECK(strstr(json, "\"step_ms_median\": 50.5, "));
        CHECK(strstr(json, "\"mfu_pct\": 61.25, "));
        CHECK(strstr(json, "\"mfu_pct\": null, ")); /* the first row left it empty */
        CHECK(strstr(json, "\"sync\": null, "));
        CHECK(strstr(json, "\"vs_ref_verdict\": \"slower\"}"));
        CHECK(strstr(json, "\"vs_ref_verdict\": \"not yet separated\"}"));
        CHECK(strstr(json, "\"vs_ref_verdict\": null}")); /* the reference */
        CHECK(strstr(json, "\"grad_rel_err\": null, ")); /* a column the file lacks */
        CHECK(!strstr(json, "nan") && !strstr(json, "inf"));
    }
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_json");
}
