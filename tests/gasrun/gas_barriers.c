/*
 * gas_barriers.c - a libgas rank that meets the others in gas_barrier every
 * 200 ms for SECONDS (argv[1]), then finalizes: for tests of what a job lives
 * through meanwhile (tests/scripts/gasrun-netns-outage.sh cuts the network).
 * The ranks agree on when to stop (an allreduce of "my time is up" after each
 * barrier): each rank's clock starts at its own gas_init, so deciding alone
 * let one rank finalize while another entered one more barrier.
 * Prints "rank R up" after gas_init and "rank R done" at the end; a failed
 * call prints its error and exits 2.  Later arguments are ignored (markers).
 */
#include <gas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10, t0 = now_s();
    if (gas_init() != GAS_OK) {
        fprintf(stderr, "gas_init: %s\n", gas_last_error());
        return 2;
    }
    int me = gas_rank();
    printf("rank %d up\n", me);
    fflush(stdout);
    for (;;) {
        if (gas_barrier() != GAS_OK) {
            printf("rank %d: gas_barrier at %.1f s: %s\n", me, now_s() - t0, gas_last_error());
            return 2;
        }
        int32_t up = now_s() - t0 >= secs, any_up = 0;
        if (gas_allreduce(GAS_TEAM_WORLD, &any_up, &up, 1, GAS_INT32, GAS_OP_MAX) != GAS_OK) {
            printf("rank %d: gas_allreduce at %.1f s: %s\n", me, now_s() - t0,
                   gas_last_error());
            return 2;
        }
        if (any_up)
            break;
        usleep(200000);
    }
    if (gas_finalize() != GAS_OK) {
        printf("rank %d: gas_finalize: %s\n", me, gas_last_error());
        return 2;
    }
    printf("rank %d done\n", me);
    return 0;
}
