/*
 * test_fork - a child that fork() makes of a rank cannot use libgas, and
 * neither it nor its failed calls disturb the job.
 *
 * The segment is a shared mapping, so a child's gas_alloc used to change the
 * parent's allocator state behind its back (the parent's next gas_dealloc
 * was refused).  Rank 0 forks a child that calls gas_alloc, gas_put,
 * gas_barrier and gas_init:
 *   - GAS_ERRORS=return: each must fail (GAS_ERR_NOT_INIT, or GAS_ERR_INVALID
 *     for gas_init) with a message that says fork(); the child exits 0 when
 *     they all did;
 *   - GAS_ERRORS=abort (the default): the first call ends the child alone
 *     (exit status 1); the job goes on.
 * Then every rank allocates and frees blocks, puts to its neighbour, and
 * reads back what its other neighbour put, against a reference.
 */
#include "check.h"

#include <sys/wait.h>
#include <unistd.h>

/* In the child: 0 when every call failed as it should (return mode). */
static int child_calls(void)
{
    int bad = 0;
    gas_ptr_t b = GAS_NULL;
    gas_status_t st = gas_alloc(64, &b);
    bad |= st != GAS_ERR_NOT_INIT || strstr(gas_last_error(), "fork()") == NULL;
    uint64_t v = 1;
    st = gas_put(b, &v, sizeof v);
    bad |= (st != GAS_ERR_NOT_INIT) << 1;
    bad |= (gas_barrier() != GAS_ERR_NOT_INIT) << 2;
    bad |= (gas_init() != GAS_ERR_INVALID || strstr(gas_last_error(), "fork()") == NULL) << 3;
    bad |= (gas_rank() != -1) << 4;
    if (bad)
        fprintf(stderr, "child: calls that should have failed (bits %d); last: %s\n", bad,
                gas_last_error());
    return bad;
}

int main(void)
{
    test_begin("fork");
    const char *mode = getenv("GAS_ERRORS");
    int aborts = mode == NULL || strcmp(mode, "abort") == 0;
    MUST(gas_barrier());
    if (t_rank == 0) {
        fflush(NULL);
        pid_t c = fork();
        if (c == 0)
            _exit(child_calls() ? 3 : 0);
        CHECK(c > 0, "fork failed");
        int ws = 0;
        if (c > 0 && waitpid(c, &ws, 0) == c) {
            int want = aborts ? 1 : 0;
            CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == want,
                  "the child ended with %s %d, not exit status %d", WIFEXITED(ws) ? "status" : "signal",
                  WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws), want);
        }
    }
    gas_ptr_t arr;
    MUST(gas_malloc((size_t)t_nranks * 8 * 64, &arr));
    int to = (t_rank + 1) % t_nranks, from = (t_rank + t_nranks - 1) % t_nranks;
    for (int round = 0; round < 64; round++) {
        gas_ptr_t blk;
        CHECK_OK(gas_alloc(1000 + (size_t)round * 4096, &blk));
        CHECK_OK(gas_dealloc(blk));
        uint64_t v = ((uint64_t)t_rank << 32) | (uint64_t)round, got = 0;
        CHECK_OK(gas_put(test_at(arr, ((uint64_t)to * 64 + (uint64_t)round) * 8), &v, sizeof v));
        MUST(gas_barrier());
        uint64_t *mine = gas_ptr_local(test_at(arr, ((uint64_t)t_rank * 64 + (uint64_t)round) * 8));
        got = mine ? *mine : 0;
        uint64_t want = ((uint64_t)from << 32) | (uint64_t)round;
        CHECK(got == want, "round %d: read 0x%" PRIx64 ", rank %d put 0x%" PRIx64, round, got, from,
              want);
    }
    MUST(gas_free(arr));
    return test_end();
}
