/*
 * gas-info.h - the parts of gas-info that live in files of their own.
 */
#ifndef GAS_TOOLS_GAS_INFO_H
#define GAS_TOOLS_GAS_INFO_H

/* gas-info --stats FILE...: GAS_STATS_FILE's counters as a table; the exit status. */
int gas_info_stats(int nfiles, char **files);

#endif
