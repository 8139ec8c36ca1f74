/*
 * remote.c - the command that starts a rank on another host.
 *
 * For rank r on host H gasrun runs (a child of its own, per rank):
 *
 *     LAUNCHER... H env [-C CWD] GASRUN_RANK=r ... VAR=VALUE... PROGRAM ARGS...
 *
 * LAUNCHER is --launcher CMD split at blanks (no quoting: CMD is no shell
 * line), ssh by default.  In exec mode the words after H are separate
 * arguments, as execvp wants them (ip netns exec, nsenter, sudo).  In shell
 * mode they are one argument, `exec env ...` with every word quoted for a POSIX
 * sh, because ssh joins its arguments with blanks and hands the result to the
 * remote login shell.  The environment of the rank is on that command line:
 * GASRUN_RANK, GASRUN_NRANKS, GASRUN_LOCAL_RANK, GASRUN_LOCAL_SIZE,
 * GASRUN_JOB_KEY, GASRUN_JOB_ID, GASRUN_TAG_OUTPUT, GASRUN_STDERR_TTY,
 * GASRUN_BOOT_ADDR, every GAS_* variable of gasrun's environment, and
 * GAS_UDP_IFACE for a host with iface= or addr=.
 * See docs/gasrun.md.
 */
#include "gasrun.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Split CMD at blanks; NULL-terminated, or NULL when out of memory. */
static char **split_words(const char *cmd)
{
    size_t n = 0, cap = 8;
    char **words = malloc(cap * sizeof *words);
    const char *p = cmd;
    while (words != NULL) {
        p += strspn(p, " \t");
        if (*p == '\0')
            break;
        size_t len = strcspn(p, " \t");
        if (n + 2 > cap) {
            char **w = realloc(words, (cap *= 2) * sizeof *w);
            if (w == NULL)
                break;
            words = w;
        }
        if ((words[n] = strndup(p, len)) == NULL)
            break;
        n++;
        p += len;
    }
    if (words == NULL || *p != '\0') {
        for (size_t i = 0; words != NULL && i < n; i++)
            free(words[i]);
        free(words);
        return NULL;
    }
    words[n] = NULL;
    return words;
}

int gr_remote_setup(struct gr_job *job)
{
    if (job->nremote == 0)
        return 0;
    const char *cmd = job->opts.launcher ? job->opts.launcher : GR_DEFAULT_LAUNCHER;
    job->launcher = split_words(cmd);
    if (job->launcher == NULL) {
        gr_msg("out of memory");
        return -1;
    }
    const char *base = strrchr(job->launcher[0], '/');
    base = base ? base + 1 : job->launcher[0];
    job->launcher_shell = job->opts.launcher_mode == GR_LAUNCH_SHELL ||
                          (job->opts.launcher_mode == GR_LAUNCH_AUTO &&
                           (strcmp(base, "ssh") == 0 || strcmp(base, "rsh") == 0));
    if (gr_resolve_program(job->launcher[0], &job->launcher_path) < 0)
        return -1;
    job->cwd = getcwd(NULL, 0);
    if (job->cwd == NULL)
        gr_info("getcwd: %s: remote ranks start where the launcher puts them", strerror(errno));
    gr_info("launcher: %s (%s mode)", cmd, job->launcher_shell ? "shell" : "exec");
    return 0;
}

void gr_remote_free(struct gr_job *job)
{
    for (size_t i = 0; job->launcher != NULL && job->launcher[i] != NULL; i++)
        free(job->launcher[i]);
    free(job->launcher);
    free(job->launcher_path);
    free(job->cwd);
    job->launcher = NULL;
    job->launcher_path = job->cwd = NULL;
}

/* ---- in the launcher's child (no frees: it execs or exits) --------------- */

static void __attribute__((noreturn)) child_oom(int r)
{
    dprintf(STDERR_FILENO, "gasrun: rank %d: out of memory building its command line\n", r);
    _exit(127);
}

static char *var(int r, const char *name, const char *fmt, unsigned long long v)
{
    char *s;
    char val[32];
    snprintf(val, sizeof val, fmt, v);
    if (asprintf(&s, "%s=%s", name, val) < 0)
        child_oom(r);
    return s;
}

/* Words that a POSIX sh reads back unchanged stay as they are. */
static bool sh_plain(const char *w)
{
    return *w != '\0' &&
           strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                     "_@%+=:,./-") == strlen(w);
}

/* Append w to buf (at *len), quoted for sh: '...' with ' written as '\''. */
static void sh_append(char *buf, size_t *len, const char *w)
{
    if (*len > 0)
        buf[(*len)++] = ' ';
    if (sh_plain(w)) {
        size_t n = strlen(w);
        memcpy(buf + *len, w, n);
        *len += n;
        return;
    }
    buf[(*len)++] = '\'';
    for (const char *p = w; *p; p++) {
        if (*p == '\'') {
            memcpy(buf + *len, "'\\''", 4);
            *len += 4;
        } else {
            buf[(*len)++] = *p;
        }
    }
    buf[(*len)++] = '\'';
}

static char *sh_join(int r, char **words)
{
    size_t need = 1;
    for (char **w = words; *w; w++)
        need += 4 * strlen(*w) + 3;
    char *buf = malloc(need);
    if (buf == NULL)
        child_oom(r);
    size_t len = 0;
    for (char **w = words; *w; w++)
        sh_append(buf, &len, *w);
    buf[len] = '\0';
    return buf;
}

void gr_remote_exec(struct gr_job *job, int r)
{
    const struct gr_rank *rk = &job->ranks[r];
    const struct gr_host *h = &job->hosts[rk->host];
    size_t nl = 0, na = 0, ne = 0;
    while (job->launcher[nl])
        nl++;
    while (job->opts.argv[na])
        na++;
    while (environ[ne])
        ne++;
    /* exec env -C CWD + 10 GASRUN_/GAS_UDP_IFACE + GAS_* + program and args */
    char **cmd = calloc(4 + 10 + ne + na + 1, sizeof *cmd);
    if (cmd == NULL)
        child_oom(r);
    size_t n = 0;
    if (job->launcher_shell)
        cmd[n++] = "exec";
    cmd[n++] = "env";
    if (job->cwd != NULL) {
        cmd[n++] = "-C";
        cmd[n++] = job->cwd;
    }
    cmd[n++] = var(r, "GASRUN_RANK", "%llu", (unsigned long long)r);
    cmd[n++] = var(r, "GASRUN_NRANKS", "%llu", (unsigned long long)job->nranks);
    cmd[n++] = var(r, "GASRUN_LOCAL_RANK", "%llu", (unsigned long long)rk->local_rank);
    cmd[n++] = var(r, "GASRUN_LOCAL_SIZE", "%llu", (unsigned long long)h->nranks);
    cmd[n++] = var(r, "GASRUN_JOB_KEY", "%016llx", (unsigned long long)job->key);
    cmd[n++] = var(r, "GASRUN_JOB_ID", "%08llx", (unsigned long long)job->id);
    cmd[n++] = var(r, "GASRUN_TAG_OUTPUT", "%llu", (unsigned long long)job->tag);
    cmd[n++] = var(r, "GASRUN_STDERR_TTY", "%llu", (unsigned long long)job->stderr_tty);
    if (asprintf(&cmd[n++], "GASRUN_BOOT_ADDR=%s", h->boot_addr) < 0)
        child_oom(r);
    /* The library's settings, as a forked rank would inherit them; the
     * host's own interface (below) wins over a job-wide GAS_UDP_IFACE. */
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "GAS_", 4) == 0)
            cmd[n++] = environ[i];
    if (h->iface != NULL || h->addr != NULL) {
        if (asprintf(&cmd[n++], "GAS_UDP_IFACE=%s", h->iface ? h->iface : h->addr) < 0)
            child_oom(r);
    }
    for (size_t i = 0; i < na; i++)
        cmd[n++] = job->opts.argv[i];
    cmd[n] = NULL;

    char **argv = calloc(nl + 1 + (job->launcher_shell ? 1 : n) + 1, sizeof *argv);
    if (argv == NULL)
        child_oom(r);
    size_t m = 0;
    for (size_t i = 0; i < nl; i++)
        argv[m++] = job->launcher[i];
    argv[m++] = h->name;
    if (job->launcher_shell)
        argv[m++] = sh_join(r, cmd);
    else
        for (size_t i = 0; i < n; i++)
            argv[m++] = cmd[i];
    argv[m] = NULL;

    /* An inherited boot fd or address would be taken for this rank's own. */
    unsetenv("GASRUN_BOOT_FD");
    unsetenv("GASRUN_BOOT_ADDR");
    execv(job->launcher_path, argv);
    int err = errno;
    dprintf(STDERR_FILENO, "gasrun: rank %d: cannot execute the launcher %s: %s\n", r,
            job->launcher_path, strerror(err));
    _exit(127);
}
