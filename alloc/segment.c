/* segment.c - creating and mapping segments (see segment.h). */
#include "segment.h"
#include "fault.h"
#include "limits.h"
#include "place.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* An unnamed file in dir; a named one unlinked at once where O_TMPFILE is not supported. */
static int dir_file(const struct gas_al_seg_opts *o)
{
    int fd = open(o->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    char path[512];
    snprintf(path, sizeof path, "%s/gas-%08x-r%d-%d", o->dir, (unsigned)o->job_id, o->rank,
             (int)getpid());
    fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        unlink(path);
    return fd;
}

gas_status_t gas_al_segment_create(const struct gas_al_seg_opts *o, struct gas_al_segment *seg_p)
{
    const struct gas_al_place *pl = o->place;
    uint64_t size = o->size;
    char sz[32];
    gas_rt_format_bytes(sz, sizeof sz, size);
    if (size < GAS_AL_SEG_MIN_BYTES)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "a segment of %llu bytes is below the minimum of %u bytes "
                            "(GAS_SEGMENT_SIZE)",
                            (unsigned long long)size, GAS_AL_SEG_MIN_BYTES);
    int fd;
    const char *what;
    if (o->dir && *o->dir) {
        fd = dir_file(o);
        what = "creating the segment file in GAS_SEGMENT_DIR";
    } else {
        char name[32];
        snprintf(name, sizeof name, "gas-seg-r%d", o->rank);
        fd = memfd_create(name, MFD_CLOEXEC | (pl->hugetlb ? MFD_HUGETLB : 0));
        what = "memfd_create for the segment";
    }
    if (fd < 0)
        return gas_rt_error(GAS_ERR_IO, "gas_init", "%s failed: %s", what, strerror(errno));
    if (ftruncate(fd, (off_t)size) != 0) {
        gas_status_t st = gas_rt_error(GAS_ERR_NOSPACE, "gas_init",
                                       "cannot size the segment to %s: %s; lower GAS_SEGMENT_SIZE",
                                       sz, strerror(errno));
        close(fd);
        return st;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (base == MAP_FAILED) {
        gas_status_t st = gas_rt_error(GAS_ERR_NOMEM, "gas_init",
                                       "cannot map a %s segment: %s; lower GAS_SEGMENT_SIZE",
                                       sz, strerror(errno));
        close(fd);
        return st;
    }
    gas_status_t st = gas_al_place_apply(pl, base, size);
    if (st != GAS_OK) {
        munmap(base, size);
        close(fd);
        return st;
    }
    gas_al_fault_track(base, size, o->rank);
    /* The first touch: the header page, under the policy just set. */
    struct gas_al_seg_hdr *hdr = gas_al_seg_hdr(base);
    hdr->rank = o->rank;
    hdr->job_key = o->job_key;
    hdr->size = size;
    hdr->flags = pl->advice == MADV_HUGEPAGE ? GAS_AL_SEG_F_HUGE
               : pl->advice == MADV_NOHUGEPAGE ? GAS_AL_SEG_F_NOHUGE : 0;
    __atomic_store_n(&hdr->magic, GAS_AL_SEG_MAGIC, __ATOMIC_RELEASE);
    *seg_p = (struct gas_al_segment){.fd = fd, .base = base, .size = size, .hugetlb = pl->hugetlb};
    return GAS_OK;
}

gas_status_t gas_al_segment_attach(int owner, pid_t pid, int fd, uint64_t size, char **base_p)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    int pfd = open(path, O_RDWR | O_CLOEXEC);
    if (pfd < 0)
        return GAS_ERR_PEER;   /* errno says why; the caller raises it */
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, pfd, 0);
    int err = errno;
    close(pfd);
    if (base == MAP_FAILED) {
        char sz[32];
        gas_rt_format_bytes(sz, sizeof sz, size);
        return gas_rt_error(GAS_ERR_NOMEM, "connect",
                            "cannot map rank %d's %s segment: %s; every rank maps the whole "
                            "segment of each rank on its node, lower GAS_SEGMENT_SIZE",
                            owner, sz, strerror(err));
    }
    /* Repeat the owner's huge-page advice, so first touches from here get the same pages. */
    uint32_t flags = gas_al_seg_hdr(base)->flags;
    if (flags & GAS_AL_SEG_F_HUGE)
        madvise(base, size, MADV_HUGEPAGE);
    else if (flags & GAS_AL_SEG_F_NOHUGE)
        madvise(base, size, MADV_NOHUGEPAGE);
    madvise(base, size, MADV_DONTDUMP);
    gas_al_fault_track(base, size, owner);
    *base_p = base;
    return GAS_OK;
}

void gas_al_segment_detach(char *base, uint64_t size)
{
    if (base) {
        gas_al_fault_untrack(base);
        munmap(base, size);
    }
}

void gas_al_segment_destroy(struct gas_al_segment *seg)
{
    if (seg->base) {
        gas_al_fault_untrack(seg->base);
        munmap(seg->base, seg->size);
    }
    if (seg->fd >= 0)
        close(seg->fd);
    seg->base = NULL;
    seg->fd = -1;
}

uint64_t gas_al_segment_backed(const struct gas_al_segment *seg)
{
    struct stat st;
    if (seg->fd < 0 || fstat(seg->fd, &st) != 0)
        return 0;
    return (uint64_t)st.st_blocks * 512u;
}

/* cachestat(2), Linux 6.5: pages of a file's range in its page cache (libc has no wrapper). */
#ifdef __NR_cachestat
#define CACHESTAT_NR __NR_cachestat
#else
#define CACHESTAT_NR 451   /* the same on every architecture; older headers lack it */
#endif
struct cachestat_range {
    uint64_t off, len;
};
struct cachestat_counts {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* Bytes of the pages of [off, off + len) that are not in the segment file
 * (swapped-out pages count as not there): all of len where the kernel cannot
 * tell (before Linux 6.5).  Not for hugetlb segments. */
static uint64_t segment_unbacked(const struct gas_al_segment *seg, uint64_t off, uint64_t len)
{
    /* fallocate'd shmem pages are in the page cache but not "uptodate": SEEK_DATA
     * and mincore call them holes, cachestat counts them. */
    enum { PAGE = 4096 };
    uint64_t first = off / PAGE, pages = len ? (off + len - 1) / PAGE - first + 1 : 0;
    struct cachestat_range r = {.off = off, .len = len};
    struct cachestat_counts c = {0};
    if (len == 0 || syscall(CACHESTAT_NR, seg->fd, &r, &c, 0) != 0 || c.nr_cache > pages)
        return len;   /* cannot tell (before Linux 6.5): all of it */
    return (pages - c.nr_cache) * PAGE;
}

/*
 * Only the pages of the range not backed yet need memory (a range freed and
 * taken again keeps its pages): the limits are asked about those alone.
 * hugetlbfs cannot say which of its pages are there, but its fallocate fails
 * cleanly (ENOSPC) when the pool is short: it is the check there, and the
 * pool explains a failure.
 */
int gas_al_segment_back(const struct gas_al_segment *seg, const struct gas_al_limits *l,
                        uint64_t off, uint64_t len, char *why, size_t cap)
{
    uint64_t need = seg->hugetlb ? 0 : segment_unbacked(seg, off, len);
    if (need > 0 && gas_al_limits_room(l, 0, need, why, cap) != 0)
        return -1;
    if (fallocate(seg->fd, 0, (off_t)off, (off_t)len) == 0)
        return 0;
    int err = errno;
    if (seg->hugetlb && gas_al_limits_room(l, 1, len, why, cap) != 0)
        return -1;
    char desc[400], a[32];
    gas_al_limits_describe(l, seg->hugetlb, desc, sizeof desc);
    gas_rt_format_bytes(a, sizeof a, len);
    snprintf(why, cap, "backing %s failed: %s (the limits here: %s)", a, strerror(err), desc);
    return -1;
}

void gas_al_segment_unback(const struct gas_al_segment *seg, uint64_t off, uint64_t len)
{
    fallocate(seg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
}

int gas_al_segment_is_hole(const struct gas_al_segment *seg, uint64_t off, uint64_t len)
{
    off_t data = lseek(seg->fd, (off_t)off, SEEK_DATA);
    if (data < 0)
        return errno == ENXIO;  /* no data at or after off */
    return (uint64_t)data >= off + len;
}
