/*
 * A world barrier that one rank is late for: every other rank's GAS_TIMEOUT
 * message names the late rank first ("rank L has not entered world barrier
 * E"), whichever partner its own dissemination round waited for, and keeps
 * that partner as the detail ("a signal from rank P").  With the argument
 * `silent` (udp, GAS_PROGRESS=poll: the late rank, asleep outside libgas,
 * answers no get) the message names it as a rank that did not answer.
 * Retrying the barrier then completes it on every rank.  GAS_TIMEOUT=1s is
 * set here before gas_init; the late rank sleeps 3 s.
 */
#include <unistd.h>

#include "check.h"

/* Call gas_barrier until it stops timing out (20 tries at most); the first
 * timeout's message must name `late` as the phrase `want` says. */
static void barrier_until_done(int late, int silent)
{
    char want[96];
    if (silent)
        snprintf(want, sizeof want, "rank %d did not answer when asked whether it has entered "
                 "world barrier", late);
    else
        snprintf(want, sizeof want, "rank %d has not entered world barrier", late);
    int timeouts = 0;
    gas_status_t st = GAS_OK;
    for (int tries = 0; tries < 20; tries++) {
        st = gas_barrier();
        if (st != GAS_ERR_TIMEOUT)
            break;
        if (++timeouts > 1)
            continue;
        const char *msg = gas_last_error();
        CHECK(strstr(msg, want) != NULL, "the timeout does not say '%s': %s", want, msg);
        const char *partner = strstr(msg, "a signal from rank");
        CHECK(partner != NULL && strstr(msg, want) < partner,
              "the late rank is not named before the round's partner: %s", msg);
        if (t_rank == 0)
            test_note("as expected: %s", msg);
    }
    CHECK(timeouts > 0, "gas_barrier never timed out waiting for late rank %d", late);
    CHECK(st == GAS_OK, "gas_barrier returned %d after the late rank came: %s", (int)st,
          gas_last_error());
}

int main(int argc, char **argv)
{
    int silent = argc > 1 && strcmp(argv[1], "silent") == 0;
    setenv("GAS_TIMEOUT", "1s", 1);
    test_begin("barrier_late");
    if (t_nranks < 2)
        return test_end();
    int late = t_nranks > 5 ? 5 : t_nranks - 1;
    MUST(gas_barrier());
    if (t_rank == late) {
        sleep(3);
        CHECK_OK(gas_barrier());
    } else {
        barrier_until_done(late, silent);
    }
    for (int i = 0; i < 3; i++)
        CHECK_OK(gas_barrier());   /* later barriers line up on every rank */
    return test_end();
}
