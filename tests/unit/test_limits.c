/*
 * Segment sizing (alloc/limits.h): the address-space budget rule for the
 * ranks of a node, auto sizes for 1 to 4096 ranks per node, explicit sizes
 * refused with a message naming GAS_SEGMENT_SIZE and the limit (the 47-bit
 * user space, RLIMIT_AS), the pointer window, vm.max_map_count, and the
 * room checks that GAS_PREFAULT relies on.
 */
#include "alloc/limits.h"
#include "alloc/segment.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "unit.h"

#include <string.h>

#define GiB (1ull << 30)
#define TiB (1ull << 40)

static struct gas_al_limits machine(void)
{
    struct gas_al_limits l;
    memset(&l, 0, sizeof l);
    l.ram_total = 24 * GiB;
    l.cg_limit = GAS_AL_NO_LIMIT;
    l.as_limit = GAS_AL_NO_LIMIT;
    l.va_top = 1ull << 47;
    l.vm_size = 64ull << 20;
    l.max_map_count = 65530;
    return l;
}

static uint64_t plan(const struct gas_al_limits *l, uint64_t req, int local, gas_status_t want)
{
    uint64_t size = 0;
    gas_status_t st = gas_al_segment_size_plan(l, req, local, 1ull << 57, 4096, 0, &size);
    UCHECK(st == want, "request %llu for %d local ranks: status %d, want %d (%s)",
           (unsigned long long)req, local, st, want, gas_last_error());
    return size;
}

int main(void)
{
    gas_rt_error_set_abort(0);
    gas_rt_log_level_ = GAS_LOG_FATAL;
    struct gas_al_limits l = machine();
    uint64_t budget = gas_al_va_budget(&l);
    UCHECK(budget > 95 * TiB && budget <= 96 * TiB, "budget %llu", (unsigned long long)budget);

    /* auto: a power of two, within the budget for every rank count, never tiny. */
    for (int n = 1; n <= 4096; n *= 2) {
        uint64_t s = plan(&l, 0, n, GAS_OK);
        UCHECK((s & (s - 1)) == 0, "auto size %llu for %d ranks is not a power of two",
               (unsigned long long)s, n);
        UCHECK(s * (uint64_t)n <= budget, "%d ranks x %llu exceed the budget", n,
               (unsigned long long)s);
        UCHECK(s * (uint64_t)n * 4 > budget, "%d ranks: auto %llu wastes the budget", n,
               (unsigned long long)s);
        UCHECK(s >= 8 * GiB, "%d ranks: auto %llu is small", n, (unsigned long long)s);
    }
    UCHECK(plan(&l, 0, 1, GAS_OK) == 32 * TiB, "one rank gets 32 TiB");
    UCHECK(plan(&l, 0, 4, GAS_OK) == 8 * TiB, "four ranks get 8 TiB each");

    /* Explicit sizes: rounded to the page, up to the budget, refused beyond it. */
    UCHECK(plan(&l, 1000 * 1000 * 1000, 2, GAS_OK) % 4096 == 0, "rounded to a page");
    UCHECK(plan(&l, 1 * TiB, 64, GAS_OK) == 1 * TiB, "64 x 1 TiB fits");
    plan(&l, 2 * TiB, 64, GAS_ERR_NOMEM);
    UCHECK(strstr(gas_last_error(), "GAS_SEGMENT_SIZE") && strstr(gas_last_error(), "user address space"),
           "message: %s", gas_last_error());
    plan(&l, 1ull << 58, 1, GAS_ERR_INVALID);   /* beyond the pointer window */
    UCHECK(strstr(gas_last_error(), "GAS_SEGMENT_SIZE") != NULL, "window message: %s", gas_last_error());
    plan(&l, 1000, 1, GAS_ERR_INVALID);         /* below the minimum */
    UCHECK(strstr(gas_last_error(), "GAS_SEGMENT_SIZE=1000 (1000 bytes) is below the minimum"),
           "the value as given, not rounded to the page: %s", gas_last_error());
    plan(&l, 4ull << 20, 1, GAS_ERR_INVALID);   /* gas_init fits, a first gas_alloc does not */
    UCHECK(plan(&l, 6ull << 20, 1, GAS_OK) == 6ull << 20, "6 MiB, the minimum, is accepted");

    /* RLIMIT_AS shrinks the budget; the message names it. */
    l.as_limit = 4 * GiB;
    uint64_t s = plan(&l, 0, 2, GAS_OK);
    UCHECK(s * 2 <= 3 * GiB && s >= 512ull << 20, "auto under a 4 GiB RLIMIT_AS: %llu",
           (unsigned long long)s);
    plan(&l, 64 * GiB, 2, GAS_ERR_NOMEM);
    UCHECK(strstr(gas_last_error(), "RLIMIT_AS") && strstr(gas_last_error(), "GAS_SEGMENT_SIZE"),
           "rlimit message: %s", gas_last_error());
    /* Half the share is under 6m, the share is not: auto takes the share, to the page. */
    l.as_limit = l.vm_size + (56ull << 20);
    s = plan(&l, 0, 4, GAS_OK);
    UCHECK(s >= 6ull << 20 && s * 4 <= gas_al_va_budget(&l) && s % 4096 == 0,
           "auto under a tight RLIMIT_AS: %llu", (unsigned long long)s);
    l.as_limit = 8ull << 20;
    plan(&l, 0, 4, GAS_ERR_NOMEM);              /* nothing sensible fits */
    UCHECK(strstr(gas_last_error(), "RLIMIT_AS") != NULL, "tiny rlimit message: %s", gas_last_error());

    /* vm.max_map_count too small for the ranks of a node. */
    l = machine();
    l.max_map_count = 1000;
    plan(&l, 0, 512, GAS_ERR_NOMEM);
    UCHECK(strstr(gas_last_error(), "vm.max_map_count") != NULL, "map count: %s", gas_last_error());

    /* Room checks: a cgroup limit far below the request is named. */
    l = machine();
    char why[600];
    UCHECK(gas_al_limits_room(&l, 0, 4096, why, sizeof why) == 0, "one page has room: %s", why);
    l.cg_limit = 1ull << 20;
    snprintf(l.cg_limit_file, sizeof l.cg_limit_file, "/nonexistent/memory.max");
    snprintf(l.cg_usage_file, sizeof l.cg_usage_file, "/nonexistent/memory.current");
    UCHECK(gas_al_limits_room(&l, 0, 64ull << 20, why, sizeof why) != 0 &&
           strstr(why, "memory cgroup") != NULL, "cgroup room: %s", why);
    l = machine();
    UCHECK(gas_al_limits_room(&l, 0, 1ull << 62, why, sizeof why) != 0 &&
           strstr(why, "available") != NULL, "machine memory room: %s", why);
    l.huge_page = 2u << 20;
    UCHECK(gas_al_limits_room(&l, 1, 64ull << 20, why, sizeof why) != 0 &&
           strstr(why, "vm.nr_hugepages") != NULL, "hugetlb room: %s", why);
    return unit_finish("test_limits");
}
