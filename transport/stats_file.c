/*
 * stats_file.c - GAS_STATS_FILE: at gas_finalize each rank writes its
 * per-peer counters (gas_peer_stats) to a file of its own, one line of
 * name=value fields per peer it has a route to and one of its totals, for
 * `gas-info --stats FILE...` to print as a table.  The line format (version
 * 1) is documented in docs/udp.md ("Counters"); every line begins with
 * "gas-stats 1 " so that other text in the file is skipped by the reader.
 */
#include "transport/transport.h"

#include "runtime/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One counters line: who is a peer's rank, or -1 for the totals. */
static void write_line(FILE *f, int rank, int who, const gas_peer_stats_t *s)
{
    char peer[16];
    if (who < 0)
        snprintf(peer, sizeof peer, "total");
    else
        snprintf(peer, sizeof peer, "%d", who);
    fprintf(f, "gas-stats 1 rank=%d peer=%s transport=%s endpoint=%s route=%s "
            "datagrams_sent=%" PRIu64 " bytes_sent=%" PRIu64 " datagrams_received=%" PRIu64
            " bytes_received=%" PRIu64 " retransmits=%" PRIu64 " duplicates=%" PRIu64
            " acks_sent=%" PRIu64 " acks_received=%" PRIu64 " bad_datagrams=%" PRIu64
            " rejected=%" PRIu64 " srtt_ns=%" PRIu64 " rto_ns=%" PRIu64
            " rdma_work_requests=%" PRIu64 " rdma_bytes=%" PRIu64 " rdma_errors=%" PRIu64
            " rdma_signals=%" PRIu64 " rdma_redone=%" PRIu64 " upgraded_peers=%u\n",
            rank, peer, s->transport[0] ? s->transport : "-", s->endpoint[0] ? s->endpoint : "-",
            s->route[0] ? s->route : "-", s->datagrams_sent, s->bytes_sent,
            s->datagrams_received, s->bytes_received, s->retransmits, s->duplicates,
            s->acks_sent, s->acks_received, s->bad_datagrams, s->rejected, s->srtt_ns, s->rto_ns,
            s->rdma_work_requests, s->rdma_bytes, s->rdma_errors, s->rdma_signals,
            s->rdma_redone, s->upgraded_peers);
}

/* pattern with each "%r" replaced by rank (".RANK" appended when it has none); NULL: no memory. */
static char *file_name(const char *pattern, int rank)
{
    char num[16];
    int nlen = snprintf(num, sizeof num, "%d", rank);
    size_t n = strlen(pattern), uses = 0;
    for (const char *p = strstr(pattern, "%r"); p; p = strstr(p + 2, "%r"))
        uses++;
    char *out = malloc(n + (uses ? uses : 1) * ((size_t)nlen + 1) + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    for (const char *p = pattern; *p;) {
        if (p[0] == '%' && p[1] == 'r') {
            memcpy(o, num, (size_t)nlen);
            o += nlen;
            p += 2;
        } else {
            *o++ = *p++;
        }
    }
    if (uses == 0)
        o += sprintf(o, ".%s", num);
    *o = 0;
    return out;
}

void gas_tl_stats_save(const char *pattern, int rank, int nranks)
{
    char *name = file_name(pattern, rank);
    if (name == NULL)
        return;
    FILE *f = fopen(name, "w");
    if (f == NULL) {
        gas_log_warn("stats", "GAS_STATS_FILE: cannot write %s: %s", name, strerror(errno));
        free(name);
        return;
    }
    gas_peer_stats_t s;
    for (int r = 0; r < nranks; r++) {
        /* only the peers this rank made a route to (first contact) */
        if (r == rank || atomic_load(&gas_tl_peers_[r]) == NULL || gas_tl_stats(r, &s) != GAS_OK)
            continue;
        write_line(f, rank, r, &s);
    }
    if (gas_tl_stats(rank, &s) == GAS_OK) {
        snprintf(s.transport, sizeof s.transport, "all");
        write_line(f, rank, -1, &s);
    }
    if (fclose(f) != 0)
        gas_log_warn("stats", "GAS_STATS_FILE: cannot write %s: %s", name, strerror(errno));
    free(name);
}
