/* node.c - node identity and size (see node.h). */
#include "node.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t gas_rt_node_id(void)
{
    uint64_t h = 14695981039346656037ull;
    char buf[256] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (fgets(buf, sizeof buf, f) == NULL)
            buf[0] = '\0';
        fclose(f);
    }
    h = fnv1a(h, buf, strlen(buf));
    struct stat st;
    if (stat("/proc/self/ns/net", &st) == 0)
        h = fnv1a(h, &st.st_ino, sizeof st.st_ino);
    memset(buf, 0, sizeof buf);
    gethostname(buf, sizeof buf - 1);
    h = fnv1a(h, buf, strlen(buf));
    return h ? h : 1;
}

int gas_rt_node_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int gas_rt_usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return gas_rt_node_cpus();
}
