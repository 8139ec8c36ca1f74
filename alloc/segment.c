/* segment.c - creating and mapping segments (see segment.h). */
#include "segment.h"
#include "runtime/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t page_round(uint64_t n)
{
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

gas_status_t gas_al_segment_create(int rank, uint64_t size, struct gas_al_segment *seg_p)
{
    if (size < GAS_AL_SEG_MIN_BYTES)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_SEGMENT_SIZE=%llu is below the minimum of %u bytes",
                            (unsigned long long)size, GAS_AL_SEG_MIN_BYTES);
    size = page_round(size);
    char name[32];
    snprintf(name, sizeof name, "gas-seg-r%d", rank);
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return gas_rt_error(GAS_ERR_IO, "gas_init", "memfd_create for the segment failed: %s",
                            strerror(errno));
    if (ftruncate(fd, (off_t)size) != 0) {
        gas_status_t st = gas_rt_error(GAS_ERR_NOSPACE, "gas_init",
                                       "cannot size the segment to %llu bytes: %s; lower GAS_SEGMENT_SIZE",
                                       (unsigned long long)size, strerror(errno));
        close(fd);
        return st;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (base == MAP_FAILED) {
        gas_status_t st = gas_rt_error(GAS_ERR_NOMEM, "gas_init",
                                       "cannot map a %llu-byte segment: %s; lower GAS_SEGMENT_SIZE",
                                       (unsigned long long)size, strerror(errno));
        close(fd);
        return st;
    }
    struct gas_al_seg_hdr *hdr = gas_al_seg_hdr(base);
    hdr->rank = rank;
    hdr->size = size;
    __atomic_store_n(&hdr->magic, GAS_AL_SEG_MAGIC, __ATOMIC_RELEASE);
    *seg_p = (struct gas_al_segment){.fd = fd, .base = base, .size = size};
    return GAS_OK;
}

gas_status_t gas_al_segment_attach(pid_t pid, int fd, uint64_t size, char **base_p)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    int pfd = open(path, O_RDWR | O_CLOEXEC);
    if (pfd < 0)
        return gas_rt_error(GAS_ERR_PEER, "connect", "cannot open %s (a peer's segment): %s",
                            path, strerror(errno));
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, pfd, 0);
    int err = errno;
    close(pfd);
    if (base == MAP_FAILED)
        return gas_rt_error(GAS_ERR_NOMEM, "connect", "cannot map a peer's %llu-byte segment: %s",
                            (unsigned long long)size, strerror(err));
    *base_p = base;
    return GAS_OK;
}

void gas_al_segment_detach(char *base, uint64_t size)
{
    if (base)
        munmap(base, size);
}

void gas_al_segment_destroy(struct gas_al_segment *seg)
{
    if (seg->base)
        munmap(seg->base, seg->size);
    if (seg->fd >= 0)
        close(seg->fd);
    seg->base = NULL;
    seg->fd = -1;
}
