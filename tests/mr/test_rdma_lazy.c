/*
 * test_rdma_lazy.c - the rdma upgrade is lazy (GAS_TRANSPORT=rdma,
 * GAS_RDMA_DEVICE=sim): right after gas_init no peer of any rank is on RC
 * (gas_init's own traffic reaches every rank and must not connect them);
 * gas_malloc's barrier upgrades at most the ~log2(n) peers it talks to;
 * then rank 0 puts to one peer still on udp: that peer, and no other, is
 * upgraded, after GAS_RDMA_UPGRADE_AFTER operations (argument: that value,
 * default 1; with 4 or more ranks, to a peer the barrier never wrote to,
 * the operations before it are checked to stay on udp; all must land).
 * Only a rank's own operations make its side of a pair READY, so what the
 * other ranks do meanwhile cannot change rank 0's counts.
 */
#include "check.h"

/* Peers of this rank whose route is "rc"; with set given, marks them there.
 * A handshake under way ("connecting": its REP comes back over udp) is
 * waited for first, up to 5 s, so the answer does not change by itself. */
static int rc_peers(char *set)
{
    for (int tries = 0, busy = 1; busy && tries < 5000; tries++) {
        busy = 0;
        for (int r = 0; r < t_nranks && !busy; r++) {
            gas_peer_stats_t st;
            busy = r != t_rank && gas_peer_stats(r, &st) == GAS_OK &&
                   strcmp(st.route, "connecting") == 0;
        }
        if (busy) {
            (void)gas_progress();
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    int n = 0;
    for (int r = 0; r < t_nranks; r++) {
        if (r == t_rank)
            continue;
        gas_peer_stats_t st;
        CHECK_OK(gas_peer_stats(r, &st));
        int rc = strcmp(st.route, "rc") == 0;
        if (set)
            set[r] = (char)rc;
        n += rc;
    }
    return n;
}

static unsigned upgraded(void)
{
    gas_peer_stats_t tot;
    CHECK_OK(gas_peer_stats(t_rank, &tot));
    return tot.upgraded_peers;
}

int main(int argc, char **argv)
{
    test_begin("rdma_lazy");
    int after = argc > 1 ? atoi(argv[1]) : 1;
    CHECK(after >= 1, "usage: test_rdma_lazy [GAS_RDMA_UPGRADE_AFTER]");
    /* before anything of the program's: nobody upgraded */
    CHECK(upgraded() == 0, "%u peers upgraded right after gas_init", upgraded());
    CHECK(rc_peers(NULL) == 0, "%d peers on rc right after gas_init", rc_peers(NULL));

    gas_ptr_t arr;
    MUST(gas_malloc(64 * (size_t)t_nranks, &arr));
    char *before = test_xmalloc((size_t)t_nranks);
    int nb = rc_peers(before);
    int log2n = 0;
    while ((1 << log2n) < t_nranks)
        log2n++;
    /* with GAS_RDMA_UPGRADE_AFTER above 1 one barrier is not enough */
    CHECK(nb <= (after == 1 ? log2n : 0), "%d peers on rc after one barrier (at most %d)", nb,
          after == 1 ? log2n : 0);
    CHECK(upgraded() == (unsigned)nb, "upgraded_peers %u, but %d routes are rc", upgraded(), nb);
    test_note("after gas_malloc: %d of %d peers on rc", nb, t_nranks - 1);

    if (t_rank == 0) {
        /* rather a rank the world barrier (dissemination: rank 0 sends to
         * 1, 2, 4, ...) never wrote to, whose operation count is then ours */
        int target = -1, strict = 0;
        for (int pass = 0; pass < 2 && target < 0; pass++)
            for (int r = t_nranks - 1; r > 0 && target < 0; r--)
                if (!before[r] && (pass == 1 || (r & (r - 1)) != 0)) {
                    target = r;
                    strict = pass == 0;
                }
        if (target < 0) {
            test_note("every peer already on rc (%d ranks): nothing left to upgrade", t_nranks);
        } else {
            for (int i = 1; i <= after; i++) {
                uint64_t v = 1000u + (uint64_t)i;
                CHECK_OK(gas_put(test_at(arr, (uint64_t)target * 64 + (uint64_t)i % 8 * 8), &v,
                                 8));
                CHECK_OK(gas_quiet());
                gas_peer_stats_t st;
                CHECK_OK(gas_peer_stats(target, &st));
                if (i < after && strict)
                    CHECK(strcmp(st.route, "rc") != 0, "rank %d on rc after %d of %d operations",
                          target, i, after);
            }
            char *now = test_xmalloc((size_t)t_nranks);
            rc_peers(now);
            CHECK(now[target], "rank %d not on rc after %d puts", target, after);
            for (int r = 1; r < t_nranks; r++)
                CHECK(r == target || now[r] == before[r], "rank %d's route changed (%d -> %d) "
                      "though only rank %d was written", r, before[r], now[r], target);
            CHECK(upgraded() == (unsigned)nb + 1, "upgraded_peers %u, expected %d", upgraded(),
                  nb + 1);
            test_note("rank %d upgraded by the program's puts; %u peers upgraded", target,
                      upgraded());
            free(now);
        }
    }
    MUST(gas_barrier());
    /* what was written over udp and then RC landed */
    if (t_rank > 0 && t_nranks > 1) {
        const uint64_t *mine = gas_ptr_local(test_at(arr, (uint64_t)t_rank * 64));
        int was_target = 0;
        for (int i = 1; i <= after; i++)
            if (mine[i % 8] != 0) {
                was_target = 1;
                break;
            }
        for (int i = 1; was_target && i <= after; i++) {
            uint64_t want = 0;
            for (int j = i; j <= after; j++) /* the last put to each word wins */
                if (j % 8 == i % 8)
                    want = 1000u + (uint64_t)j;
            CHECK(mine[i % 8] == want, "word %d: %llu, expected %llu", i % 8,
                  (unsigned long long)mine[i % 8], (unsigned long long)want);
        }
    }
    free(before);
    MUST(gas_barrier());
    return test_end();
}
