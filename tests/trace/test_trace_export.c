/* The Chrome trace export: the file parses as JSON (a small parser below),
 * every interval is a complete X event with ts, dur, pid, tid, name and cat,
 * flows pair up from each launch to its kernel, names are escaped, only the
 * chosen step is written, and no .tmp file is left behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "trace_export.h"
#include "trace_records.h"

/* ------------------------------------------------------------ a JSON parser */

typedef enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype type;
    double num;
    char *str;           /* J_STR */
    size_t n;            /* J_ARR / J_OBJ */
    char **keys;         /* J_OBJ */
    struct jval **items; /* J_ARR / J_OBJ */
} jval;

typedef struct jparser {
    const char *p;
    int ok;
} jparser;

static void jfree(jval *v)
{
    if (!v)
        return;
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        if (v->keys)
            free(v->keys[i]);
        jfree(v->items[i]);
    }
    free(v->keys);
    free(v->items);
    free(v);
}

static void skip_ws(jparser *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')
        j->p++;
}

static char *parse_string(jparser *j)
{
    if (*j->p != '"') {
        j->ok = 0;
        return NULL;
    }
    j->p++;
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    while (*j->p && *j->p != '"') {
        char c = *j->p++;
        if ((unsigned char)c < 0x20) {
            j->ok = 0; /* raw control characters are not JSON */
            break;
        }
        if (c == '\\') {
            char e = *j->p++;
            switch (e) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned code = 0;
                if (sscanf(j->p, "%4x", &code) != 1)
                    j->ok = 0;
                j->p += 4;
                c = (char)code; /* the test only escapes ASCII */
                break;
            }
            default: j->ok = 0;
            }
        }
        if (len + 2 > cap)
            s = realloc(s, cap *= 2);
        s[len++] = c;
    }
    s[len] = '\0';
    if (*j->p != '"')
        j->ok = 0;
    else
        j->p++;
    return s;
}

static jval *parse_value(jparser *j);

static void push(jval *v, char *key, jval *item)
{
    v->items = realloc(v->items, (v->n + 1) * sizeof *v->items);
    if (v->type == J_OBJ)
        v->keys = realloc(v->keys, (v->n + 1) * sizeof *v->keys);
    if (v->keys)
        v->keys[v->n] = key;
    v->items[v->n++] = item;
}

static jval *parse_value(jparser *j)
{
    skip_ws(j);
    jval *v = calloc(1, sizeof *v);
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{' ? '}' : ']';
        v->type = *j->p == '{' ? J_OBJ : J_ARR;
        j->p++;
        skip_ws(j);
        if (*j->p == close) {
            j->p++;
            return v;
        }
        while (j->ok) {
            char *key = NULL;
            if (v->type == J_OBJ) {
                skip_ws(j);
                key = parse_string(j);
                skip_ws(j);
                if (*j->p++ != ':')
                    j->ok = 0;
            }
            push(v, key, parse_value(j));
            skip_ws(j);
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p == close)
                j->p++;
            else
                j->ok = 0;
            break;
        }
    } else if (*j->p == '"') {
        v->type = J_STR;
        v->str = parse_string(j);
    } else if (strncmp(j->p, "true", 4) == 0 || strncmp(j->p, "false", 5) == 0) {
        v->type = J_BOOL;
        v->num = *j->p == 't';
        j->p += *j->p == 't' ? 4 : 5;
    } else if (strncmp(j->p, "null", 4) == 0) {
        j->p += 4;
    } else {
        char *end;
        v->type = J_NUM;
        v->num = strtod(j->p, &end);
        if (end == j->p)
            j->ok = 0;
        j->p = end;
    }
    return v;
}

static const jval *get(const jval *o, const char *key)
{
    if (!o || o->type != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return o->items[i];
    return NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    size_t got = fread(s, 1, (size_t)len, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

static jval *load(const char *path)
{
    char *text = slurp(path);
    if (!text)
        return NULL;
    jparser j = {text, 1};
    jval *v = parse_value(&j);
    skip_ws(&j);
    int ok = j.ok && *j.p == '\0';
    free(text);
    if (!ok) {
        jfree(v);
        return NULL;
    }
    return v;
}

/* ------------------------------------------------------------ the tests */



static const char *odd_name = "void k<\"q\">(a\\b)\n\x01";

/* Two GPU steps; step 1 has 2 ranges, 2 launches, a runtime call, a sync,
 * 2 kernels (one correlated to each launch) and a memset from the call. */
static void test_gpu(const char *dir)
{
    trace_record r[16];
    size_t n = 0;
    r[n++] = rec(TRACE_RANGE, "step", 1, 2, 1, 0, 0);
    r[n++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 1.1, 1.2, 1, 1, -1);
    r[n++] = rec(TRACE_KERNEL, "step0_kernel", 1.3, 1.4, 7, 1, -1);
    r[n++] = rec(TRACE_RANGE, "step", 10, 60, 1, 0, 1);
    r[n++] = rec(TRACE_RANGE, "forward", 11, 30, 1, 0, 1);
    r[n++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 12, 14, 1, 11, -1);
    r[n++] = rec(TRACE_LAUNCH, "cuLaunchKernel", 15, 17, 1, 12, -1);
    r[n++] = rec(TRACE_RUNTIME, "cudaMemsetAsync", 18, 19, 1, 13, -1);
    r[n++] = rec(TRACE_SYNC, "cudaDeviceSynchronize", 20, 70, 1, 0, -1);
    r[n++] = rec(TRACE_KERNEL, odd_name, 20, 40, 7, 11, -1);
    r[n++] = rec(TRACE_KERNEL, "gemm", 40, 50, 8, 12, -1);
    r[n++] = rec(TRACE_MEMSET, "memset", 50, 51, 7, 13, -1);

    char path[512], tmp[520], why[256] = "";
    snprintf(path, sizeof path, "%s/gpu.json", dir);
    CHECK(trace_export_chrome(path, r, n, 1, "cfg \"A\"", why, sizeof why) == 0);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(access(tmp, F_OK) != 0);
    jval *doc = load(path);
    CHECK(doc != NULL);
    if (!doc) {
        fprintf(stderr, "%s does not parse\n", path);
        return;
    }
    const jval *meta = get(doc, "otherData");
    CHECK(get(meta, "config") && strcmp(get(meta, "config")->str, "cfg \"A\"") == 0);
    const jval *ev = get(doc, "traceEvents");
    CHECK(ev && ev->type == J_ARR);

    size_t x = 0, s_count = 0, f_count = 0, m = 0;
    double flow_s[16] = {0}, flow_f[16] = {0};
    int ranges = 0, kernels = 0, odd_seen = 0, min_ts_zero = 0;
    for (size_t i = 0; ev && i < ev->n; i++) {
        const jval *e = ev->items[i];
        const jval *ph = get(e, "ph");
        CHECK(ph && ph->type == J_STR);
        if (!ph)
            continue;
        if (strcmp(ph->str, "M") == 0) {
            m++;
            continue;
        }
        const jval *ts = get(e, "ts"), *pid = get(e, "pid"), *tid = get(e, "tid");
        const jval *name = get(e, "name"), *cat = get(e, "cat");
        CHECK(ts && ts->type == J_NUM && pid && pid->type == J_NUM && tid &&
              tid->type == J_NUM && name && name->type == J_STR && cat &&
              cat->type == J_STR);
        if (!ts || !name || !cat || !pid)
            continue;
        if (strcmp(ph->str, "X") == 0) {
            x++;
            const jval *dur = get(e, "dur");
            CHECK(dur && dur->type == J_NUM && dur->num >= 0);
            CHECK(strcmp(name->str, "step0_kernel") != 0); /* step 0 left out */
            ranges += strcmp(cat->str, "range") == 0;
            if (strcmp(cat->str, "kernel") == 0) {
                kernels++;
                CHECK((int)pid->num == 2);
            }
            if (strcmp(cat->str, "launch") == 0 || strcmp(cat->str, "runtime") == 0)
                CHECK((int)pid->num == 1 && (int)tid->num == 10 + 1); /* thread 1 */
            odd_seen += strcmp(name->str, odd_name) == 0;
            min_ts_zero += ts->num == 0.0;
        } else if (strcmp(ph->str, "s") == 0 || strcmp(ph->str, "f") == 0) {
            const jval *id = get(e, "id");
            CHECK(id && id->type == J_NUM && id->num >= 1 && id->num < 16);
            if (!id || id->num < 1 || id->num >= 16)
                continue;
            if (ph->str[0] == 's') {
                s_count++;
                flow_s[(int)id->num] = ts->num;
                CHECK((int)pid->num == 1);
            } else {
                f_count++;
                flow_f[(int)id->num] = ts->num;
                CHECK((int)pid->num == 2);
                const jval *bp = get(e, "bp");
                CHECK(bp && bp->type == J_STR && strcmp(bp->str, "e") == 0);
            }
        } else {
            CHECK(!"unexpected event phase");
        }
    }
    CHECK(x == 9);             /* the records of step 1 */
    CHECK(ranges == 2);
    CHECK(kernels == 2);
    CHECK(odd_seen == 1);      /* the escaped name came back intact */
    CHECK(min_ts_zero == 1);   /* ts counts from the step's start */
    CHECK(s_count == 3 && f_count == 3);
    for (int id = 1; id <= 3; id++)
        CHECK(flow_s[id] > 0 && flow_f[id] > flow_s[id]); /* launch before work */
    CHECK(m >= 5 + 2);         /* process and thread names, 2 streams */
    jfree(doc);

    /* -1 is the last step; a step that is not there is an error. */
    CHECK(trace_export_chrome(path, r, n, -1, NULL, why, sizeof why) == 0);
    CHECK(trace_export_chrome(path, r, n, 2, NULL, why, sizeof why) == -1);
    CHECK(strstr(why, "no step 2") != NULL);
    CHECK(trace_export_chrome(path, r, 0, -1, NULL, why, sizeof why) == -1);
    snprintf(path, sizeof path, "%s/missing-dir/x.json", dir);
    CHECK(trace_export_chrome(path, r, n, 0, NULL, why, sizeof why) == -1);
    CHECK(strstr(why, "cannot write") != NULL);
}

/* The CPU backend: dispatches only, no launches, so no flows. */
static void test_cpu(const char *dir)
{
    trace_record r[] = {
        rec(TRACE_RANGE, "step", 0, 10, 0, 0, 0),
        rec(TRACE_RANGE, "micro", 1, 9, 0, 0, 0),
        rec(TRACE_KERNEL, "gemm", 2, 4, 0, 0, 0),
        rec(TRACE_KERNEL, "adamw", 5, 6, 0, 0, 0),
    };
    char path[512], why[256] = "";
    snprintf(path, sizeof path, "%s/cpu.json", dir);
    CHECK(trace_export_chrome(path, r, N(r), 0, "cpu", why, sizeof why) == 0);
    jval *doc = load(path);
    CHECK(doc != NULL);
    const jval *ev = get(doc, "traceEvents");
    size_t x = 0, flows = 0;
    for (size_t i = 0; ev && i < ev->n; i++) {
        const jval *ph = get(ev->items[i], "ph");
        x += ph && strcmp(ph->str, "X") == 0;
        flows += ph && (strcmp(ph->str, "s") == 0 || strcmp(ph->str, "f") == 0);
    }
    CHECK(x == 4);
    CHECK(flows == 0);
    jfree(doc);
}

int main(void)
{
    char dir[] = "/tmp/accubench-trace-export-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_gpu(dir);
    test_cpu(dir);
    CHECK(check_remove_tree(dir) == 0);
    return check_finish("test_trace_export");
}
