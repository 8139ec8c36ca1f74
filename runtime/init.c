/*
 * init.c - gas_init / gas_finalize / gas_abort: the one place that starts the
 * layers in order (config, bootstrap, segment, transports, gas/) and stops
 * them in reverse.
 */
#include <gas.h>

#include "alloc/segment.h"
#include "boot.h"
#include "config.h"
#include "error.h"
#include "gas/internal.h"
#include "log.h"
#include "node.h"
#include "transport/transport.h"
#include "wait.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

static const struct gas_rt_boot *boot;

static void abort_through_launcher(int code, const char *msg)
{
    if (boot && boot->abort)
        boot->abort(code, msg);
}

/* CPUs this process may run on. */
static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return gas_rt_node_cpus();
}

GAS_EXPORT gas_status_t gas_init(void)
{
    if (gas_gs.phase == GAS_GS_UP)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "libgas is already initialised");
    if (gas_gs.phase == GAS_GS_DOWN)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "libgas cannot be initialised again after gas_finalize");
    gas_status_t st = gas_rt_config_load();
    if (st != GAS_OK)
        return st;
    gas_rt_error_set_abort(gas_rt_config_enum(GAS_CFG_ERRORS) == 0);
    if ((st = gas_rt_boot_open(&boot)) != GAS_OK)
        return st;
    gas_rt_log_rank_ = boot->rank;
    gas_rt_abort_hook = abort_through_launcher;

    struct gas_al_segment seg = {.fd = -1};
    if ((st = gas_al_segment_create(boot->rank, gas_rt_config_size(GAS_CFG_SEGMENT_SIZE), &seg)) != GAS_OK)
        goto err_boot;
    gas_tl_env_t env = {
        .rank = boot->rank, .nranks = boot->nranks, .local_rank = boot->local_rank,
        .job_key = boot->job_key, .node_id = gas_rt_node_id(),
        .seg_base = seg.base, .seg_size = seg.size, .seg_fd = seg.fd,
    };
    int forced = 0;
    switch (gas_rt_config_enum(GAS_CFG_TRANSPORT)) {
    case 1: forced = GAS_TL_SHM; break;
    case 2: forced = GAS_TL_UDP; break;
    case 3: forced = GAS_TL_RDMA; break;
    default: break;
    }
    if ((st = gas_tl_init(boot, &env, forced)) != GAS_OK)
        goto err_segment;
    if ((st = gas_gs_start(boot->rank, boot->nranks, &seg)) != GAS_OK)
        goto err_transport;
    int oversubscribed = boot->local_size > usable_cpus();
    gas_rt_wait_setup(&gas_al_seg_hdr(seg.base)->doorbell, seg.base, seg.size,
                      oversubscribed ? 0 : gas_rt_config_ns(GAS_CFG_WAIT_SPIN),
                      gas_rt_config_ns(GAS_CFG_TIMEOUT), gas_rt_config_ns(GAS_CFG_STALL_WARN));
    /* Every rank's address is published before anyone may contact it. */
    if ((st = boot->barrier()) != GAS_OK)
        goto err_gas;
    gas_log_info("init", "rank %d of %d up (bootstrap %s, segment %llu bytes%s)", boot->rank,
                 boot->nranks, boot->name, (unsigned long long)seg.size,
                 oversubscribed ? ", oversubscribed: waits sleep at once" : "");
    return GAS_OK;

err_gas:
    gas_gs_stop();
    gas_gs.phase = GAS_GS_NEVER;
err_transport:
    gas_tl_fini();
err_segment:
    gas_al_segment_destroy(&seg);
err_boot:
    boot->fini();
    gas_rt_abort_hook = NULL;
    boot = NULL;
    return st;
}

GAS_EXPORT gas_status_t gas_finalize(void)
{
    gas_status_t st = gas_gs_check("gas_finalize");
    if (st != GAS_OK)
        return st;
    st = gas_barrier();
    if (gas_rt_config_size(GAS_CFG_STATS))
        gas_tl_stats_print();
    struct gas_al_segment seg = gas_gs.seg;
    gas_tl_fini();
    gas_rt_progress_reset();
    gas_gs_stop();
    gas_rt_wait_setup(NULL, NULL, 0, 0, 0, 0);
    gas_al_segment_destroy(&seg);
    boot->fini();
    gas_rt_abort_hook = NULL;
    boot = NULL;
    return st;
}

GAS_EXPORT void gas_abort(int code, const char *msg)
{
    gas_rt_abort(code, msg);
}
