/*
 * hosts.c - the hosts of a job (--hosts, --hostfile) and the placement of its
 * ranks on them.
 *
 * Slots: a host's slot count comes from --ppn K (every host), else from
 * `name:K` / `slots=K`; hosts without one share the ranks left over equally
 * (rounded up).  Placement is by block: ranks 0.. fill the first host's
 * slots, then the next host's, in the order given; hosts left without ranks
 * are not used.  More ranks than slots is a usage error.
 *
 * A host named `localhost` or like this machine (its host name, or that name's
 * first label) is this host: its ranks are forked as without --hosts.
 */
#include "gasrun.h"
#include "log.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOSTFILE_LINE_MAX 4096

/* Letters, digits and `extra`, up to max bytes, not starting with '-' (a host
 * name goes to the launcher as one argument: no option look-alikes). */
static bool valid_name(const char *s, size_t max, const char *extra)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && strchr(extra, s[i]) == NULL)
            return false;
    return true;
}

#define HOST_NAME_CHARS "._-@%+"
#define IFACE_NAME_CHARS "._-:@"

static bool valid_ip(const char *s)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* Append a host; `where` names the source for messages.  0, or -1 after a message. */
static int add_host(struct gr_job *job, const char *where, const char *name, int slots,
                    const char *iface, const char *addr)
{
    if (!valid_name(name, 255, HOST_NAME_CHARS)) {
        gr_msg("%s: '%s' is not a host name (letters, digits and ._-@%%+; not starting "
               "with -)", where, name);
        return -1;
    }
    for (int i = 0; i < job->nhosts; i++) {
        if (strcmp(job->hosts[i].name, name) == 0) {
            gr_msg("%s: host '%s' is listed twice; give it one slot count", where, name);
            return -1;
        }
    }
    if (job->nhosts == GR_MAX_RANKS) {
        gr_msg("%s: more than %d hosts", where, GR_MAX_RANKS);
        return -1;
    }
    struct gr_host *n = realloc(job->hosts, (size_t)(job->nhosts + 1) * sizeof *n);
    if (n == NULL) {
        gr_msg("out of memory");
        return -1;
    }
    job->hosts = n;
    struct gr_host *h = &job->hosts[job->nhosts];
    *h = (struct gr_host){ .slots = slots };
    h->name = strdup(name);
    h->iface = iface ? strdup(iface) : NULL;
    h->addr = addr ? strdup(addr) : NULL;
    job->nhosts++;
    if (h->name == NULL || (iface && h->iface == NULL) || (addr && h->addr == NULL)) {
        gr_msg("out of memory");
        return -1;
    }
    return 0;
}

/* --hosts h1[:K],h2[:K],... */
static int parse_host_list(struct gr_job *job, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (copy == NULL) {
        gr_msg("out of memory");
        return -1;
    }
    int rc = 0, count = 0;
    for (char *item = strtok_r(copy, ",", &save); item != NULL && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        int slots = 0;
        char *colon = strrchr(item, ':');
        if (colon != NULL) {
            *colon = '\0';
            if (gr_parse_count(colon + 1, &slots) < 0) {
                gr_msg("--hosts: '%s:%s' wants a slot count from 1 to %d after the colon",
                       item, colon + 1, GR_MAX_RANKS);
                rc = -1;
                break;
            }
        }
        rc = add_host(job, "--hosts", item, slots, NULL, NULL);
        count++;
    }
    free(copy);
    if (rc == 0 && count == 0) {
        gr_msg("--hosts: no host in '%s'", list);
        rc = -1;
    }
    return rc;
}

/*
 * One hostfile line (comment already cut): name [slots=K] [iface=NAME] [addr=IP],
 * each key at most once.
 */
static int parse_hostfile_line(struct gr_job *job, const char *where, char *line)
{
    char *save = NULL, *name = strtok_r(line, " \t\r", &save);
    if (name == NULL)
        return 0;   /* blank or comment only */
    int slots = 0;   /* 0, NULL: not given yet (a given slots is 1 or more) */
    const char *iface = NULL, *addr = NULL;
    for (char *kv = strtok_r(NULL, " \t\r", &save); kv != NULL;
         kv = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(kv, '=');
        const char *val = eq ? eq + 1 : "";
        if (eq != NULL)
            *eq = '\0';
        if (eq != NULL && ((strcmp(kv, "slots") == 0 && slots) ||
                           (strcmp(kv, "iface") == 0 && iface) ||
                           (strcmp(kv, "addr") == 0 && addr))) {
            gr_msg("%s: %s= given twice for host %s (each key once a line)", where, kv, name);
            return -1;
        }
        if (eq != NULL && strcmp(kv, "slots") == 0 && gr_parse_count(val, &slots) == 0)
            continue;
        if (eq != NULL && strcmp(kv, "iface") == 0 && valid_name(val, 15, IFACE_NAME_CHARS)) {
            iface = val;
            continue;
        }
        if (eq != NULL && strcmp(kv, "addr") == 0 && valid_ip(val)) {
            addr = val;
            continue;
        }
        if (eq != NULL && (strcmp(kv, "slots") == 0 || strcmp(kv, "iface") == 0 ||
                           strcmp(kv, "addr") == 0))
            gr_msg("%s: bad value '%s' for %s (slots=1..%d, iface=an interface name, "
                   "addr=a numeric IP address)", where, val, kv, GR_MAX_RANKS);
        else
            gr_msg("%s: '%s' is not a key=value this file knows (slots=K, iface=NAME, "
                   "addr=IP)", where, kv);
        return -1;
    }
    return add_host(job, where, name, slots, iface, addr);
}

static int read_hostfile(struct gr_job *job, const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        gr_msg("--hostfile %s: %s", path, strerror(errno));
        return -1;
    }
    char line[HOSTFILE_LINE_MAX], where[512];
    int rc = 0;
    for (int lineno = 1; rc == 0 && fgets(line, sizeof line, f) != NULL; lineno++) {
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            gr_msg("%s: line longer than %d bytes", where, HOSTFILE_LINE_MAX - 2);
            rc = -1;
            break;
        }
        line[strcspn(line, "#\n")] = '\0';
        rc = parse_hostfile_line(job, where, line);
    }
    if (rc == 0 && ferror(f)) {
        gr_msg("--hostfile %s: %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && job->nhosts == 0) {
        gr_msg("--hostfile %s: no hosts in it", path);
        rc = -1;
    }
    return rc;
}

static bool is_this_host(const char *name)
{
    char self[256] = "";
    if (strcmp(name, "localhost") == 0)
        return true;
    if (gethostname(self, sizeof self - 1) < 0 || self[0] == '\0')
        return false;
    if (strcmp(name, self) == 0)
        return true;
    size_t label = strcspn(self, ".");
    return self[label] == '.' && strlen(name) == label && strncmp(name, self, label) == 0;
}

/* Slot counts, then block placement; 0, or -1 after a message. */
static int place_ranks(struct gr_job *job)
{
    int given = 0, without = 0;
    for (int i = 0; i < job->nhosts; i++) {
        struct gr_host *h = &job->hosts[i];
        if (job->opts.ppn > 0)
            h->slots = job->opts.ppn;
        if (h->slots > 0)
            given += h->slots;
        else
            without++;
    }
    int left = job->nranks > given ? job->nranks - given : 0;
    int share = without > 0 ? (left + without - 1) / without : 0;
    int r = 0;
    for (int i = 0; i < job->nhosts; i++) {
        struct gr_host *h = &job->hosts[i];
        int slots = h->slots > 0 ? h->slots : share;
        int k = slots < job->nranks - r ? slots : job->nranks - r;
        h->first = r;
        h->nranks = k;
        h->local = is_this_host(h->name);
        for (int j = 0; j < k; j++, r++) {
            job->ranks[r].host = i;
            job->ranks[r].local_rank = j;
            job->ranks[r].remote = !h->local;
            job->nremote += !h->local;
        }
    }
    if (r < job->nranks) {
        gr_msg("%d ranks do not fit in the %d slots of %d host%s: give more slots (name:K, "
               "slots=K) or --ppn", job->nranks, r, job->nhosts, job->nhosts == 1 ? "" : "s");
        return -1;
    }
    for (int i = 0; i < job->nhosts; i++) {
        const struct gr_host *h = &job->hosts[i];
        if (h->nranks > 0)
            gr_info("host %s: ranks %d..%d%s%s%s%s%s", h->name, h->first,
                    h->first + h->nranks - 1, h->local ? " (this host: forked)" : "",
                    h->iface ? ", iface=" : "", h->iface ? h->iface : "",
                    h->addr ? ", addr=" : "", h->addr ? h->addr : "");
    }
    return 0;
}

int gr_hosts_setup(struct gr_job *job)
{
    job->multihost = job->opts.hosts != NULL || job->opts.hostfile != NULL;
    int rc = 0;
    if (job->opts.hosts != NULL)
        rc = parse_host_list(job, job->opts.hosts);
    else if (job->opts.hostfile != NULL)
        rc = read_hostfile(job, job->opts.hostfile);
    else
        rc = add_host(job, "gasrun", "localhost", job->nranks, NULL, NULL);
    if (rc < 0)
        return 2;
    return place_ranks(job) < 0 ? 2 : -1;
}

const char *gr_rank_name(const struct gr_job *job, int r, char *buf)
{
    if (job->multihost)
        snprintf(buf, 128, "rank %d (%.100s)", r, job->hosts[job->ranks[r].host].name);
    else
        snprintf(buf, 128, "rank %d", r);
    return buf;
}
