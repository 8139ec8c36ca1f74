/*
 * init.c - gas_init / gas_finalize / gas_abort: the one place that starts the
 * layers in order (config, bootstrap, segment, transports, gas/, arenas) and
 * stops them in reverse.
 */
#include <gas.h>

#include "alloc/arena.h"
#include "alloc/fault.h"
#include "alloc/limits.h"
#include "alloc/place.h"
#include "alloc/segment.h"
#include "boot.h"
#include "boot_wire.h"
#include "config.h"
#include "error.h"
#include "gas/internal.h"
#include "gate.h"
#include "log.h"
#include "node.h"
#include "transport/transport.h"
#include "wait.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static const struct gas_rt_boot *boot;

static void abort_through_launcher(int code, const char *msg)
{
    if (boot && boot->abort)
        boot->abort(code, msg);
}

/* A child that fork() makes shares the parent's segment (a MAP_SHARED file)
 * and allocator state in it: calls from the child would corrupt the parent's
 * bookkeeping, so every call there fails (gas_gs_phase_why).  The launcher's
 * connection is the parent's too: the child never writes to it. */
static void forked_child(void)
{
    if (gas_gs_phase() == GAS_GS_UP) {
        gas_gs_set_phase(GAS_GS_CHILD);
        gas_rt_abort_hook = NULL; /* an error that aborts ends the child, not the job */
    }
}

GAS_EXPORT gas_status_t gas_init(void)
{
    if (gas_gs_phase() == GAS_GS_UP)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "libgas is already initialised");
    if (gas_gs_phase() == GAS_GS_DOWN)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "libgas cannot be initialised again after gas_finalize");
    if (gas_gs_phase() == GAS_GS_CHILD)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "this is a child that fork() made of a process that uses libgas: "
                            "its segment and peers are the parent's (exec a new program instead)");
    /* Until the bootstrap opens, the launcher's word names this rank in
     * messages (a bad GAS_* setting is reported by every rank). */
    gas_rt_log_rank_ = gas_rt_boot_gasrun_rank();
    gas_status_t st = gas_rt_config_load();
    if (st != GAS_OK)
        return st;
    gas_rt_error_set_abort(gas_rt_config_enum(GAS_CFG_ERRORS) == 0);
    if ((st = gas_rt_boot_open(&boot)) != GAS_OK)
        return st;
    gas_rt_log_rank_ = boot->rank;
    gas_rt_abort_hook = abort_through_launcher;
    gas_rt_gate_setup();

    /* The segment: limits and placement first, so that every error comes before any mapping. */
    struct gas_al_segment seg = {.fd = -1};
    struct gas_al_limits limits;
    struct gas_al_place place;
    uint64_t size = 0;
    unsigned rbits, obits;
    gas_gs_split_compute((uint64_t)boot->nranks, &rbits, &obits);
    const char *dir = gas_rt_config_str(GAS_CFG_SEGMENT_DIR);
    if ((st = gas_al_limits_read(dir, &limits)) != GAS_OK ||
        (st = gas_al_place_plan(gas_rt_config_str(GAS_CFG_NUMA),
                                gas_rt_config_enum(GAS_CFG_HUGEPAGES), &limits, &place)) != GAS_OK ||
        (st = gas_al_segment_size_plan(&limits, gas_rt_config_size(GAS_CFG_SEGMENT_SIZE),
                                       boot->local_size, obits >= 64 ? UINT64_MAX : 1ull << obits,
                                       place.page, boot->local_rank == 0, &size)) != GAS_OK)
        goto err_boot;
    char backing[600];
    gas_al_limits_describe(&limits, place.hugetlb, backing, sizeof backing);
    if (gas_al_fault_setup(boot->rank, backing, boot->local_size + 1) != 0) {
        st = gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the table of mappings");
        goto err_boot;
    }
    struct gas_al_seg_opts so = {.rank = boot->rank, .job_id = boot->job_id,
                                 .job_key = boot->job_key, .size = size, .dir = dir,
                                 .place = &place};
    if ((st = gas_al_segment_create(&so, &seg)) != GAS_OK)
        goto err_fault;
    gas_tl_env_t env = {
        .rank = boot->rank, .nranks = boot->nranks, .local_rank = boot->local_rank,
        .local_size = boot->local_size, .job_key = boot->job_key, .node_id = gas_rt_node_id(),
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
    int prefault = (int)gas_rt_config_size(GAS_CFG_PREFAULT);
    if ((st = gas_gs_start(boot->rank, boot->nranks, &seg, &limits, &place, prefault)) != GAS_OK)
        goto err_transport;
    struct gas_al_arena_cfg ac = {.seg = &gas_gs.seg, .space = &gas_gs.space,
                                  .limits = &gas_gs.limits, .place = &gas_gs.place,
                                  .per_node = (int)gas_rt_config_size(GAS_CFG_ARENAS),
                                  .prefault = prefault};
    if ((st = gas_al_arenas_start(&ac)) != GAS_OK) {
        st = gas_rt_error(st, "gas_init",
                          "cannot create the gas_alloc arenas (jemalloc) in the segment%s",
                          st == GAS_ERR_NOSPACE ? ": it is too small, raise GAS_SEGMENT_SIZE"
                          : st == GAS_ERR_NOMEM ? ": no memory for their metadata (GAS_PREFAULT=y backs it at once)"
                                                : "");
        goto err_gas;
    }
    /* A first guess, for gas_init's own waits: more ranks on this node than
     * CPUs this rank may run on.  Corrected below once the CPU keys are known. */
    int oversubscribed = boot->local_size > gas_rt_usable_cpus();
    gas_rt_wait_setup(&gas_al_seg_hdr(seg.base)->doorbell, seg.base, seg.size,
                      oversubscribed ? 0 : gas_rt_config_ns(GAS_CFG_WAIT_SPIN),
                      gas_rt_config_ns(GAS_CFG_TIMEOUT), gas_rt_config_ns(GAS_CFG_STALL_WARN));
    gas_rt_wait_set_slice(gas_rt_config_ns(GAS_CFG_WAIT_SLICE));
    /* Every rank's address is published before anyone may contact it. */
    if ((st = boot->barrier()) != GAS_OK || (st = gas_gs_agree()) != GAS_OK)
        goto err_arenas;
    /* Teams: the scratch slots come from the heap (collective), then the node table. */
    int cpu_sharers = 1, shares = 0;
    if ((st = gas_co_start()) != GAS_OK ||
        (st = gas_co_start_nodes(&cpu_sharers, &shares)) != GAS_OK)
        goto err_arenas;
    /* Now that every rank's CPU key (machine boot and affinity mask) is known:
     * this rank shares its CPUs when more ranks have its key than it has CPUs.
     * Ranks bound one per core (gasrun --bind core) hold a CPU each and spin
     * (the first guess counted every rank of the node against one CPU, and
     * every wait slept: 4x the latency of small collectives); ranks in other
     * network namespaces or containers on this machine count too. */
    if (shares != oversubscribed) {
        oversubscribed = shares;
        gas_rt_wait_set_spin(shares ? 0 : gas_rt_config_ns(GAS_CFG_WAIT_SPIN));
    }
    gas_tl_cpu_sharers(cpu_sharers);
    gas_tl_init_done();
    gas_log_info("init", "rank %d of %d up (bootstrap %s, segment %llu bytes, NUMA: %s; huge "
                 "pages: %s%s)", boot->rank, boot->nranks, boot->name,
                 (unsigned long long)seg.size, place.numa_desc, place.huge_desc,
                 oversubscribed ? "; oversubscribed: waits sleep at once" : "");
    static int atfork_set; /* gas_init succeeds once per process */
    if (!atfork_set)
        atfork_set = pthread_atfork(NULL, NULL, forked_child) == 0;
    return GAS_OK;

err_arenas:
    gas_al_arenas_stop();
err_gas:
    gas_gs_stop();
    gas_gs_set_phase(GAS_GS_NEVER);
err_transport:
    gas_tl_fini();
err_segment:
    gas_al_segment_destroy(&seg);
err_fault:
    gas_al_fault_teardown();
err_boot:
    boot->fini();
    gas_rt_abort_hook = NULL;
    boot = NULL;
    return st;
}

/* Tell the launcher, once, that this rank's gas_finalize failed (boot_wire.h). */
static void say_fini_failed(gas_status_t st)
{
    static int said;
    int32_t v = (int32_t)st;
    if (!said && boot != NULL && boot->kv_put(GAS_BOOT_KEY_FINI_FAILED, &v, sizeof v) == GAS_OK)
        said = 1;
}

GAS_EXPORT gas_status_t gas_finalize(void)
{
    gas_status_t st = gas_gs_check("gas_finalize");
    if (st != GAS_OK)
        return st;
    /* A world collective call, refused while another thread of this rank is in
     * one (its barrier would count this rank twice); held to the end. */
    if ((st = gas_co_call_enter("gas_finalize", gas_team_world_)) != GAS_OK)
        return st;
    int began = gas_rt_call_begin();   /* its waits (barrier, transports' ends) in one GAS_TIMEOUT */
    st = gas_gs_barrier_call("gas_finalize", GAS_GS_CALL_FINALIZE, 0, NULL);
    if (st == GAS_ERR_INVALID || st == GAS_ERR_TIMEOUT) {
        gas_rt_call_end(began);
        gas_co_call_leave(gas_team_world_, st);
        say_fini_failed(st);
        return st; /* another call elsewhere, or late ranks: still initialised, may retry */
    }
    if (st == GAS_OK)
        st = gas_co_check_ends("gas_finalize");
    if (gas_rt_config_size(GAS_CFG_STATS))
        gas_tl_stats_print();
    if (*gas_rt_config_str(GAS_CFG_STATS_FILE))
        gas_tl_stats_save(gas_rt_config_str(GAS_CFG_STATS_FILE), gas_rank(), gas_nranks());
    /* Other threads' calls: those under way complete or fail with
     * GAS_ERR_NOT_INIT (their waits are woken) before anything is released,
     * and later ones are refused (gate.h). */
    gas_rt_gate_close();
    struct gas_al_segment seg = gas_gs.seg;
    gas_al_arenas_stop();
    gas_tl_fini();
    gas_rt_progress_reset();
    gas_gs_stop();
    gas_rt_wait_setup(NULL, NULL, 0, 0, 0, 0);
    gas_al_segment_destroy(&seg);
    gas_al_fault_teardown();
    boot->fini();
    gas_rt_abort_hook = NULL;
    boot = NULL;
    gas_rt_call_end(began);
    return gas_gs_sync_report("gas_finalize", "gas_finalize completed: this rank left the job",
                              st);
}

GAS_EXPORT void gas_abort(int code, const char *msg)
{
    gas_rt_abort(code, msg);
}
