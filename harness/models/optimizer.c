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
