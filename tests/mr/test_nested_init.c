/*
 * test_nested_init - a libgas program started from inside a rank (system())
 * inherits the rank's GASRUN_* variables but not its boot socket: its gas_init
 * fails with GAS_ERR_BOOTSTRAP saying so and what to do; the same program with
 * the GASRUN_* variables removed runs as a job of one rank.  Every rank starts
 * both children; rank 0's result must not depend on another rank's.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The child: "inherited" (expects the failure) or "clean" (expects one rank). */
static int child(const char *how)
{
    gas_status_t st = gas_init();
    if (strcmp(how, "inherited") == 0) {
        const char *e = gas_last_error();
        int ok = st == GAS_ERR_BOOTSTRAP && strstr(e, "is not a rank gasrun started") &&
                 strstr(e, "remove every GASRUN_* variable");
        if (!ok)
            fprintf(stderr, "nested_init child: gas_init returned %d (%s), want "
                    "GAS_ERR_BOOTSTRAP explaining the inherited GASRUN_* variables\n", st, e);
        return ok ? 0 : 1;
    }
    int ok = st == GAS_OK && gas_nranks() == 1 && gas_rank() == 0;
    if (!ok)
        fprintf(stderr, "nested_init child: gas_init %d, %d ranks (want a job of one)\n", st,
                gas_nranks());
    if (st == GAS_OK)
        ok &= gas_finalize() == GAS_OK;
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "child") == 0)
        return child(argv[2]);
    test_begin("nested_init");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s child inherited", argv[0]);
    int rc = system(cmd);
    CHECK(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
          "the child with the rank's environment: status %d", rc);
    snprintf(cmd, sizeof cmd,
             "env $(env | sed -n 's/^\\(GASRUN_[A-Za-z0-9_]*\\)=.*/-u \\1/p') %s child clean",
             argv[0]);
    rc = system(cmd);
    CHECK(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
          "the child without GASRUN_* variables: status %d", rc);
    return test_end();
}
