/* boot_select.c - choose the bootstrap back end from the environment. */
#include "boot.h"

#include <stdlib.h>

static struct gas_rt_boot boot;

gas_status_t gas_rt_boot_open(const struct gas_rt_boot **boot_p)
{
    const char *fd = getenv("GASRUN_BOOT_FD");
    gas_status_t st = fd ? gas_rt_boot_gasrun_open(&boot, fd) : gas_rt_boot_single_open(&boot);
    if (st == GAS_OK)
        *boot_p = &boot;
    return st;
}
