/* NVTX3 ranges in the "accubench" domain, mirrored into a recorder when one
 * is attached. NVTX3 is header-only: with no tool attached a push is a
 * check of a function pointer. */
#include "ranges.h"

#include <string.h>

#ifdef ACCUBENCH_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t domain;

static nvtxDomainHandle_t get_domain(void)
{
    if (!domain)
        domain = nvtxDomainCreateA("accubench");
    return domain;
}

static void nvtx_push(const char *name)
{
    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof attr);
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name;
    nvtxDomainRangePushEx(get_domain(), &attr);
}

static void nvtx_pop(void)
{
    nvtxDomainRangePop(get_domain());
}
#else
static void nvtx_push(const char *name) { (void)name; }
static void nvtx_pop(void) {}
#endif

static trace_recorder *recorder;

void ranges_attach_recorder(trace_recorder *r) { recorder = r; }
trace_recorder *ranges_recorder(void) { return recorder; }

void range_push(const char *name)
{
    nvtx_push(name);
    if (recorder)
        trace_range_push(recorder, name);
}

void range_pop(void)
{
    nvtx_pop();
    if (recorder)
        trace_range_pop(recorder);
}
