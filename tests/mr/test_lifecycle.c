/*
 * test_lifecycle - calls before gas_init and after gas_finalize (one process,
 * started without gasrun: a job of one rank).
 *
 *  - before gas_init: gas_initialized() == 0, gas_rank() == -1,
 *    gas_nranks() == 0, and every call returns GAS_ERR_NOT_INIT, with
 *    gas_last_error() naming it;
 *  - gas_init works (rank 0 of 1), a second gas_init returns GAS_ERR_INVALID
 *    and the job still works (malloc, put, get, atomic, barrier);
 *  - gas_finalize works; afterwards gas_initialized() == 0, gas_rank() == -1
 *    and every call returns GAS_ERR_NOT_INIT (gas_finalize included);
 *  - gas_init after gas_finalize returns an error instead of crashing.
 */
#include "check.h"

static void check_not_init(const char *when)
{
    uint64_t buf[2] = { 1, 2 }, res = 0;
    gas_ptr_t p = 12345, some = (gas_ptr_t)0x1000;
    gas_handle_t h = GAS_HANDLE_NULL;
    gas_layout_t l;
    int done = 0;
    static const uint64_t zero = 0;

    CHECK(gas_initialized() == 0, "%s: gas_initialized() = %d", when, gas_initialized());
    CHECK(gas_rank() == -1, "%s: gas_rank() = %d, expected -1", when, gas_rank());
    CHECK(gas_nranks() == 0, "%s: gas_nranks() = %d, expected 0", when, gas_nranks());

    CHECK_STATUS(gas_put(some, buf, 8), GAS_ERR_NOT_INIT);
    CHECK(strstr(gas_last_error(), "gas_put") != NULL, "%s: after gas_put failed, gas_last_error() is \"%s\"",
          when, gas_last_error());
    CHECK_STATUS(gas_progress(), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_get(buf, some, 8), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_put_nbi(some, buf, 8), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_get_nbi(buf, some, 8), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_put_nb(some, buf, 8, &h), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_get_nb(buf, some, 8, &h), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_iput(some, buf, 1, 1, 8, 1), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_iget(buf, some, 1, 1, 8, 1), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_malloc(64, &p), GAS_ERR_NOT_INIT);
    CHECK(strstr(gas_last_error(), "gas_malloc") != NULL, "%s: after gas_malloc failed, gas_last_error() is "
          "\"%s\"", when, gas_last_error());
    CHECK(p == 12345, "%s: a failed gas_malloc wrote its output", when);
    CHECK_STATUS(gas_malloc_dist(8, 8, GAS_DIST_CYCLIC, 1, &p), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_free(some), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_barrier(), GAS_ERR_NOT_INIT);
    CHECK(strstr(gas_last_error(), "gas_barrier") != NULL, "%s: after gas_barrier failed, gas_last_error() is "
          "\"%s\"", when, gas_last_error());
    CHECK_STATUS(gas_quiet(), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_fence(), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_amo(GAS_AMO_FETCH_ADD, 8, some, 1, 0, &res), GAS_ERR_NOT_INIT);
    CHECK(strstr(gas_last_error(), "gas_amo") != NULL, "%s: after gas_amo failed, gas_last_error() is \"%s\"",
          when, gas_last_error());
    CHECK_STATUS(gas_amo_nbi(GAS_AMO_ADD, 8, some, 1, 0, NULL), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_atomic_add_u64(some, 1), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_put_signal(some, buf, 8, some, 1, GAS_SIGNAL_SET), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_put_signal_nbi(some, buf, 8, some, 1, GAS_SIGNAL_ADD), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_wait_until_u64(&zero, GAS_CMP_EQ, 0), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_wait(GAS_HANDLE_NULL), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_test(GAS_HANDLE_NULL, &done), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_ptr_add(some, 8, &p), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_layout(some, &l), GAS_ERR_NOT_INIT);
    CHECK_STATUS(gas_coll_set_algorithm(GAS_COLL_ALLREDUCE, "ring"), GAS_ERR_NOT_INIT);
    CHECK(strstr(gas_last_error(), "GAS_COLL_") != NULL, "%s: gas_coll_set_algorithm's message "
          "does not point to GAS_COLL_<NAME>: %s", when, gas_last_error());
    CHECK(gas_ptr_local(some) == NULL, "%s: gas_ptr_local() is not NULL", when);
    /* these two work whatever the state */
    CHECK(gas_strerror(GAS_ERR_NOT_INIT) && gas_strerror(GAS_ERR_NOT_INIT)[0], "%s: gas_strerror", when);
    CHECK(gas_last_error() != NULL, "%s: gas_last_error() is NULL", when);
}

int main(void)
{
    test_name = "lifecycle";
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("GAS_ERRORS", "return", 0);
    if (getenv("GASRUN_BOOT_FD"))
        fprintf(stderr, "[lifecycle] note: started by gasrun; this test expects a job of one rank\n");

    check_not_init("before gas_init");

    gas_status_t st = gas_init();
    if (!CHECK(st == GAS_OK, "gas_init returned %d (%s): %s", (int)st, gas_strerror(st), gas_last_error()))
        return 1;
    t_rank = gas_rank();
    t_nranks = gas_nranks();
    CHECK(gas_initialized() == 1, "after gas_init: gas_initialized() = %d", gas_initialized());
    CHECK(t_rank == 0 && t_nranks == 1, "after gas_init without gasrun: rank %d of %d, expected 0 of 1", t_rank,
          t_nranks);

    CHECK_STATUS(gas_init(), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "gas_init") != NULL, "after a second gas_init, gas_last_error() is \"%s\"",
          gas_last_error());
    CHECK(gas_initialized() == 1 && gas_rank() == 0, "a second gas_init changed the state");

    /* the job works */
    gas_ptr_t a = GAS_NULL;
    if (CHECK_OK(gas_malloc(4096, &a))) {
        uint8_t out[100], in[100];
        uint64_t old = 1;
        pattern_fill(out, sizeof out, 0, 1, 0);
        CHECK_OK(gas_put(test_at(a, 7), out, sizeof out));
        CHECK_OK(gas_quiet());
        CHECK_OK(gas_get(in, test_at(a, 7), sizeof in));
        check_bytes("put/get after a second gas_init", in, out, sizeof in, 7);
        CHECK_OK(gas_atomic_set_u64(test_at(a, 1024), 41));
        CHECK_OK(gas_atomic_fetch_add_u64(test_at(a, 1024), 1, &old));
        CHECK(old == 41, "fetch_add after set 41 returned %" PRIu64, old);
        CHECK_OK(gas_barrier());
        CHECK_OK(gas_free(a));
    }

    CHECK_OK(gas_finalize());
    check_not_init("after gas_finalize");
    CHECK_STATUS(gas_finalize(), GAS_ERR_NOT_INIT);

    st = gas_init();
    CHECK(st != GAS_OK, "gas_init after gas_finalize returned GAS_OK; gas.h says the library cannot be "
          "initialised again in the same process");
    if (st == GAS_OK) {
        gas_finalize();
    } else {
        CHECK(gas_initialized() == 0, "a failed gas_init left gas_initialized() = %d", gas_initialized());
        CHECK(gas_last_error()[0] != '\0', "gas_init after gas_finalize failed with an empty gas_last_error()");
    }
    if (t_failures) {
        fprintf(stderr, "[lifecycle] FAILED: %ld failure(s)\n", t_failures);
        return 1;
    }
    printf("[lifecycle] passed\n");
    return 0;
}
