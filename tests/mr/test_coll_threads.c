/*
 * test_coll_threads - a second thread of a rank that calls a collective on
 * a team while another thread of that rank is inside one on the same team
 * fails at once with GAS_ERR_INVALID naming the call, the rank, the team and
 * the cause, and disturbs nothing: the first call completes with the right
 * sum, and the team's later calls are right too.  Before, the second call
 * went ahead: two calls of one rank interleaved on the team (gas.h forbids
 * it), which hung or gave wrong sums without a word.
 *
 * Rank 0's thread A calls gas_allreduce on the world team.  The other ranks
 * join only once rank 0 signals them, so A stays inside its call meanwhile.
 * Thread B first waits until A holds the team: it calls
 * gas_team_destroy(GAS_TEAM_WORLD), which does nothing whether or not it
 * gets in (the world team cannot be destroyed), until that fails for the
 * other thread.  Then B's gas_allreduce, gas_allreduce_nb, gas_broadcast,
 * gas_team_split_strided, gas_barrier, gas_malloc and gas_finalize on the
 * world must fail that way, and B signals the others.  GAS_ERRORS=return.
 */
#include "check.h"

#include <pthread.h>

#define OTHER_THREAD "another thread of this rank is inside a collective call on"

static gas_ptr_t go;            /* one word per rank: rank 0 says "join now" */
static gas_team_t team;         /* the world */
static int64_t a_sum;
static gas_status_t a_status;

static void *thread_a(void *arg)
{
    int64_t v = 1;
    (void)arg;
    /* The main thread's probe (wait_held) holds the team for a moment itself: A
     * refused for it just tries again (gas_last_error is per thread). */
    do
        a_status = gas_allreduce(team, &a_sum, &v, 1, GAS_INT64, GAS_OP_SUM);
    while (a_status == GAS_ERR_INVALID && strstr(gas_last_error(), OTHER_THREAD));
    return NULL;
}

/* Wait (a bounded number of tries) until thread A holds the team: 1 when it does. */
static int wait_held(void)
{
    for (int i = 0; i < 200000; i++) {
        /* The world team cannot be destroyed: this call does nothing either way. */
        gas_status_t st = gas_team_destroy(GAS_TEAM_WORLD);
        if (st == GAS_ERR_INVALID && strstr(gas_last_error(), OTHER_THREAD))
            return 1;
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* call: B's call on the team failed for the other thread, naming itself, the rank and the team. */
static void check_refused(const char *call, gas_status_t st, const char *team_words)
{
    const char *msg = gas_last_error();
    char rank_words[32];
    snprintf(rank_words, sizeof rank_words, "rank %d", t_rank);
    CHECK(st == GAS_ERR_INVALID && strstr(msg, OTHER_THREAD) && strstr(msg, call) &&
              strstr(msg, rank_words) && strstr(msg, team_words),
          "%s from a second thread while the first is in gas_allreduce: %d (%s), \"%s\"", call,
          (int)st, gas_strerror(st), msg);
}

static void one_round(int round)
{
    int P = t_nranks;
    gas_ptr_t me;
    MUST(gas_ptr_add(go, (uint64_t)t_rank * 8, &me));
    uint64_t *mine = gas_ptr_local(me);
    if (t_rank == 0) {
        pthread_t a;
        if (pthread_create(&a, NULL, thread_a, NULL) != 0)
            test_die("pthread_create");
        int held = wait_held();
        CHECK(held, "round %d: thread A's gas_allreduce never held the team (a second "
              "thread's calls were let in)", round);
        if (held) {
            const char *tw = "the world team";
            int64_t v = 100, out = 0;
            gas_handle_t h = (gas_handle_t)(uintptr_t)0x5a5a5a50; /* a refusal must clear it */
            gas_team_t sub = GAS_TEAM_NULL;
            gas_ptr_t arr = GAS_NULL;
            check_refused("gas_allreduce", gas_allreduce(team, &out, &v, 1, GAS_INT64,
                                                         GAS_OP_SUM), tw);
            check_refused("gas_allreduce_nb", gas_allreduce_nb(team, &out, &v, 1, GAS_INT64,
                                                               GAS_OP_SUM, &h), tw);
            CHECK(h == GAS_HANDLE_NULL, "a refused gas_allreduce_nb gave a handle");
            check_refused("gas_broadcast", gas_broadcast(team, &out, 1, GAS_INT64, 0), tw);
            check_refused("gas_team_split_strided",
                          gas_team_split_strided(team, 0, 1, t_nranks, &sub), tw);
            check_refused("gas_barrier", gas_barrier(), tw);
            check_refused("gas_malloc", gas_malloc(64, &arr), tw);
            /* Refused, and the rank stays initialised (before: its barrier counted
             * this rank twice, and rank 0 could then not finalize) */
            check_refused("gas_finalize", gas_finalize(), tw);
            CHECK(gas_initialized(), "a refused gas_finalize finalized the rank");
        }
        /* Now the others may join A's call. */
        for (int r = 1; r < P; r++) {
            gas_ptr_t w;
            MUST(gas_ptr_add(go, (uint64_t)r * 8, &w));
            MUST(gas_atomic_add_u64(w, 1));
        }
        pthread_join(a, NULL);
    } else {
        MUST(gas_wait_until_u64(mine, GAS_CMP_GE, (uint64_t)round + 1));
        int64_t v = 1;
        a_status = gas_allreduce(team, &a_sum, &v, 1, GAS_INT64, GAS_OP_SUM);
    }
    CHECK(a_status == GAS_OK && a_sum == P, "round %d: the first thread's gas_allreduce: %d "
          "(%s), sum %lld, want %d", round, (int)a_status, gas_strerror(a_status),
          (long long)a_sum, P);
    /* The refused calls changed nothing: the team's next calls are right. */
    for (int i = 0; i < 3; i++) {
        int64_t v = t_rank + 1, sum = 0;
        CHECK_OK(gas_allreduce(team, &sum, &v, 1, GAS_INT64, GAS_OP_SUM));
        CHECK(sum == (int64_t)P * (P + 1) / 2, "round %d: allreduce %d after: %lld, want %d",
              round, i, (long long)sum, P * (P + 1) / 2);
    }
}

int main(void)
{
    test_begin("coll_threads");
    MUST(gas_malloc(8 * (size_t)t_nranks, &go));
    MUST(gas_barrier());
    team = GAS_TEAM_WORLD;
    one_round(0);
    one_round(1);
    CHECK_OK(gas_free(go));
    return test_end();
}
