/*
 * test_coll_stress - non-blocking collectives in flight on two teams while
 * other threads of the same ranks do RMA, atomics, put_signal and quiet to
 * the same peers.
 *
 * Every wait of every thread drives the runtime's progress, which runs the
 * collective engine's queued schedules (an issuing progress hook): so the
 * worker threads' gets, fetching atomics, quiets and gas_wait_until calls
 * pump the main thread's collectives, from inside the transports' waits,
 * while the main thread starts more of them.  A lock held across such a
 * wait that an issued operation takes again (the pattern of the rdma route
 * lock fixed before), or team state that the starting thread and a pumping
 * thread both change, hangs the job or gives wrong results here.
 *
 * Main thread, ITERS rounds, two in flight at a time: gas_allreduce_nb (sum)
 * on the world team, gas_allreduce_nb (max) and gas_broadcast_nb (root
 * rotating) on a team of every rank in reverse order, a gas_team_barrier_nb
 * on the world now and then, of sizes from one element to several chunks;
 * completed by gas_wait in varying order or by gas_test loops; every third
 * round a blocking gas_allreduce on the reversed team as well; every fifth a
 * new team split off, used and held (40 at most, then the oldest destroyed:
 * churn_teams).  Each result is compared with the value computed locally.
 *
 * NWORKERS worker threads per rank, WITERS rounds each: put_signal into the
 * right neighbour's inbox (worker w of rank r writes only its own slot
 * there), wait with gas_wait_until for the left neighbour's signal and check
 * its payload; put (blocking or _nbi + gas_quiet) and get back a word of its
 * own at the right neighbour; fetch-add a counter of its own there (every old
 * value checked).  At the end each rank checks the signal counts it got.
 *
 * Run over shm and GAS_TRANSPORT=udp with GAS_PROGRESS=thread and poll, and
 * with GAS_TEST_COLL_PUMP_DELAY, which makes a worker that ends the last
 * queued schedule of a team sleep before it clears the queue's tail: a start
 * that appended to the queue without holding the team's executor was lost
 * there (its gas_wait then timed out; with TEST_ITERS=3000, in most runs).
 */
#include "check.h"

#include <pthread.h>

#define ITERS 1000      /* main rounds (TEST_ITERS overrides) */
#define WITERS 2000
#define NWORKERS 2
#define SLOTS 8          /* payload slots per (sender, worker): > ranks - 1 */
#define MAXN 4096        /* int64 elements of the largest collective */

struct area {            /* one per rank, in the array below (indexed by sender rank) */
    uint64_t inbox[64][NWORKERS][SLOTS];
    uint64_t sig[64][NWORKERS];
    uint64_t word[64][NWORKERS];
    uint64_t ctr[64][NWORKERS];
};

static gas_ptr_t arr;    /* one struct area per rank */
static gas_team_t rev;   /* every rank, in reverse order */
static int me, P;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static long worker_failures;

static gas_ptr_t field(int rank, size_t off)
{
    gas_ptr_t p = GAS_NULL;
    gas_ptr_add(arr, (uint64_t)rank * sizeof(struct area) + off, &p);
    return p;
}

static struct area *mine(void)
{
    return gas_ptr_local(field(me, 0));
}

__attribute__((format(printf, 2, 3)))
static void worker_fail(int w, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&fail_lock);
    if (worker_failures++ < 10)
        fprintf(stderr, "[coll_stress rank %d worker %d] FAIL: %s (last error: \"%s\")\n", me, w,
                msg, gas_last_error());
    pthread_mutex_unlock(&fail_lock);
}

static uint64_t payload(int from, int w, long i)
{
    return ((uint64_t)from << 48) ^ ((uint64_t)w << 40) ^ (uint64_t)(i + 1) * 0x9e3779b1u;
}

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    int right = (me + 1) % P, left = (me + P - 1) % P;
    struct area *a = mine();
    test_rng_t r = rng_make(me * NWORKERS + w, 11);
    gas_status_t st;
    for (long i = 0; i < WITERS; i++) {
        /* put_signal into the right neighbour's inbox */
        uint64_t v = payload(me, w, i);
        gas_ptr_t slot = field(right, offsetof(struct area, inbox) +
                                          (((size_t)me * NWORKERS + (size_t)w) * SLOTS +
                                           (size_t)(i % SLOTS)) * 8);
        gas_ptr_t sig = field(right, offsetof(struct area, sig) +
                                         ((size_t)me * NWORKERS + (size_t)w) * 8);
        if ((st = gas_put_signal(slot, &v, 8, sig, 1, GAS_SIGNAL_ADD)) != GAS_OK)
            worker_fail(w, "round %ld: gas_put_signal: %d", i, (int)st);
        /* the left neighbour's signal for this round, and its payload */
        if ((st = gas_wait_until_u64(&a->sig[left][w], GAS_CMP_GE, (uint64_t)i + 1)) != GAS_OK) {
            worker_fail(w, "round %ld: gas_wait_until: %d", i, (int)st);
            break;
        }
        uint64_t got = __atomic_load_n(&a->inbox[left][w][i % SLOTS], __ATOMIC_ACQUIRE);
        if (got != payload(left, w, i))
            worker_fail(w, "round %ld: inbox from rank %d holds %" PRIx64 ", want %" PRIx64, i,
                        left, got, payload(left, w, i));
        /* a word of its own at the right neighbour: put, then get it back */
        gas_ptr_t word = field(right, offsetof(struct area, word) +
                                          ((size_t)me * NWORKERS + (size_t)w) * 8);
        uint64_t x = rng_next(&r), back = 0;
        if (rng_next(&r) & 1)
            st = gas_put(word, &x, 8);
        else if ((st = gas_put_nbi(word, &x, 8)) == GAS_OK)
            st = gas_quiet();
        if (st == GAS_OK)
            st = gas_get(&back, word, 8);
        if (st != GAS_OK || back != x)
            worker_fail(w, "round %ld: put/get at rank %d: %d, read %" PRIx64 " wrote %" PRIx64,
                        i, right, (int)st, back, x);
        /* a counter of its own there: every old value is known */
        uint64_t old = 0;
        gas_ptr_t ctr = field(right, offsetof(struct area, ctr) +
                                         ((size_t)me * NWORKERS + (size_t)w) * 8);
        if ((st = gas_atomic_fetch_add_u64(ctr, 1, &old)) != GAS_OK || old != (uint64_t)i)
            worker_fail(w, "round %ld: fetch_add at rank %d: %d, old %" PRIu64 ", want %ld", i,
                        right, (int)st, old, i);
        if ((i & 15) == 0 && (st = gas_quiet()) != GAS_OK)
            worker_fail(w, "round %ld: gas_quiet: %d", i, (int)st);
    }
    return NULL;
}

/* One round's buffers and handles; two rounds are in flight at a time. */
struct round {
    int it;
    size_t n;
    int64_t in_w[MAXN], out_w[MAXN], in_r[MAXN], out_r[MAXN], bc[MAXN];
    gas_handle_t hw, hr, hb, hbar;
};
static struct round rounds[2];

/* Complete h: gas_wait, or a gas_test loop (which ends in gas_wait, bounded by GAS_TIMEOUT,
 * after many tries: a schedule that never runs must fail the test, not hang it). */
static gas_status_t complete(gas_handle_t h, int by_test)
{
    for (long i = 0; by_test && i < 2000000; i++) {
        int done = 0;
        gas_status_t st = gas_test(h, &done);
        if (st != GAS_OK || done)
            return st;
    }
    return gas_wait(h);
}

static void round_start(struct round *r, int it)
{
    static const size_t sizes[] = {1, 3, 100, 700, 3000, MAXN};
    size_t n = sizes[it % (sizeof sizes / sizeof sizes[0])];
    int root = it % P;
    r->it = it;
    r->n = n;
    for (size_t k = 0; k < n; k++) {
        r->in_w[k] = (int64_t)(me + 1) * (it + 1) + (int64_t)k;
        r->in_r[k] = (int64_t)(me * 7 + it) % (P * 3) + (int64_t)k;
        r->bc[k] = gas_team_rank(rev) == root ? (int64_t)it * 1000003 + (int64_t)k : -1;
    }
    r->hw = r->hr = r->hb = r->hbar = GAS_HANDLE_NULL;
    CHECK_OK(gas_allreduce_nb(GAS_TEAM_WORLD, r->out_w, r->in_w, n, GAS_INT64, GAS_OP_SUM,
                              &r->hw));
    CHECK_OK(gas_allreduce_nb(rev, r->out_r, r->in_r, n, GAS_INT64, GAS_OP_MAX, &r->hr));
    CHECK_OK(gas_broadcast_nb(rev, r->bc, n, GAS_INT64, root, &r->hb));
    if (it % 4 == 1)
        CHECK_OK(gas_team_barrier_nb(GAS_TEAM_WORLD, &r->hbar));
}

static void round_finish(struct round *r)
{
    int it = r->it, by_test = it % 3 == 2;
    size_t n = r->n;
    if (it & 1) {
        CHECK_OK(complete(r->hb, by_test));
        CHECK_OK(complete(r->hr, by_test));
        CHECK_OK(complete(r->hw, by_test));
    } else {
        CHECK_OK(complete(r->hw, by_test));
        CHECK_OK(complete(r->hr, by_test));
        CHECK_OK(complete(r->hb, by_test));
    }
    CHECK_OK(complete(r->hbar, by_test));
    long bad = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t sum = (int64_t)(it + 1) * P * (P + 1) / 2 + (int64_t)P * (int64_t)k;
        int64_t mx = (int64_t)k - 1;
        for (int q = 0; q < P; q++) {
            int64_t c = (int64_t)(q * 7 + it) % (P * 3) + (int64_t)k;
            mx = c > mx ? c : mx;
        }
        bad += r->out_w[k] != sum || r->out_r[k] != mx ||
               r->bc[k] != (int64_t)it * 1000003 + (int64_t)k;
    }
    CHECK(bad == 0, "round %d (%zu elements): %ld elements wrong (first: sum %lld, max %lld, "
          "broadcast %lld)", it, n, bad, (long long)r->out_w[0], (long long)r->out_r[0],
          (long long)r->bc[0]);
}

/*
 * Teams made and destroyed while the workers' waits drive collective
 * progress (which walks this rank's live teams): every HOLD_EVERY rounds a
 * split of the world team, used once, kept until HELD are live (the list of
 * live teams grows past 16 and 32 and moves), then the oldest is destroyed.
 */
#define HOLD_EVERY 5
#define HELD 40
static gas_team_t held[HELD];
static int nheld, oldest;

static void churn_teams(int it)
{
    gas_team_t t;
    CHECK_OK(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, P, &t));
    int64_t v = 1, s = 0;
    CHECK_OK(gas_allreduce(t, &s, &v, 1, GAS_INT64, GAS_OP_SUM));
    CHECK(s == P, "round %d: allreduce on a fresh team gave %lld", it, (long long)s);
    if (nheld == HELD) {
        CHECK_OK(gas_team_destroy(held[oldest]));
        held[oldest] = t;
        oldest = (oldest + 1) % HELD;
    } else {
        held[nheld++] = t;
    }
}

/* Round it starts while round it - 1 is still in flight, then that one is finished. */
static void main_rounds(void)
{
    const char *e = getenv("TEST_ITERS");
    int iters = e && atoi(e) > 0 ? atoi(e) : ITERS;
    for (int it = 0; it <= iters; it++) {
        if (it % HOLD_EVERY == 0)
            churn_teams(it);
        if (it < iters)
            round_start(&rounds[it & 1], it);
        if (it > 0)
            round_finish(&rounds[(it - 1) & 1]);
        if (it % 3 == 0) {
            /* a blocking call completes the team's earlier ones first */
            int64_t v = me + 1, s = 0;
            CHECK_OK(gas_allreduce(rev, &s, &v, 1, GAS_INT64, GAS_OP_SUM));
            CHECK(s == (int64_t)P * (P + 1) / 2, "round %d: blocking allreduce gave %lld", it,
                  (long long)s);
        }
    }
}

int main(void)
{
    test_begin("coll_stress");
    me = t_rank;
    P = t_nranks;
    if (P > 64 || SLOTS <= P - 1)
        test_die("at most 8 ranks");
    MUST(gas_malloc(sizeof(struct area) * (size_t)P, &arr));
    MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, P - me, &rev));
    MUST(gas_barrier());
    pthread_t th[NWORKERS];
    for (int w = 0; w < NWORKERS; w++)
        if (pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w) != 0)
            test_die("pthread_create");
    main_rounds();
    for (int w = 0; w < NWORKERS; w++)
        pthread_join(th[w], NULL);
    t_failures += worker_failures;
    for (int i = 0; i < nheld; i++)
        CHECK_OK(gas_team_destroy(held[i]));
    CHECK_OK(gas_barrier());
    /* Every signal and every counter add arrived exactly once. */
    struct area *a = mine();
    int left = (me + P - 1) % P;
    for (int w = 0; w < NWORKERS; w++)
        CHECK(a->sig[left][w] == WITERS && a->ctr[left][w] == WITERS,
              "worker %d of rank %d: %" PRIu64 " signals and %" PRIu64 " adds arrived, want %d",
              w, left, a->sig[left][w], a->ctr[left][w], WITERS);
    CHECK_OK(gas_team_destroy(rev));
    CHECK_OK(gas_free(arr));
    return test_end();
}
