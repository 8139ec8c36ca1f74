/* limits.c - address-space and backing limits of segments (see limits.h). */
#include "limits.h"
#include "segment.h"
#include "runtime/config.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/topo.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/vfs.h>

#define TMPFS_MAGIC_ 0x01021994
#define HUGETLBFS_MAGIC_ 0x958458f6

/* Value of `key` in /proc/meminfo, in bytes ("kB" lines) or as is (counts); 0 if absent. */
static uint64_t meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return 0;
    char line[256];
    size_t klen = strlen(key);
    uint64_t v = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 || line[klen] != ':')
            continue;
        char *end;
        v = strtoull(line + klen + 1, &end, 10);
        if (strstr(end, "kB"))
            v *= 1024;
        break;
    }
    fclose(f);
    return v;
}

/* First number in a file, or dflt. */
static uint64_t read_u64(const char *path, uint64_t dflt)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return dflt;
    char buf[64];
    uint64_t v = dflt;
    if (fgets(buf, sizeof buf, f)) {
        char *end;
        unsigned long long x = strtoull(buf, &end, 10);
        if (end != buf)
            v = x;
    }
    fclose(f);
    return v;
}

/* The highest user address below 2^63 that is mapped, rounded up to a power of two. */
static uint64_t user_va_top(void)
{
    uint64_t top = 1ull << 47;
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return top;
    char line[512];
    uint64_t hi = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b;
        if (sscanf(line, "%llx-%llx", &a, &b) == 2 && b < (1ull << 63) && b > hi)
            hi = b;
    }
    fclose(f);
    if (hi == 0)
        return top;
    top = 1;
    while (top < hi && top < (1ull << 63))
        top <<= 1;
    return top;
}

static uint64_t vm_size_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return 0;
    char line[256];
    uint64_t v = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %" SCNu64, &v) == 1)
            break;
    fclose(f);
    return v * 1024;
}

/*
 * The mount (from /proc/self/mountinfo) whose fstype is `fstype` and, if
 * opt is not NULL, whose super options include it; copies the mount point
 * and its root.  0 when found.
 */
static int find_mount(const char *fstype, const char *opt, char *point, size_t pcap, char *root,
                      size_t rcap)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (f == NULL)
        return -1;
    char line[1024];
    int found = -1;
    while (found && fgets(line, sizeof line, f)) {
        char r[256], p[256], type[64], src[256], sopts[512];
        const char *dash = strstr(line, " - ");
        if (dash == NULL || sscanf(line, "%*s %*s %*s %255s %255s", r, p) != 2 ||
            sscanf(dash + 3, "%63s %255s %511s", type, src, sopts) != 3)
            continue;
        if (strcmp(type, fstype) != 0)
            continue;
        if (opt) {
            int has = 0;
            for (char *tok = strtok(sopts, ","); tok && !has; tok = strtok(NULL, ","))
                has = strcmp(tok, opt) == 0;
            if (!has)
                continue;
        }
        snprintf(point, pcap, "%s", p);
        snprintf(root, rcap, "%s", r);
        found = 0;
    }
    fclose(f);
    return found;
}

/* The memory cgroup limit that applies to this process (v1 or v2). */
static void read_cgroup(struct gas_al_limits *l)
{
    l->cg_limit = GAS_AL_NO_LIMIT;
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f == NULL)
        return;
    char line[512], v1path[256] = "", v2path[256] = "";
    int have_v1 = 0, have_v2 = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL)
            continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1;
        if (*ctrls == '\0') {
            snprintf(v2path, sizeof v2path, "%s", c2 + 1);
            have_v2 = 1;
            continue;
        }
        char copy[256];
        snprintf(copy, sizeof copy, "%s", ctrls);
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
            if (strcmp(tok, "memory") == 0) {
                snprintf(v1path, sizeof v1path, "%s", c2 + 1);
                have_v1 = 1;
            }
    }
    fclose(f);
    char point[256], root[256], dir[520];
    if (have_v1 && find_mount("cgroup", "memory", point, sizeof point, root, sizeof root) == 0) {
        const char *rel = v1path;
        size_t rlen = strlen(root);
        if (strcmp(root, "/") != 0 && strncmp(rel, root, rlen) == 0)
            rel += rlen;
        snprintf(dir, sizeof dir, "%s%s", point, strcmp(rel, "/") == 0 ? "" : rel);
        char path[560];
        snprintf(path, sizeof path, "%s/memory.stat", dir);
        FILE *s = fopen(path, "r");
        uint64_t lim = GAS_AL_NO_LIMIT;
        if (s) {
            char sl[256];
            while (fgets(sl, sizeof sl, s))
                if (sscanf(sl, "hierarchical_memory_limit %" SCNu64, &lim) == 1)
                    break;
            fclose(s);
        }
        if (lim < (1ull << 62)) {
            l->cg_limit = lim;
            snprintf(l->cg_limit_file, sizeof l->cg_limit_file, "%s/memory.limit_in_bytes", dir);
            snprintf(l->cg_usage_file, sizeof l->cg_usage_file, "%s/memory.usage_in_bytes", dir);
        }
        return;
    }
    if (have_v2 && find_mount("cgroup2", NULL, point, sizeof point, root, sizeof root) == 0) {
        /* The tightest memory.max from this cgroup up to the mount's root. */
        snprintf(dir, sizeof dir, "%s%s", point, strcmp(v2path, "/") == 0 ? "" : v2path);
        size_t plen = strlen(point);
        for (;;) {
            char path[560];
            snprintf(path, sizeof path, "%s/memory.max", dir);
            uint64_t lim = read_u64(path, GAS_AL_NO_LIMIT);
            if (lim < l->cg_limit) {
                l->cg_limit = lim;
                snprintf(l->cg_limit_file, sizeof l->cg_limit_file, "%s", path);
                snprintf(l->cg_usage_file, sizeof l->cg_usage_file, "%s/memory.current", dir);
            }
            char *slash = strrchr(dir, '/');
            if (slash == NULL || (size_t)(slash - dir) < plen)
                break;
            *slash = '\0';
        }
    }
}

/* GAS_SEGMENT_DIR: its file system and size. */
static gas_status_t read_dir(const char *dir, struct gas_al_limits *l)
{
    char real[PATH_MAX];
    if (realpath(dir, real) == NULL)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_SEGMENT_DIR=%s: %s", dir,
                            strerror(errno));
    struct statfs fs;
    if (statfs(real, &fs) != 0)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_SEGMENT_DIR=%s: statfs: %s", dir,
                            strerror(errno));
    if ((unsigned long)fs.f_type == (unsigned long)TMPFS_MAGIC_)
        l->dir_kind = GAS_AL_DIR_TMPFS;
    else if ((unsigned long)fs.f_type == (unsigned long)HUGETLBFS_MAGIC_)
        l->dir_kind = GAS_AL_DIR_HUGETLBFS;
    else
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_SEGMENT_DIR=%s is not on tmpfs or hugetlbfs (file system type "
                            "0x%lx); segments must live in memory: use e.g. /dev/shm, or leave "
                            "GAS_SEGMENT_DIR empty for memfd segments",
                            dir, (unsigned long)fs.f_type);
    snprintf(l->dir, sizeof l->dir, "%s", real);
    l->fs_size = (uint64_t)fs.f_blocks * (uint64_t)fs.f_bsize;
    /* The huge= option of the mount that holds the directory (longest mount point prefix). */
    FILE *f = fopen("/proc/self/mountinfo", "r");
    size_t best = 0;
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        char p[256], sopts[512];
        const char *dash = strstr(line, " - ");
        if (dash == NULL || sscanf(line, "%*s %*s %*s %*s %255s", p) != 1 ||
            sscanf(dash + 3, "%*s %*s %511s", sopts) != 1)
            continue;
        size_t plen = strlen(p);
        int under = strncmp(real, p, plen) == 0 &&
                    (real[plen] == '/' || real[plen] == '\0' || strcmp(p, "/") == 0);
        if (!under || plen < best)
            continue;
        best = plen;
        l->fs_huge[0] = '\0';
        const char *h = strstr(sopts, "huge=");
        if (h)
            sscanf(h + 5, "%15[^,]", l->fs_huge);
    }
    if (f)
        fclose(f);
    return GAS_OK;
}

gas_status_t gas_al_limits_read(const char *dir, struct gas_al_limits *l)
{
    memset(l, 0, sizeof *l);
    l->ram_total = meminfo("MemTotal");
    l->swap_total = meminfo("SwapTotal");
    l->overcommit = (int)read_u64("/proc/sys/vm/overcommit_memory", 0);
    l->max_map_count = (long)read_u64("/proc/sys/vm/max_map_count", 65530);
    l->huge_page = meminfo("Hugepagesize");
    l->huge_total = meminfo("HugePages_Total");
    l->huge_overcommit = read_u64("/proc/sys/vm/nr_overcommit_hugepages", 0);
    read_cgroup(l);
    struct rlimit rl;
    l->as_limit = GAS_AL_NO_LIMIT;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        l->as_limit = (uint64_t)rl.rlim_cur;
    l->va_top = user_va_top();
    l->vm_size = vm_size_now();
    if (dir && *dir)
        return read_dir(dir, l);
    return GAS_OK;
}

int gas_al_limits_room(const struct gas_al_limits *l, int hugetlb, uint64_t bytes, char *why,
                       size_t cap)
{
    char a[32], b[32], c[32];
    gas_rt_format_bytes(a, sizeof a, bytes);
    if (hugetlb) {
        uint64_t pg = l->huge_page ? l->huge_page : 1;
        uint64_t fr = meminfo("HugePages_Free") + l->huge_overcommit - meminfo("HugePages_Surp");
        if ((bytes + pg - 1) / pg > fr) {
            gas_rt_format_bytes(b, sizeof b, pg);
            snprintf(why, cap,
                     "the hugetlb pool has %" PRIu64 " free pages of %s, %s needs %" PRIu64
                     " (raise vm.nr_hugepages, or set GAS_HUGEPAGES=auto)",
                     fr, b, a, (bytes + pg - 1) / pg);
            return -1;
        }
        return 0;
    }
    if (l->dir_kind == GAS_AL_DIR_TMPFS) {
        struct statfs fs;
        if (statfs(l->dir, &fs) == 0 && (uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize < bytes) {
            gas_rt_format_bytes(b, sizeof b, (uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize);
            gas_rt_format_bytes(c, sizeof c, l->fs_size);
            snprintf(why, cap,
                     "the tmpfs at %s (GAS_SEGMENT_DIR) has %s free of %s, %s more is needed "
                     "(enlarge it, e.g. mount -o remount,size=..., or leave GAS_SEGMENT_DIR empty)",
                     l->dir, b, c, a);
            return -1;
        }
    }
    if (l->cg_limit != GAS_AL_NO_LIMIT) {
        uint64_t used = read_u64(l->cg_usage_file, 0);
        if (used > l->cg_limit || l->cg_limit - used < bytes) {
            gas_rt_format_bytes(b, sizeof b, l->cg_limit);
            gas_rt_format_bytes(c, sizeof c, used);
            snprintf(why, cap,
                     "the memory cgroup limit is %s (%s) and %s of it is in use, %s more is "
                     "needed (raise the limit)",
                     b, l->cg_limit_file, c, a);
            return -1;
        }
    }
    if (l->overcommit == 2) {
        uint64_t lim = meminfo("CommitLimit"), com = meminfo("Committed_AS");
        if (com > lim || lim - com < bytes) {
            gas_rt_format_bytes(b, sizeof b, lim);
            gas_rt_format_bytes(c, sizeof c, com);
            snprintf(why, cap,
                     "vm.overcommit_memory=2 limits commitments to %s (CommitLimit) and %s is "
                     "committed, %s more is needed (raise vm.overcommit_ratio or add swap)",
                     b, c, a);
            return -1;
        }
    }
    uint64_t avail = meminfo("MemAvailable");
    if (avail && avail < bytes) {
        gas_rt_format_bytes(b, sizeof b, avail);
        gas_rt_format_bytes(c, sizeof c, l->ram_total);
        snprintf(why, cap, "the machine has %s of its %s of memory available, %s more is needed",
                 b, c, a);
        return -1;
    }
    return 0;
}

void gas_al_limits_describe(const struct gas_al_limits *l, int hugetlb, char *buf, size_t cap)
{
    char a[32], b[32];
    size_t n = 0;
    gas_rt_format_bytes(a, sizeof a, l->ram_total);
    if (hugetlb) {
        gas_rt_format_bytes(b, sizeof b, l->huge_page);
        n += (size_t)snprintf(buf + n, cap - n,
                              "the hugetlb pool (vm.nr_hugepages=%" PRIu64
                              ", vm.nr_overcommit_hugepages=%" PRIu64 ", pages of %s)",
                              l->huge_total, l->huge_overcommit, b);
    } else if (l->dir_kind == GAS_AL_DIR_TMPFS) {
        gas_rt_format_bytes(b, sizeof b, l->fs_size);
        n += (size_t)snprintf(buf + n, cap - n,
                              "the size of the tmpfs at %s (%s, GAS_SEGMENT_DIR) and the "
                              "machine's memory (%s, %s swap)",
                              l->dir, b, a, l->swap_total ? "with" : "no");
    } else {
        n += (size_t)snprintf(buf + n, cap - n, "the machine's memory (%s, %s swap)", a,
                              l->swap_total ? "with" : "no");
    }
    if (n < cap && l->cg_limit != GAS_AL_NO_LIMIT) {
        gas_rt_format_bytes(b, sizeof b, l->cg_limit);
        n += (size_t)snprintf(buf + n, cap - n, ", the memory cgroup limit of %s (%s)", b,
                              l->cg_limit_file);
    }
    if (n < cap && l->overcommit == 2)
        snprintf(buf + n, cap - n, ", and vm.overcommit_memory=2 (CommitLimit)");
}

uint64_t gas_al_va_budget(const struct gas_al_limits *l)
{
    uint64_t top = l->as_limit < l->va_top ? l->as_limit : l->va_top;
    uint64_t avail = top > l->vm_size ? top - l->vm_size : 0;
    return avail / 4 * 3;
}

static uint64_t pow2_floor(uint64_t v)
{
    uint64_t p = 1;
    while (v / 2 >= p)
        p <<= 1;
    return v ? p : 0;
}

/* "RLIMIT_AS (ulimit -v) of 4.0 GiB" or "the 128.0 TiB user address space". */
static void va_limit_text(const struct gas_al_limits *l, char *buf, size_t cap)
{
    char a[32];
    if (l->as_limit < l->va_top) {
        gas_rt_format_bytes(a, sizeof a, l->as_limit);
        snprintf(buf, cap, "RLIMIT_AS (ulimit -v) of %s", a);
    } else {
        gas_rt_format_bytes(a, sizeof a, l->va_top);
        snprintf(buf, cap, "the %s user address space", a);
    }
}

/*
 * A size within cap (a multiple of page): pow2_floor(pref) when that is at
 * least the minimum segment, else the largest multiple of page within cap
 * (below the minimum only when cap is).
 */
static uint64_t fit_size(uint64_t pref, uint64_t cap, uint64_t page)
{
    uint64_t size = pow2_floor(pref < cap ? pref : cap) / page * page;
    return size >= GAS_AL_SEG_MIN_BYTES ? size : cap / page * page;
}

/*
 * The auto segment size: within half the address-space budget and (tmpfs)
 * the tmpfs's share, each a power of two where that leaves at least the
 * minimum, and within the pointer window.  Fails naming the limit that
 * leaves less than the minimum: the address space (lim describes it) or
 * GAS_SEGMENT_DIR, with what to change.
 */
static gas_status_t auto_size(const struct gas_al_limits *l, int local_ranks, uint64_t window,
                              uint64_t page, const char *lim, uint64_t *size_p)
{
    char a[32], b[32];
    uint64_t n = local_ranks > 0 ? (uint64_t)local_ranks : 1;
    uint64_t budget = gas_al_va_budget(l);
    uint64_t size = fit_size(budget / 2 / n, budget / n, page);
    if (size < GAS_AL_SEG_MIN_BYTES) {
        gas_rt_format_bytes(b, sizeof b, budget);
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init",
                            "the %d ranks of this node cannot each map %d segments of at "
                            "least %u bytes in the %s of address space left under %s; "
                            "raise the limit or run fewer ranks per node",
                            local_ranks, local_ranks, GAS_AL_SEG_MIN_BYTES, b, lim);
    }
    if (l->dir_kind == GAS_AL_DIR_TMPFS) {
        uint64_t fs = fit_size(l->fs_size / n, l->fs_size / n, page);
        if (fs < GAS_AL_SEG_MIN_BYTES) {
            gas_rt_format_bytes(a, sizeof a, l->fs_size);
            gas_rt_format_bytes(b, sizeof b, l->fs_size / n);
            return gas_rt_error(GAS_ERR_NOMEM, "gas_init",
                                "GAS_SEGMENT_SIZE=auto: GAS_SEGMENT_DIR=%s is a tmpfs of %s, "
                                "%s for each of the %d ranks of this node, less than the "
                                "smallest segment, %um (%u bytes); enlarge the tmpfs (mount -o "
                                "remount,size=...), run fewer ranks per node, or set "
                                "GAS_SEGMENT_SIZE (at least %um) to reserve more than the "
                                "tmpfs holds (touching past it raises SIGBUS, GAS_PREFAULT=y "
                                "makes allocations fail instead)",
                                l->dir, a, b, local_ranks, GAS_AL_SEG_MIN_BYTES >> 20,
                                GAS_AL_SEG_MIN_BYTES, GAS_AL_SEG_MIN_BYTES >> 20);
        }
        if (fs < size)
            size = fs;
    }
    if (size > window)
        size = window / page * page;
    *size_p = size;
    return GAS_OK;
}

gas_status_t gas_al_segment_size_plan(const struct gas_al_limits *l, uint64_t requested,
                                      int local_ranks, uint64_t window, uint64_t page, int warn,
                                      uint64_t *size_p)
{
    char a[32], b[32], c[32], lim[96];
    uint64_t n = local_ranks > 0 ? (uint64_t)local_ranks : 1;
    uint64_t budget = gas_al_va_budget(l);
    va_limit_text(l, lim, sizeof lim);
    if (l->max_map_count > 0 && (int64_t)n * 2 + 256 > l->max_map_count)
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init",
                            "%d ranks on this node each map every local segment, which needs "
                            "about %" PRIu64 " mappings per process, but vm.max_map_count is "
                            "%ld: raise vm.max_map_count or run fewer ranks per node",
                            local_ranks, n * 2 + 256, l->max_map_count);
    if (l->dir_kind != GAS_AL_DIR_NONE) {
        /* Each rank backs its header and the arenas' metadata at start. */
        struct statfs fs;
        uint64_t fr = statfs(l->dir, &fs) == 0 ? (uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize : 0;
        uint64_t need = n * (l->dir_kind == GAS_AL_DIR_HUGETLBFS ? 2 * page : GAS_AL_SEG_START_BYTES);
        if (fr < need) {
            gas_rt_format_bytes(a, sizeof a, fr);
            gas_rt_format_bytes(b, sizeof b, l->fs_size);
            gas_rt_format_bytes(c, sizeof c, need);
            return gas_rt_error(GAS_ERR_NOMEM, "gas_init",
                                "GAS_SEGMENT_DIR=%s has %s free (of %s), too little to start "
                                "the %d ranks of this node, which need at least %s; enlarge it "
                                "(mount -o remount,size=...) or leave GAS_SEGMENT_DIR empty "
                                "(memfd segments)",
                                l->dir, a, b, local_ranks, c);
        }
    }
    uint64_t size = 0;
    gas_status_t st;
    if (requested && requested < GAS_AL_SEG_MIN_BYTES) {
        /* Quote the value as the user wrote it, when it is the configured one. */
        const char *given = gas_rt_config_str(GAS_CFG_SEGMENT_SIZE);
        if (*given == '\0' || gas_rt_config_size(GAS_CFG_SEGMENT_SIZE) != requested) {
            snprintf(a, sizeof a, "%" PRIu64, requested);
            given = a;
        }
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_SEGMENT_SIZE=%s (%" PRIu64 " bytes) is below the minimum of %um "
                            "(%u bytes), the least in which gas_init and a first gas_alloc fit; "
                            "raise GAS_SEGMENT_SIZE, or set it to auto (or 0)",
                            given, requested, GAS_AL_SEG_MIN_BYTES >> 20, GAS_AL_SEG_MIN_BYTES);
    }
    if (requested) {
        if (requested > UINT64_MAX - page)
            requested = UINT64_MAX - page;
        size = (requested + page - 1) / page * page;
        gas_rt_format_bytes(a, sizeof a, size);
        if (size > window) {
            gas_rt_format_bytes(b, sizeof b, window);
            return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                                "GAS_SEGMENT_SIZE=%s exceeds the %s that a pointer can address "
                                "in a job of this size; lower GAS_SEGMENT_SIZE",
                                a, b);
        }
        if (size > budget / n) {
            gas_rt_format_bytes(b, sizeof b, budget);
            gas_rt_format_bytes(c, sizeof c, budget / n / page * page);
            char who[160];
            if (n > 1)
                snprintf(who, sizeof who, "each of the %d ranks on this node maps all their "
                         "segments (%" PRIu64 " x %s)", local_ranks, n, a);
            else
                snprintf(who, sizeof who, "the rank maps its segment");
            return gas_rt_error(GAS_ERR_NOMEM, "gas_init",
                                "GAS_SEGMENT_SIZE=%s: %s, more than the %s of address space a "
                                "process can give segments under %s; lower GAS_SEGMENT_SIZE to "
                                "at most %s, or leave it unset (auto)",
                                a, who, b, lim, c);
        }
        if (warn && l->dir_kind == GAS_AL_DIR_TMPFS && size > l->fs_size / n) {
            gas_rt_format_bytes(b, sizeof b, l->fs_size);
            gas_log_warn("segment",
                         "the %d ranks here reserve %s each, but the tmpfs at %s "
                         "(GAS_SEGMENT_DIR) holds %s: touching more than fits raises SIGBUS "
                         "(GAS_PREFAULT=y makes allocations fail cleanly instead)",
                         local_ranks, a, l->dir, b);
        }
    } else if ((st = auto_size(l, local_ranks, window, page, lim, &size)) != GAS_OK) {
        return st;
    }
    *size_p = size;
    return GAS_OK;
}
