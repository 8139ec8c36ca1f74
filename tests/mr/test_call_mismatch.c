/*
 * test_call_mismatch - ranks that make different world collective calls at
 * the same point (gas_barrier, gas_finalize, gas_malloc, gas_free) all fail
 * with GAS_ERR_INVALID naming the other call, nothing is done, and the job
 * goes on: the arrays stay usable and a rank whose gas_finalize was refused
 * is still initialised.  Before, gas_finalize on one rank against gas_malloc
 * on the others finalized that rank and left the others waiting until
 * GAS_TIMEOUT, and gas_barrier against gas_malloc or gas_free succeeded on
 * the barrier's side.
 *
 * Each case: ranks in `odd` (one rank, rotating) make call A, the others
 * call B; every rank must get GAS_ERR_INVALID whose message names the call
 * the other side made.  Then every rank checks a put/get round trip through
 * an array allocated before, and one matching barrier.
 */
#include "check.h"

enum call { C_BARRIER, C_FINALIZE, C_MALLOC, C_FREE, C_MALLOC_OTHER };

static const char *const names[] = {"gas_barrier", "gas_finalize", "gas_malloc", "gas_free",
                                    "gas_malloc"};
static gas_ptr_t arr, spare;

/* The last error names rank 0 and another rank as the pair whose arguments differ
 * (rank 0 passed other arguments than every other rank). */
static void check_named_pair(const char *what)
{
    const char *m = strstr(gas_last_error(), "(rank ");
    unsigned a = 0, b = 0;
    CHECK(m && sscanf(m, "(rank %u's differ from rank %u's)", &a, &b) == 2 &&
              (a == 0) != (b == 0) && a < (unsigned)t_nranks && b < (unsigned)t_nranks,
          "%s: the error does not name rank 0 and another rank: %s", what, gas_last_error());
}

static gas_status_t make_call(enum call c)
{
    gas_ptr_t p = GAS_NULL;
    gas_status_t st;
    switch (c) {
    case C_BARRIER:
        return gas_barrier();
    case C_FINALIZE:
        return gas_finalize();
    case C_MALLOC:
        st = gas_malloc(4096, &p);
        break;
    case C_MALLOC_OTHER:
        st = gas_malloc(8192, &p);
        break;
    default:
        return gas_free(spare);
    }
    if (st == GAS_OK)
        FAIL("gas_malloc succeeded although the ranks made different calls");
    return st;
}

/* The array allocated before still works: a put to the next rank and a get back. */
static void check_still_usable(int round)
{
    int next = (t_rank + 1) % t_nranks;
    uint64_t v = (uint64_t)round * 1000 + (uint64_t)t_rank, got = 0;
    gas_ptr_t p = GAS_NULL;
    MUST(gas_ptr_add(arr, (uint64_t)next * 64 + 8 * (uint64_t)(round % 8), &p));
    CHECK_OK(gas_put(p, &v, 8));
    CHECK_OK(gas_get(&got, p, 8));
    CHECK(got == v, "round %d: read %" PRIu64 " back, wrote %" PRIu64, round, got, v);
    CHECK(gas_initialized(), "round %d: no longer initialised", round);
}

int main(void)
{
    test_begin("call_mismatch");
    if (t_nranks < 2) {
        if (t_rank == 0)
            test_note("skipped: needs 2 ranks or more");
        gas_finalize();
        return 77;
    }
    MUST(gas_malloc(64 * (size_t)t_nranks, &arr));
    MUST(gas_malloc(64, &spare));
    static const enum call cases[][2] = {
        {C_FINALIZE, C_MALLOC}, {C_MALLOC, C_FINALIZE}, {C_FINALIZE, C_BARRIER},
        {C_BARRIER, C_FINALIZE}, {C_BARRIER, C_MALLOC}, {C_MALLOC, C_BARRIER},
        {C_BARRIER, C_FREE},     {C_FREE, C_BARRIER},   {C_FINALIZE, C_FREE},
        {C_MALLOC, C_FREE},
    };
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < ncases; i++) {
        int odd = i % t_nranks;
        enum call mine = cases[i][t_rank == odd ? 0 : 1], theirs = cases[i][t_rank == odd ? 1 : 0];
        gas_status_t st = make_call(mine);
        const char *msg = gas_last_error();
        CHECK(st == GAS_ERR_INVALID, "case %d: %s returned %d (%s) while rank(s) made %s; want "
              "GAS_ERR_INVALID", i, names[mine], (int)st, gas_strerror(st), names[theirs]);
        CHECK(strstr(msg, names[mine]) && strstr(msg, names[theirs]) &&
                  strstr(msg, "another rank called"),
              "case %d: the error of %s does not name %s: \"%s\"", i, names[mine], names[theirs],
              msg);
        check_still_usable(i);
        CHECK_OK(gas_barrier());
    }
    /* The same call with other arguments is still told as such. */
    gas_status_t st = make_call(t_rank == 0 ? C_MALLOC : C_MALLOC_OTHER);
    CHECK(st == GAS_ERR_INVALID && strstr(gas_last_error(), "different arguments"),
          "gas_malloc with other sizes: %d (%s)", (int)st, gas_last_error());
    if (t_nranks > 1)
        check_named_pair("gas_malloc with other sizes");
    check_still_usable(ncases);
    /* gas_free of different arrays: refused everywhere, the odd one named, nothing freed */
    st = gas_free(t_rank == 0 ? spare : arr);
    CHECK(st == GAS_ERR_INVALID && strstr(gas_last_error(), "different pointers"),
          "gas_free of different arrays: %d (%s)", (int)st, gas_last_error());
    if (t_nranks > 1)
        check_named_pair("gas_free of different arrays");
    check_still_usable(ncases + 1);
    CHECK_OK(gas_free(spare));
    CHECK_OK(gas_free(arr));
    return test_end();
}
