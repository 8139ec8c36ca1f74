/*
 * info.h - what gas-info shows about collectives (no gas_init needed): every
 * collective's algorithms, what GAS_COLL_<NAME> forces, the choice at a few
 * sizes and team sizes, and the tuning table's rules.
 */
#ifndef GAS_CO_INFO_H
#define GAS_CO_INFO_H

#include <gas.h>
#include <stdio.h>

/* Load the configuration and the tuning table, then print; raises on a bad table. */
gas_status_t gas_co_info(FILE *f);

/* Load the configuration and the tuning table as gas_init does, and let them go; raises on a
 * bad table (gas-info --config). */
gas_status_t gas_co_tuning_check(void);

#endif
