/* stats.c - per-peer counters of the paths (gas_peer_stats). */
#include "internal.h"

static gas_status_t api_peer_stats(int rank, gas_peer_stats_t *stats_p)
{
    gas_status_t st = gas_gs_check("gas_peer_stats");
    if (st != GAS_OK)
        return st;
    if (rank < 0 || rank >= gas_gs.nranks)
        return gas_rt_error(GAS_ERR_RANK, "gas_peer_stats", "rank %d is not in the job of %d ranks",
                            rank, gas_gs.nranks);
    if (stats_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, "gas_peer_stats", "stats_p is NULL");
    gas_peer_stats_t s;
    if ((st = gas_tl_stats(rank, &s)) != GAS_OK)
        return st;
    *stats_p = s;
    return GAS_OK;
}

GAS_EXPORT gas_status_t gas_peer_stats(int rank, gas_peer_stats_t *stats_p)
{
    GAS_GS_GATED("gas_peer_stats", api_peer_stats(rank, stats_p));
}
