#include "optimizer.h"

#include "name_list.h"

static const char *const NAMES[OPT_COUNT] = {[OPT_ADAMW] = "adamw", [OPT_SGD] = "sgd"};

const char *optimizer_name(optimizer_kind k)
{
    return k >= 0 && k < OPT_COUNT ? NAMES[k] : "?";
}

static const char *name_at(int k) { return NAMES[k]; }

int optimizer_parse(const char *s, optimizer_kind *out)
{
    int i = name_find(OPT_COUNT, name_at, s);
    if (i < 0)
        return -1;
    *out = (optimizer_kind)i;
    return 0;
}

const char *optimizer_names(void)
{
    static char list[64];
    return name_list(list, sizeof list, OPT_COUNT, name_at, ", ");
}

static const char *const AT_NAMES[OPT_AT_COUNT] = {[OPT_AT_STEP] = "step",
                                                   [OPT_AT_BACKWARD] = "backward"};

const char *optimizer_at_name(optimizer_at a)
{
    return a >= 0 && a < OPT_AT_COUNT ? AT_NAMES[a] : "?";
}

static const char *at_name_at(int i) { return AT_NAMES[i]; }

int optimizer_at_parse(const char *s, optimizer_at *out)
{
    int i = name_find(OPT_AT_COUNT, at_name_at, s);
    if (i < 0)
        return -1;
    *out = (optimizer_at)i;
    return 0;
}

const char *optimizer_at_names(void)
{
    static char list[32];
    return name_list(list, sizeof list, OPT_AT_COUNT, at_name_at, ", ");
}
