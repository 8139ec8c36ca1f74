/* count.c: every rank adds into every element of a shared array. */
#include <gas.h>
#include <stdio.h>

int main(void)
{
    gas_init();                                   /* GAS_ERRORS=abort: errors end the job */
    int me = gas_rank(), n = gas_nranks();

    gas_ptr_t counts;                             /* 64 counters spread over all ranks */
    gas_malloc(64 * sizeof(uint64_t), &counts);   /* collective: same pointer everywhere */
    uint64_t zero[64] = {0};
    if (me == 0)
        gas_put(counts, zero, sizeof zero);       /* a put may span several owners */
    gas_barrier();

    for (uint64_t i = 0; i < 64; i++) {
        gas_ptr_t c;
        gas_ptr_index(counts, sizeof(uint64_t), i, &c);   /* element i, wherever it lives */
        gas_atomic_add_u64(c, (uint64_t)me + 1);          /* remote atomic */
    }
    gas_barrier();                                /* implies quiet: all adds are done */

    uint64_t all[64], want = (uint64_t)n * (n + 1) / 2;
    gas_get(all, counts, sizeof all);             /* read the whole array back */
    int ok = 1;
    for (int i = 0; i < 64; i++)
        ok &= all[i] == want;
    printf("rank %d: counters %s (each %llu)\n", me, ok ? "correct" : "WRONG",
           (unsigned long long)all[0]);
    gas_free(counts);
    gas_finalize();
    return ok ? 0 : 1;
}
