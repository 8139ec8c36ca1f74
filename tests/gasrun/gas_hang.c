/*
 * gas_hang.c - a libgas rank that initialises, says so, and then waits for
 * ever: for tests of what ends a rank whose gasrun is gone (a rank started on
 * another host ends when its boot connection closes: runtime/boot_watch.c).
 * Arguments are ignored (tests pass a marker to find leftover processes).
 * With GAS_TEST_EXIT_RANK=r, rank r instead exits 0 at once, without
 * gas_finalize, and the others wait in gas_barrier, which fails (rank r is
 * gone): they exit 5 (GAS_ERRORS=return).
 */
#include <gas.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    if (gas_init() != GAS_OK)
        return 1;
    printf("rank %d of %d up\n", gas_rank(), gas_nranks());
    fflush(stdout);
    const char *e = getenv("GAS_TEST_EXIT_RANK");
    if (e && *e) {
        if (atoi(e) == gas_rank())
            exit(0);
        if (gas_barrier() != GAS_OK) /* GAS_ERRORS=return; with abort the job ends in it */
            return 5;
    }
    for (;;)
        pause();
}
