/* The model registry: presets, custom shapes and the reasons a shape is
 * refused; and a custom shape is a model like a preset (its memory need is
 * what it allocates, its accumulated gradient the full batch's). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "gradcheck.h"
#include "mlp.h"
#include "options.h"
#include "registry.h"
#include "step.h"

static char why[600];

/* The presets as they always were: names, shapes, parameter counts. */
static void test_presets(void)
{
    static const struct {
        const char *name;
        int hidden, layers, classes;
        size_t params;
    } want[] = {
        {"tiny", 64, 2, 16, 9360},
        {"S", 1024, 4, 1024, 5248000},
        {"M", 4096, 8, 1024, 138445824},
        {"L", 8192, 8, 1024, 545326080},
        {"XL", 16384, 8, 1024, 2164392960},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        model_spec s;
        CHECK(model_spec_parse(want[i].name, &s, why, sizeof why) == 0);
        CHECK(s.kind == &mlp_kind);
        CHECK(strcmp(s.name, want[i].name) == 0);
        CHECK(s.dims[MLP_HIDDEN] == want[i].hidden && s.dims[MLP_LAYERS] == want[i].layers &&
              s.dims[MLP_CLASSES] == want[i].classes);
        CHECK(model_param_count(&s) == want[i].params);
        CHECK(strstr(model_names(), want[i].name) != NULL);
    }
    /* S: 5 layers of 1024 x 1024 MACs an example; forward and weight
     * gradient for each, input gradient for all but the first. */
    model_spec s;
    CHECK(model_spec_parse("S", &s, why, sizeof why) == 0);
    CHECK(model_flops_per_step(&s, 100) == (2.0 * 5 + 2.0 * 5 + 2.0 * 4) * 1048576 * 100);
    input_spec in;
    model_input(&s, &in);
    CHECK(in.kind == INPUT_FEATURES && in.width == 1024 && in.classes == 1024 &&
          in.loss_items == 1);
    CHECK(strcmp(model_kind_find("mlp")->name, "mlp") == 0);
    CHECK(model_kind_find("S") == NULL);
}

/* Names are unique across every kind, and none could be mistaken for a
 * shape or a list. */
static void test_names_unique(void)
{
    int n;
    const model_kind *const *kinds = model_kinds(&n);
    CHECK(n >= 1);
    for (int a = 0; a < n; a++) {
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
        {"Q", "unknown model 'Q' (known: tiny, S, M, L, XL, gpt-tiny, gpt-small, gpt-medium, "
              "gpt-large, gpt-xl; or mlp:hidden=N,layers=N,classes=N; "
              "or gpt:d=N,layers=N,heads=N,seq=N,vocab=N)"},
        {"s", "unknown model 's'"},
        {"", "unknown model ''"},
        {"mlp", "model 'mlp' needs a shape: mlp:hidden=N,layers=N,classes=N"},
        {"mlp:", "gives no shape"},
        {"bert:d=64", "unknown model kind 'bert' in 'bert:d=64' (known: mlp, gpt)"},
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

    /* Through the options, as the command line and the profiles set it. */
    run_options o;
    options_defaults(&o);
    CHECK(o.n_models == 1 && strcmp(o.models[0].name, "S") == 0);
    CHECK(options_set(&o, "model", "tiny,mlp:hidden=2048,layers=6,classes=1000", why,
                      sizeof why) == 0);
    CHECK(o.n_models == 2 && strcmp(o.models[1].name, "mlp:hidden=2048,layers=6,classes=1000") == 0);
    CHECK(options_set(&o, "model", "M,Q", why, sizeof why) == -1);
    CHECK(strncmp(why, "unknown model 'Q' (known: tiny, S, M, L, XL", 43) == 0);
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
    CHECK(b->mem_in_use == n.total);
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
    test_presets();
    test_names_unique();
    test_custom_shapes();
    test_refused();
    test_lists();
    test_custom_model_runs();
    return check_finish("test_models");
}
