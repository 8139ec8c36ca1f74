/* node.c - node identity and size (see node.h). */
#include "node.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
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

/* h with this kernel boot's random id folded in (shared by every namespace
 * and container); *read_p (unless NULL): whether it could be read. */
static uint64_t hash_boot_id(uint64_t h, int *read_p)
{
    char buf[256] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (fgets(buf, sizeof buf, f) == NULL)
            buf[0] = '\0';
        fclose(f);
    }
    if (read_p)
        *read_p = buf[0] != '\0';
    return fnv1a(h, buf, strlen(buf));
}

/* Whether the /proc this process sees belongs to its own PID namespace
 * (/proc/self names its own pid): node-mates reach each other's segments
 * and check each other's liveness through /proc/PID. */
static int proc_is_ours(void)
{
    char link[32];
    ssize_t n = readlink("/proc/self", link, sizeof link - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    return strtol(link, NULL, 10) == (long)getpid();
}

uint64_t gas_rt_node_id(void)
{
    uint64_t h = hash_boot_id(14695981039346656037ull, NULL);
    char buf[256] = "";
    struct stat st;
    if (stat("/proc/self/ns/net", &st) == 0)
        h = fnv1a(h, &st.st_ino, sizeof st.st_ino);
    /* Containers with the host's network but PID namespaces of their own:
     * a pid (and /proc/PID/fd) means another process in each. */
    if (stat("/proc/self/ns/pid", &st) == 0)
        h = fnv1a(h, &st.st_ino, sizeof st.st_ino);
    if (!proc_is_ours()) {   /* no /proc/PID route at all: a node of its own */
        pid_t pid = getpid();
        h = fnv1a(h, &pid, sizeof pid);
    }
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

uint64_t gas_rt_cpu_key(void)
{
    int boot_read;
    uint64_t h = hash_boot_id(14695981039346656037ull ^ 0x637075, &boot_read);
    if (!boot_read) { /* no /proc: no sharing beyond this node can be seen */
        uint64_t node = gas_rt_node_id();
        h = fnv1a(h, &node, sizeof node);
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        h = fnv1a(h, &set, sizeof set);
    return h ? h : 1;
}
