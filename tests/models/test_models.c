/* The model registry: presets, custom shapes and the reasons a shape is
 * refused; and a custom shape is a model like a preset (its memory need is
 * what it allocates, its accumulated gradient the full batch's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "gradcheck.h"
#include "llama.h"
#include "mlp.h"
#include "options.h"
#include "registry.h"
#include "step.h"

static char why[600];

/* Every preset of every kind in the registry: its name finds it, with its
 * kind and shape; the shape is one its kind accepts; the usage text names
 * it; its tensors hold its parameters. */
static void test_every_preset(void)
{
    int n;
    const model_kind *const *kinds = model_kinds(&n);
    for (int k = 0; k < n; k++)
        for (int p = 0; p < kinds[k]->n_presets; p++) {
            const model_preset *pr = &kinds[k]->presets[p];
            model_spec s;
            CHECK(model_spec_parse(pr->name, &s, why, sizeof why) == 0);
            CHECK(s.kind == kinds[k] && strcmp(s.name, pr->name) == 0);
            CHECK(memcmp(s.dims, pr->dims, sizeof s.dims) == 0);
            for (int d = 0; d < kinds[k]->n_dims; d++)
                CHECK(pr->dims[d] >= kinds[k]->dims[d].min && pr->dims[d] <= kinds[k]->dims[d].max);
            CHECK(!kinds[k]->check || kinds[k]->check(&s, why, sizeof why) == 0);
            CHECK(strstr(model_names(), pr->name) != NULL);
            int nt = kinds[k]->tensors(&s, NULL, 0);
            model_tensor *t = calloc((size_t)nt, sizeof *t);
            kinds[k]->tensors(&s, t, nt);
            CHECK(nt > 0 && t[nt - 1].offset + (size_t)(t[nt - 1].rows * t[nt - 1].cols) ==
                                model_param_count(&s));
            free(t);
        }
}

/* The MLP's presets: Linear layers of hidden x hidden and a head to the
 * classes; and S's FLOPs and input. */
static void test_mlp(void)
{
    for (int p = 0; p < mlp_kind.n_presets; p++) {
        const int *d = mlp_kind.presets[p].dims;
        size_t h = (size_t)d[MLP_HIDDEN], c = (size_t)d[MLP_CLASSES];
        model_spec s;
        CHECK(model_spec_parse(mlp_kind.presets[p].name, &s, why, sizeof why) == 0);
        CHECK(model_param_count(&s) == (size_t)d[MLP_LAYERS] * (h * h + h) + h * c + c);
    }
    /* S: 5 layers of 1024 x 1024 MACs an example; forward and weight
     * gradient for each, input gradient for all but the first. */
    model_spec s;
    CHECK(model_spec_parse("mlp:hidden=1024,layers=4,classes=1024", &s, why, sizeof why) == 0);
    CHECK(model_flops_per_step(&s, 100) == (2.0 * 5 + 2.0 * 5 + 2.0 * 4) * 1048576 * 100);
    input_spec in;
    model_input(&s, &in);
    CHECK(in.kind == INPUT_FEATURES && in.width == 1024 && in.classes == 1024 &&
          in.loss_items == 1);
    CHECK(strcmp(model_kind_find("mlp")->name, "mlp") == 0);
}

/* Names are unique across every kind, and none could be mistaken for a
 * shape or a list. */
static void test_names_unique(void)
{
    int n;
    const model_kind *const *kinds = model_kinds(&n);
    CHECK(n >= 1);
    for (int a = 0; a < n; a++) {
        CHECK(model_kind_find(kinds[a]->name) == kinds[a]);
        CHECK(kinds[a]->n_dims > 0 && kinds[a]->n_dims <= MODEL_MAX_DIMS);
        CHECK(strpbrk(kinds[a]->name, ":,;=") == NULL);
        for (int p = 0; p < kinds[a]->n_presets; p++) {
            const char *name = kinds[a]->presets[p].name;
            CHECK(strpbrk(name, ":,;=") == NULL);
            CHECK(model_kind_find(name) == NULL);
            for (int b = 0; b < n; b++)
                for (int q = 0; q < kinds[b]->n_presets; q++)
                    if (a != b || p != q)
                        CHECK(strcmp(name, kinds[b]->presets[q].name) != 0);
        }
    }
}

static void test_custom_shapes(void)
{
    model_spec s, t;
    CHECK(model_spec_parse("mlp:hidden=2048,layers=6,classes=1000", &s, why, sizeof why) == 0);
    CHECK(s.kind == &mlp_kind);
    CHECK(s.dims[MLP_HIDDEN] == 2048 && s.dims[MLP_LAYERS] == 6 && s.dims[MLP_CLASSES] == 1000);
    CHECK(strcmp(s.name, "mlp:hidden=2048,layers=6,classes=1000") == 0);
    CHECK(model_param_count(&s) == 6 * (2048 * 2048 + 2048) + 2048 * 1000 + 1000);

    /* Any order, and ';' (what the CSV writes for ','): the same name. */
    CHECK(model_spec_parse("mlp:classes=1000;layers=6;hidden=2048", &t, why, sizeof why) == 0);
    CHECK(strcmp(t.name, s.name) == 0);

    /* S written out is S's shape: the same parameters and memory need. */
    model_spec S;
    CHECK(model_spec_parse("S", &S, why, sizeof why) == 0);
    CHECK(model_spec_parse("mlp:hidden=1024,layers=4,classes=1024", &t, why, sizeof why) == 0);
    memory_need a, b;
    model_memory_need(&S, DTYPE_BF16, OPT_ADAMW, 24, 100, 3, &a);
    model_memory_need(&t, DTYPE_BF16, OPT_ADAMW, 24, 100, 3, &b);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK(model_flops_per_step(&S, 64) == model_flops_per_step(&t, 64));

    /* The bounds themselves are accepted. */
    CHECK(model_spec_parse("mlp:hidden=1,layers=1,classes=2", &t, why, sizeof why) == 0);
    CHECK(model_spec_parse("mlp:hidden=8,layers=64,classes=2", &t, why, sizeof why) == 0);
}

/* Every malformed shape is refused with one line that names it and says
 * what is wrong. */
static void test_refused(void)
{
    char long_shape[400] = "mlp:hidden=8,layers=2,classes=4";
    while (strlen(long_shape) < sizeof long_shape - 20)
        strcat(long_shape, ",layers=2");
    const struct {
        const char *text, *reason;
    } bad[] = {
        {"Q", "unknown model 'Q' (known: "},
        {"s", "unknown model 's'"},
        {"", "unknown model ''"},
        {"mlp", "model 'mlp' needs a shape: mlp:hidden=N,layers=N,classes=N"},
        {"mlp:", "gives no shape"},
        {"bert:d=64", "unknown model kind 'bert' in 'bert:d=64' (known: "},
        {":hidden=8", "unknown model kind ''"},
        {"mlp:hidden=0,layers=2,classes=4", "hidden must be between 1 and 1048576, got '0'"},
        {"mlp:hidden=8,layers=0,classes=4", "layers must be between 1 and 64, got '0'"},
        {"mlp:hidden=8,layers=65,classes=4", "layers must be between 1 and 64"},
        {"mlp:hidden=8,layers=2,classes=1", "classes must be between 2 and"},
        {"mlp:hidden=-8,layers=2,classes=4", "hidden must be between"},
        {"mlp:hidden=2147483648,layers=2,classes=4", "hidden must be between"},
        {"mlp:hidden=99999999999999999999999,layers=2,classes=4", "hidden must be between"},
        {"mlp:hidden=8x,layers=2,classes=4", "hidden must be a whole number"},
        {"mlp:hidden=,layers=2,classes=4", "hidden needs a whole number"},
        {"mlp:hidden= 8,layers=2,classes=4", "hidden needs a whole number"},
        {"mlp:hidden,layers=2,classes=4", "'hidden' is not key=value"},
        {"mlp:hidden=8,,layers=2,classes=4", "has an empty item"},
        {"mlp:hidden=8,layers=2,classes=4,", "has an empty item"},
        {"mlp:hidden=8,depth=2,classes=4", "unknown key 'depth' (mlp:hidden=N,layers=N,classes=N)"},
        {"mlp:hidden=8,hidden=9,layers=2,classes=4", "gives hidden twice"},
        {"mlp:hidden=8,layers=2", "gives no classes (mlp:hidden=N,layers=N,classes=N)"},
        {"mlp:hidden=1048576,layers=64,classes=2", "parameters; at most 2^40"},
        {long_shape, "is too long"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        model_spec s;
        why[0] = '\0';
        int rc = model_spec_parse(bad[i].text, &s, why, sizeof why);
        CHECK(rc == -1);
        CHECK(strstr(why, bad[i].reason) != NULL);
        CHECK(strchr(why, '\n') == NULL);
        /* The message names what was given (the too-long one, its start). */
        CHECK(strncmp(bad[i].text, "mlp:hidden=8,layers=2,classes=4,layers", 38) == 0 ||
              strstr(why, bad[i].text) != NULL);
        if (rc != -1 || !strstr(why, bad[i].reason))
            fprintf(stderr, "  '%s': got \"%s\", expected \"%s\"\n", bad[i].text, why,
                    bad[i].reason);
    }
}

/* What an unknown name is told: every preset and every kind's form, and
 * for an unknown kind every kind, as the registry lists them. */
static void test_refused_lists_the_registry(void)
{
    model_spec s;
    CHECK(model_spec_parse("Q", &s, why, sizeof why) == -1);
    char unknown_kind[600];
    CHECK(model_spec_parse("bert:d=64", &s, unknown_kind, sizeof unknown_kind) == -1);
    int n;
    const model_kind *const *kinds = model_kinds(&n);
    for (int k = 0; k < n; k++) {
        char form[200], kind[80];
        size_t used = (size_t)snprintf(form, sizeof form, "%s:", kinds[k]->name);
        for (int d = 0; d < kinds[k]->n_dims; d++)
            used += (size_t)snprintf(form + used, sizeof form - used, "%s%s=N", d ? "," : "",
                                     kinds[k]->dims[d].key);
        CHECK(strstr(why, form) != NULL);
        for (int p = 0; p < kinds[k]->n_presets; p++)
            CHECK(strstr(why, kinds[k]->presets[p].name) != NULL);
        snprintf(kind, sizeof kind, "%s%s%s", k ? ", " : "(known: ", kinds[k]->name,
                 k == n - 1 ? ")" : ",");
        CHECK(strstr(unknown_kind, kind) != NULL);
        if (!strstr(why, form) || !strstr(unknown_kind, kind))
            fprintf(stderr, "  kind %s: \"%s\" / \"%s\"\n", kinds[k]->name, why, unknown_kind);
    }
}

static void test_lists(void)
{
    model_spec s[4];
    CHECK(model_spec_list_parse("S,mlp:hidden=32,layers=2,classes=8,tiny", s, 4, why,
                                sizeof why) == 3);
    CHECK(strcmp(s[0].name, "S") == 0);
    CHECK(strcmp(s[1].name, "mlp:hidden=32,layers=2,classes=8") == 0);
    CHECK(strcmp(s[2].name, "tiny") == 0);
    CHECK(model_spec_list_parse("mlp:hidden=8,layers=1,classes=2,mlp:hidden=16,layers=1,classes=4",
                                s, 4, why, sizeof why) == 2);
    CHECK(s[1].dims[MLP_HIDDEN] == 16);
    CHECK(model_spec_list_parse("S,,M", s, 4, why, sizeof why) == -1 &&
          strstr(why, "model has an empty item"));
    CHECK(model_spec_list_parse("S,layers=6", s, 4, why, sizeof why) == -1 &&
          strstr(why, "unknown model 'layers=6'"));
    CHECK(model_spec_list_parse("S,M,L", s, 2, why, sizeof why) == -1 &&
          strstr(why, "more than 2 models"));
    CHECK(model_spec_list_parse("S,mlp:hidden=8,layers=0,classes=2", s, 4, why, sizeof why) == -1 &&
          strstr(why, "layers must be between"));
    /* Nine Llama shapes are 72 comma pieces: within the 32 models a list
     * holds, so they are nine models, not "more than 64 items". */
    {
        char list[1024] = "";
        model_spec many[OPT_MAX_LIST];
        for (int i = 1; i <= 9; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list),
                     "%sllama:d=8,layers=%d,heads=2,kv_heads=1,ffn=4,seq=4,vocab=8,tied=0",
                     i > 1 ? "," : "", i);
        CHECK(model_spec_list_parse(list, many, OPT_MAX_LIST, why, sizeof why) == 9);
        CHECK(many[8].dims[LLAMA_LAYERS] == 9);
    }

    /* Through the options, as the command line and the profiles set it. */
    run_options o;
    options_defaults(&o);
    CHECK(o.n_models == 1 && strcmp(o.models[0].name, "S") == 0);
    CHECK(options_set(&o, "model", "tiny,mlp:hidden=2048,layers=6,classes=1000", why,
                      sizeof why) == 0);
    CHECK(o.n_models == 2 && strcmp(o.models[1].name, "mlp:hidden=2048,layers=6,classes=1000") == 0);
    CHECK(options_set(&o, "model", "M,Q", why, sizeof why) == -1);
    CHECK(strncmp(why, "unknown model 'Q' (known: ", 26) == 0 && strstr(why, model_names()));
    CHECK(o.n_models == 2 && strcmp(o.models[0].name, "tiny") == 0); /* as it was */
}

/* A custom shape on the CPU: what it allocates is its need to the byte,
 * and its accumulated gradient over an uneven split is the full batch's. */
static void test_custom_model_runs(void)
{
    backend *b;
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    if (!b)
        return;
    model_spec s;
    CHECK(model_spec_parse("mlp:hidden=24,layers=3,classes=7", &s, why, sizeof why) == 0);
    optimizer_config opt = {OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};
    input_spec in;
    model_input(&s, &in);
    model m;
    dataset d;
    activations a;
    CHECK(model_create(b, &s, &opt, 5, &m) == BK_OK);
    CHECK(m.n_params == model_param_count(&s));
    CHECK(dataset_create(b, &in, 10, 2, 5, &d) == BK_OK);
    CHECK(activations_create(&m, 3, BK_ALLOC_HELD, &a) == BK_OK);
    memory_need n;
    model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, 3, 10, 2, &n);
    CHECK(b->mem_in_use == n.total - n.loss_sum); /* the step runner holds the loss sum */
    CHECK(a.bytes == n.activations && d.bytes == n.inputs);
    activations_destroy(&m, &a, BK_ALLOC_HELD);

    split sp;
    CHECK(split_make(10, 3, 1, &sp, why, sizeof why) == 0);
    step_runner run;
    CHECK(step_runner_init(&run, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
    double err = -1, loss = 0;
    CHECK(grad_check(&run, &err, &loss, NULL, NULL) == BK_OK);
    CHECK(err >= 0 && err < 1e-5);
    CHECK(isfinite(loss) && loss > 0);
    step_runner_free(&run);
    dataset_destroy(&d);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

int main(void)
{
    test_every_preset();
    test_mlp();
    test_names_unique();
    test_custom_shapes();
    test_refused();
    test_refused_lists_the_registry();
    test_lists();
    test_custom_model_runs();
    return check_finish("test_models");
}
