/* boot_wire.c - framing of the rank <-> gasrun rendezvous protocol (see boot_wire.h). */
#include "boot_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Write all of buf: send() with MSG_NOSIGNAL on a socket, so that a broken
 * connection is -EPIPE for the caller to report and never kills the process
 * with SIGPIPE; write() on anything else (tests hand pipes). */
static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    int sock = 1;
    while (len > 0) {
        ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0 && sock && errno == ENOTSOCK) {
            sock = 0;
            continue;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -ECONNRESET;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void gas_boot_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

void gas_boot_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t gas_boot_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

uint64_t gas_boot_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

int gas_boot_wire_send(int fd, unsigned type, const void *payload, size_t len)
{
    unsigned char hdr[12];
    if (len > GAS_BOOT_MAX_PAYLOAD)
        return -EMSGSIZE;
    gas_boot_put_u32(hdr, GAS_BOOT_WIRE_MAGIC);
    hdr[4] = (unsigned char)type;
    hdr[5] = (unsigned char)(type >> 8);
    hdr[6] = hdr[7] = 0;
    gas_boot_put_u32(hdr + 8, (uint32_t)len);
    int rc = write_all(fd, hdr, sizeof hdr);
    if (rc == 0 && len > 0)
        rc = write_all(fd, payload, len);
    return rc;
}

int gas_boot_wire_recv(int fd, unsigned *type_p, void **payload_p, size_t *len_p)
{
    unsigned char hdr[12];
    int rc = read_all(fd, hdr, sizeof hdr);
    if (rc < 0)
        return rc;
    uint32_t len = gas_boot_get_u32(hdr + 8);
    if (gas_boot_get_u32(hdr) != GAS_BOOT_WIRE_MAGIC || len > GAS_BOOT_MAX_PAYLOAD)
        return -EPROTO;
    char *payload = malloc((size_t)len + 1);
    if (payload == NULL)
        return -ENOMEM;
    rc = read_all(fd, payload, len);
    if (rc < 0) {
        free(payload);
        return rc;
    }
    payload[len] = '\0';
    *type_p = (unsigned)hdr[4] | ((unsigned)hdr[5] << 8);
    *payload_p = payload;
    *len_p = len;
    return 0;
}

static int bit_is(const unsigned char *bits, uint32_t r, int set)
{
    return ((bits[r / 8] >> (r % 8)) & 1) == (set != 0);
}

uint32_t gas_boot_format_ranks(const unsigned char *bits, uint32_t nranks, int set, char *buf,
                               size_t size)
{
    uint32_t count = 0;
    size_t used = 0;
    int cut = 0;
    buf[0] = '\0';
    for (uint32_t r = 0; r < nranks; r++) {
        if (!bit_is(bits, r, set))
            continue;
        uint32_t last = r;
        while (last + 1 < nranks && bit_is(bits, last + 1, set))
            last++;
        count += last - r + 1;
        char item[32];
        int n = last == r ? snprintf(item, sizeof item, "%s%u", used ? ", " : "", r)
                          : snprintf(item, sizeof item, "%s%u-%u", used ? ", " : "", r, last);
        if (!cut && used + (size_t)n + 6 <= size) { /* room left for ", ..." */
            memcpy(buf + used, item, (size_t)n + 1);
            used += (size_t)n;
        } else if (!cut) {
            memcpy(buf + used, used ? ", ..." : "...", used ? 6 : 4);
            cut = 1;
        }
        r = last;
    }
    return count;
}
