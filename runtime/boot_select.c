/* boot_select.c - choose the bootstrap back end from the environment. */
#include "boot.h"
#include "error.h"

#include <stdlib.h>

static struct gas_rt_boot boot;

/*
 * True when gasrun's variables say this process is one rank of a job of more
 * than one (GASRUN_NRANKS > 1).  Such a process must not run as a job of one:
 * it would compute alone, and succeed, while its peers wait for it.
 */
static int launched_as_part_of_job(void)
{
    const char *n = getenv("GASRUN_NRANKS");
    char *end;
    if (n == NULL)
        return 0;
    long v = strtol(n, &end, 10);
    return end == n || *end != '\0' || v != 1;
}

gas_status_t gas_rt_boot_open(const struct gas_rt_boot **boot_p)
{
    /* gasrun sets GASRUN_BOOT_FD for a rank it forks, GASRUN_BOOT_ADDR for
     * one it starts on another host. */
    int gasrun = getenv("GASRUN_BOOT_FD") != NULL || getenv("GASRUN_BOOT_ADDR") != NULL;
    if (!gasrun && launched_as_part_of_job()) {
        const char *r = getenv("GASRUN_RANK");
        return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                            "GASRUN_RANK=%s GASRUN_NRANKS=%s say this process is a rank of a "
                            "job started by gasrun, but neither GASRUN_BOOT_FD nor "
                            "GASRUN_BOOT_ADDR is set, so it cannot reach gasrun (did a wrapper "
                            "clean the environment, such as env -u or env -i?); pass them on, "
                            "or unset GASRUN_NRANKS to run as a job of one rank",
                            r ? r : "(unset)", getenv("GASRUN_NRANKS"));
    }
    gas_status_t st = gasrun ? gas_rt_boot_gasrun_open(&boot) : gas_rt_boot_single_open(&boot);
    if (st == GAS_OK)
        *boot_p = &boot;
    return st;
}
