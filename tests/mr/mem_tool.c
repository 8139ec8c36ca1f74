/*
 * mem_tool - a small rank program for the memory-limit scripts
 * (tests/scripts/mem-*.sh); not a test by itself.
 *
 *   mem_tool [--malloc BYTES [--again]] [--alloc BYTES] [--touch] [--stats]
 *
 * --malloc: gas_malloc BYTES per rank (collective); --again: gas_free that
 * array and gas_malloc it again (same place, pages still backed); --alloc: gas_alloc BYTES
 * on every rank; --touch: write one byte in every 4 KiB page of what was
 * allocated (this rank's share); --stats: print gas_memory_stats.  Prints
 * "mem_tool: OK" at the end, or "mem_tool: <call> failed: <status>: <message>"
 * and exits 3 when an allocation fails; gas_init failing exits 2.
 */
#include <gas.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t size_arg(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
    }
    return (uint64_t)v;
}

/* ShmemPmdMapped + FilePmdMapped (KiB) of the mapping that starts at base. */
static uint64_t pmd_kib(const void *base)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    uint64_t kib = 0, v;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = a == (unsigned long)(uintptr_t)base;
        else if (in && (sscanf(line, "ShmemPmdMapped: %" SCNu64, &v) == 1 ||
                        sscanf(line, "FilePmdMapped: %" SCNu64, &v) == 1))
            kib += v;
    }
    if (f)
        fclose(f);
    return kib;
}

static void touch(char *p, uint64_t len)
{
    for (uint64_t i = 0; i < len; i += 4096)
        p[i] = 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("GAS_ERRORS", "return", 0);
    uint64_t mbytes = 0, abytes = 0;
    int do_touch = 0, do_stats = 0, again = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--malloc") == 0 && i + 1 < argc)
            mbytes = size_arg(argv[++i]);
        else if (strcmp(argv[i], "--alloc") == 0 && i + 1 < argc)
            abytes = size_arg(argv[++i]);
        else if (strcmp(argv[i], "--touch") == 0)
            do_touch = 1;
        else if (strcmp(argv[i], "--again") == 0)
            again = 1;
        else if (strcmp(argv[i], "--stats") == 0)
            do_stats = 1;
        else {
            fprintf(stderr, "usage: mem_tool [--malloc BYTES [--again]] [--alloc BYTES] [--touch] "
                            "[--stats]\n");
            return 64;
        }
    }
    gas_status_t st = gas_init();
    if (st != GAS_OK) {
        printf("mem_tool: gas_init failed: %s: %s\n", gas_strerror(st), gas_last_error());
        return 2;
    }
    int me = gas_rank(), n = gas_nranks();
    if (mbytes) {
        gas_ptr_t a;
        st = gas_malloc((size_t)(mbytes * (uint64_t)n), &a);
        if (st == GAS_OK && again && (st = gas_free(a)) == GAS_OK)
            st = gas_malloc((size_t)(mbytes * (uint64_t)n), &a);
        if (st != GAS_OK) {
            printf("mem_tool: gas_malloc failed: %s: %s\n", gas_strerror(st), gas_last_error());
            gas_finalize();
            return 3;
        }
        gas_layout_t l;
        gas_layout(a, &l);
        if (do_touch)
            touch((char *)gas_ptr_local(gas_ptr_make(me, l.local_offset)), l.local_bytes);
    }
    if (abytes) {
        gas_ptr_t b;
        st = gas_alloc(abytes, &b);
        if (st != GAS_OK) {
            printf("mem_tool: gas_alloc failed: %s: %s\n", gas_strerror(st), gas_last_error());
            gas_finalize();
            return 3;
        }
        if (do_touch)
            touch(gas_ptr_local(b), abytes);
    }
    if (do_stats) {
        gas_barrier();
        gas_mem_stats_t s;
        gas_memory_stats(&s);
        char *base = (char *)gas_ptr_local(gas_ptr_make(me, 64)) - 64;
        printf("mem_tool: rank %d reserved %" PRIu64 " backed %" PRIu64 " numa_node %d "
               "pmd_mapped_kib %" PRIu64 " hugepages: %s\n",
               me, s.reserved, s.backed, s.numa_node, pmd_kib(base), s.hugepages);
    }
    gas_finalize();
    printf("mem_tool: OK\n");
    return 0;
}
