/* boot_select.c - choose the bootstrap back end from the environment. */
#include "boot.h"

#include <stdlib.h>

static struct gas_rt_boot boot;

gas_status_t gas_rt_boot_open(const struct gas_rt_boot **boot_p)
{
    /* gasrun sets GASRUN_BOOT_FD for a rank it forks, GASRUN_BOOT_ADDR for
     * one it starts on another host. */
    int gasrun = getenv("GASRUN_BOOT_FD") != NULL || getenv("GASRUN_BOOT_ADDR") != NULL;
    gas_status_t st = gasrun ? gas_rt_boot_gasrun_open(&boot) : gas_rt_boot_single_open(&boot);
    if (st == GAS_OK)
        *boot_p = &boot;
    return st;
}
