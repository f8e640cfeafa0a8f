/* An NVTX injection library for the tests: records every domain range push
 * and pop the program makes, in order, in memory.
 *
 * How it attaches (the NVTX3 injection protocol, nvtxDetail/nvtxInit.h):
 * the first NVTX call in the process runs the header-only loader, which
 * dlopen()s $NVTX_INJECTION64_PATH (RTLD_LAZY) and calls its exported
 * InitializeInjectionNvtx2 with the program's nvtxGetExportTable. Through
 * the NVTX_ETID_CALLBACKS table, GetModuleFunctionTable(NVTX_CB_MODULE_CORE2)
 * hands back an array of pointers to the program's implementation slots,
 * indexed by NVTX_CBID_CORE2_*; writing a handler into a slot attaches it.
 * When init returns non-zero, every slot still left on its lazy-init stub
 * becomes a no-op (NULL). Init happens once per process: a first NVTX call
 * made before the variable is set attaches nothing, for good.
 *
 * The test reaches the record through the extern accessors below, on the
 * same loaded instance (dlopen of the same file returns the loader's one).
 * Without the NVTX3 headers (no ACCUBENCH_HAVE_NVTX) only the accessors
 * are built, and they report nothing attached. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The library's interface, declared here for -Wmissing-prototypes builds;
 * tests/test_nvtx_ranges.c looks these up with dlsym. */
int nvtx_recorder_attached(void);
int nvtx_recorder_count(void);
const char *nvtx_recorder_event(int i, int *is_push, const char **domain);
void nvtx_recorder_reset(void);

typedef struct rec_event {
    int is_push;
    char *message;      /* push: the message (copied); pop: NULL */
    const char *domain; /* the domain's name; "" for the default domain */
} rec_event;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rec_event *events;
static int n_events, cap_events;
static int attached;

int nvtx_recorder_attached(void)
{
    return attached;
}

int nvtx_recorder_count(void)
{
    pthread_mutex_lock(&lock);
    int n = n_events;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Event i: its message ("" for a pop, "(null)" for a push with no ASCII
 * message), *is_push, and *domain (the domain's name, "" for none). NULL
 * when i is out of range. The strings live until nvtx_recorder_reset. */
const char *nvtx_recorder_event(int i, int *is_push, const char **domain)
{
    rec_event e = {0, NULL, NULL};
    int found = 0;
    pthread_mutex_lock(&lock);
    if (i >= 0 && i < n_events) {
        e = events[i];
        found = 1;
    }
    pthread_mutex_unlock(&lock);
    if (!found)
        return NULL;
    if (is_push)
        *is_push = e.is_push;
    if (domain)
        *domain = e.domain;
    return e.is_push ? (e.message ? e.message : "(null)") : "";
}

void nvtx_recorder_reset(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_events; i++)
        free(events[i].message);
    free(events);
    events = NULL;
    n_events = cap_events = 0;
    pthread_mutex_unlock(&lock);
}

#ifdef ACCUBENCH_HAVE_NVTX
#define NVTX_NO_IMPL /* a tool: the types and ids only, not the loader */
#include <nvtx3/nvToolsExt.h>

static void record(int is_push, const char *message, const char *domain)
{
    pthread_mutex_lock(&lock);
    if (n_events == cap_events) {
        int cap = cap_events ? 2 * cap_events : 1024;
        rec_event *e = realloc(events, (size_t)cap * sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&lock);
            return; /* the test sees the lost event as broken nesting */
        }
        events = e;
        cap_events = cap;
    }
    char *copy = NULL;
    if (message) {
        size_t len = strlen(message) + 1;
        copy = malloc(len);
        if (copy)
            memcpy(copy, message, len);
    }
    events[n_events++] = (rec_event){is_push, copy, domain};
    pthread_mutex_unlock(&lock);
}

/* The opaque domain handle is the tool's to define. */
struct nvtxDomainRegistration_st {
    struct nvtxDomainRegistration_st *next;
    char name[];
};

static struct nvtxDomainRegistration_st *domains;
static _Thread_local int depth; /* push/pop nesting on this thread, all domains */

static const char *domain_name(nvtxDomainHandle_t d)
{
    return d ? d->name : "";
}

static nvtxDomainHandle_t NVTX_API on_domain_create_a(const char *name)
{
    if (!name)
        name = "";
    pthread_mutex_lock(&lock);
    struct nvtxDomainRegistration_st *d;
    for (d = domains; d; d = d->next)
        if (strcmp(d->name, name) == 0)
            break;
    if (!d) {
        size_t len = strlen(name) + 1;
        d = malloc(sizeof *d + len);
        if (d) {
            memcpy(d->name, name, len);
            d->next = domains;
            domains = d;
        }
    }
    pthread_mutex_unlock(&lock);
    return d;
}

static void NVTX_API on_domain_destroy(nvtxDomainHandle_t d)
{
    (void)d; /* kept: recorded events point at its name */
}

static int NVTX_API on_domain_range_push_ex(nvtxDomainHandle_t d,
                                            const nvtxEventAttributes_t *attr)
{
    const char *message = NULL;
    if (attr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII)
        message = attr->message.ascii;
    record(1, message, domain_name(d));
    return depth++;
}

static int NVTX_API on_domain_range_pop(nvtxDomainHandle_t d)
{
    record(0, NULL, domain_name(d));
    return depth > 0 ? --depth : -1;
}

/* The same for ranges outside any domain, so that stray ones show up. */
static int NVTX_API on_range_push_a(const char *message)
{
    record(1, message, "");
    return depth++;
}

static int NVTX_API on_range_push_ex(const nvtxEventAttributes_t *attr)
{
    return on_domain_range_push_ex(NULL, attr);
}

static int NVTX_API on_range_pop(void)
{
    return on_domain_range_pop(NULL);
}

static void release_domains(void) __attribute__((destructor));
static void release_domains(void)
{
    while (domains) {
        struct nvtxDomainRegistration_st *d = domains;
        domains = d->next;
        free(d);
    }
}

static int install(NvtxFunctionTable table, unsigned int size, unsigned int id,
                   NvtxFunctionPointer fn)
{
    /* size counts the valid ids 0..size-1; slot 0 is unused (NULL). */
    if (!table || id == 0 || id >= size || !table[id])
        return 0;
    *table[id] = fn;
    return 1;
}

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);
int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    if (!get_export_table)
        return 0;
    const NvtxExportTableCallbacks *cb =
        (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;

    const NvtxExportTableVersionInfo *vi =
        (const NvtxExportTableVersionInfo *)get_export_table(NVTX_ETID_VERSIONINFO);
    if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);

    NvtxFunctionTable core2 = NULL, core = NULL;
    unsigned int core2_size = 0, core_size = 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size))
        return 0;
    int ok = 1;
#define SLOT(table, size, id, fn) ok &= install(table, size, id, (NvtxFunctionPointer)(fn))
    SLOT(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, on_domain_create_a);
    SLOT(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, on_domain_destroy);
    SLOT(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, on_domain_range_push_ex);
    SLOT(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, on_domain_range_pop);
    /* The domain-less ranges are optional extras: a missing CORE table is
     * not a failure. */
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size)) {
        SLOT(core, core_size, NVTX_CBID_CORE_RangePushA, on_range_push_a);
        SLOT(core, core_size, NVTX_CBID_CORE_RangePushEx, on_range_push_ex);
        SLOT(core, core_size, NVTX_CBID_CORE_RangePop, on_range_pop);
    }
#undef SLOT
    attached = ok;
    return ok;
}
#endif
