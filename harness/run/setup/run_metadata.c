#include "run_metadata.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attention_kind.h"
#include "backend_caps_meta.h"
#include "levers.h"
#include "version.h"

static void list_columns(char *out, size_t n, const char *pass)
{
    size_t used = 0;
    out[0] = '\0';
#define ADD(name, type, p, role)                                                   \
    if (strcmp(#p, pass) == 0 && used < n)                                         \
        used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " " : "", #name);
    RESULT_COLUMNS(ADD)
#undef ADD
}

/* backend.caps as the words the results side reads (backend_caps_meta.h). */
static void write_caps(csv_writer *w, unsigned caps)
{
    static const struct {
        unsigned bit;
        const char *word;
    } words[] = {
        {BK_CAP_DISPATCH_IS_DEVICE_WORK, BACKEND_CAPS_DISPATCH_IS_DEVICE_WORK},
        {BK_CAP_SHARES_HOST_MEMORY, BACKEND_CAPS_SHARES_HOST_MEMORY},
    };
    char text[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if ((caps & words[i].bit) && used < sizeof text)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", used ? " " : "",
                                     words[i].word);
    csv_writer_meta(w, BACKEND_CAPS_KEY, "%s", used ? text : "none");
}

const char *run_metadata_attention(const backend *b, char *out, size_t len)
{
    attention_kind k = b->ops->attention_forward ? ATTENTION_FUSED : ATTENTION_UNFUSED;
    axis_describe(&attention_axis, &k, 1, out, len);
    return out;
}

void run_metadata_write(csv_writer *w, const run_options *o, const backend *b,
                        const run_context *ctx, const char *note)
{
    char date[32], host[128] = "unknown", cols[1024], modes[1024], attention[128];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    gethostname(host, sizeof host);
    csv_writer_meta(w, "tool_version", "%s", ACCUBENCH_VERSION);
    csv_writer_meta(w, "git_revision", "%s", ctx->git_rev);
    csv_writer_meta(w, "date", "%s", date);
    csv_writer_meta(w, "host", "%s", host);
    csv_writer_meta(w, "backend", "%s", b->name);
    csv_writer_meta(w, "backend_choice", "%s", note[0] ? note : o->backend);
    write_caps(w, b->caps);
    csv_writer_meta(w, "device", "%s", b->device);
    csv_writer_meta(w, "library", "%s", b->library);
    csv_writer_meta(w, "attention", "%s", run_metadata_attention(b, attention, sizeof attention));
    csv_writer_meta(w, "blas_core", "%s", "n/a");
    const char *core = strstr(b->library, "core ");
    if (core)
        csv_writer_meta(w, "blas_core", "%.*s", (int)strcspn(core + 5, " "), core + 5);
    csv_writer_meta(w, "profile", "%s", o->profile[0] ? o->profile : "(none)");
    csv_writer_meta(w, "seed", "%llu", (unsigned long long)o->seed);
    /* in the order they were measured, as an appended file's line is kept
     * (csv_existing.c): the per-dtype lines under their plain names are
     * the last one's */
    char dtypes[128] = "";
    for (int i = 0, used = 0; i < o->n_dtypes && used < (int)sizeof dtypes; i++)
        used += snprintf(dtypes + used, sizeof dtypes - (size_t)used, "%s%s", i ? ", " : "",
                         dtype_name(o->dtypes[i]));
    csv_writer_meta(w, "dtype", "%s", dtypes);
    csv_writer_meta(w, "optimizer", "%s lr %g", optimizer_name(o->optimizer.kind),
                    (double)o->optimizer.lr);
    axis_describe(&mode_axis, o->modes, o->n_modes, modes, sizeof modes);
    csv_writer_meta(w, "modes", "%s", modes);
    if (o->n_recomputes > 0) {
        axis_describe(&recompute_axis, o->recomputes, o->n_recomputes, modes, sizeof modes);
        csv_writer_meta(w, "recompute", "%s", modes);
    }
    if (o->n_grad_dtypes > 0) {
        axis_describe(&grad_dtype_axis, o->grad_dtypes, o->n_grad_dtypes, modes, sizeof modes);
        csv_writer_meta(w, "grad_dtype", "%s", modes);
    }
    csv_writer_meta(w, "mem_cap_bytes", "%llu", (unsigned long long)o->mem_cap);
    csv_writer_meta(w, "timing", "warmup %d; min %d max %d samples; noise target %g%%; "
                    "budget %gs per config%s", o->warmup, o->min_samples, o->max_samples,
                    o->max_noise_pct, o->budget_s, o->steps ? "; fixed step count" : "");
    csv_writer_meta(w, "command", "%s", ctx->command_line);
    list_columns(cols, sizeof cols, "timed");
    csv_writer_meta(w, "pass_timed", "%s", cols);
    list_columns(cols, sizeof cols, "trace");
    csv_writer_meta(w, "pass_trace", "%s", cols);
    list_columns(cols, sizeof cols, "check");
    csv_writer_meta(w, "pass_check", "%s", cols);
    list_columns(cols, sizeof cols, "count");
    csv_writer_meta(w, "pass_count", "%s", cols);
    /* What makes a row a config: a later row equal in all of these is the
     * config run again (--append), and the chart scripts, like every
     * reader here, read its first row only (plots/pick.awk). */
    result_key_names(cols, sizeof cols, " ");
    csv_writer_meta(w, "config_key", "%s", cols);
    /* The levers, their defaults and the charts' words for them: the
     * chart scripts label a row by these (plots/levers.awk), not by a list
     * of their own. */
    levers_meta(cols, sizeof cols);
    csv_writer_meta(w, LEVERS_META_KEY, "%s", cols);
}

