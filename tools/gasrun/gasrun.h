/*
 * gasrun.h - the job launcher's shared state and the interfaces of its parts.
 *
 *   main.c        job set-up, the event loop, exit status
 *   options.c     command line
 *   launch.c      program lookup, fork/exec of the ranks
 *   reap.c        child exits
 *   signals.c     signalfd: SIGCHLD, forwarded signals
 *   stdio.c       rank output forwarding with tags, stdin relay
 *   teardown.c    failing the job, killing ranks, the final sweep
 *   rendezvous.c  the boot protocol server (knows nothing of processes)
 *   kvstore.c     its key-value store
 *   bind.c        --bind: the CPUs (and so the NUMA node) of each rank
 *   loop.c, log.c event loop, messages
 */
#ifndef GR_GASRUN_H
#define GR_GASRUN_H

#include "loop.h"

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#define GR_MAX_RANKS   4096
#define GR_GRACE_S     2.0          /* SIGTERM (or forwarded signal) -> SIGKILL */
#define GR_LINE_MAX    (64 * 1024)  /* longest output line held before it is cut */

struct gr_opts {
    int nranks;
    double timeout;         /* seconds, 0 = none */
    const char *timeout_arg;/* as given, for the message */
    int tag;                /* 1/0, or -1: on when nranks > 1 */
    int bind;               /* enum gr_bind; GR_BIND_DEFAULT: chosen from the topology */
    char **argv;            /* program and its arguments */
};

/* Parse argv; returns -1 to go on, or the status to exit with (0 after --help). */
int gr_options_parse(int argc, char **argv, struct gr_opts *o);

struct gr_job;

/* One output stream of one rank (its stdout or stderr pipe). */
struct gr_stream {
    struct gr_watch w;      /* first */
    struct gr_job *job;
    int fd;                 /* read end, -1 once closed */
    int out_fd;             /* STDOUT_FILENO or STDERR_FILENO of gasrun */
    int rank;
    char tag[16];           /* "[r] " */
    size_t taglen;
    char *buf;              /* the line being assembled */
    size_t len, cap;
};

struct gr_rank {
    pid_t pid;              /* also its process group; 0 if never started */
    bool running;           /* started and not yet reaped */
    bool boot_closed;       /* its boot connection can carry nothing more */
    bool gone;              /* exited 0 and boot_closed: can take part in nothing */
    int wstatus;
    struct gr_stream out, err;
};

struct gr_job {
    struct gr_opts opts;
    int nranks;
    bool tag;
    char *prog_path;        /* resolved program */
    uint64_t key;
    uint32_t id;
    pid_t self;

    struct gr_rank *ranks;
    int live;               /* ranks running */
    int *gone;              /* ranks that are gone, in order */
    int ngone;
    struct gr_rdv *rdv;

    int exit_code;          /* -1 until the first failure or the end decides it */
    bool tearing;           /* teardown started */
    bool killed;            /* SIGKILL sent to every group */
    int interrupts;         /* terminating signals received */
    double start, timeout_at, grace_at;

    int devnull;            /* stdin of ranks > 0 */
    int rank0_stdin;        /* fd that becomes rank 0's stdin */
    struct rlimit nofile;   /* the limit gasrun was started with (ranks get it back) */
    int bind;               /* enum gr_bind in force */
    cpu_set_t *cpusets;     /* per rank, NULL when ranks are not bound */
};

/* bind.c */
enum gr_bind { GR_BIND_DEFAULT = 0, GR_BIND_NONE, GR_BIND_CORE, GR_BIND_NUMA };
int gr_bind_parse(const char *arg, int *bind_p);
int gr_bind_plan(struct gr_job *job);
void gr_bind_child(const struct gr_job *job, int r);

/* launch.c */
int gr_resolve_program(const char *name, char **path_p);
int gr_launch(struct gr_job *job);

/* reap.c */
void gr_reap(struct gr_job *job);
void gr_rank_gone_check(struct gr_job *job, int rank);

/* signals.c */
int gr_signals_init(struct gr_job *job);
void gr_signals_child_reset(void);

/* stdio.c */
int gr_stream_open(struct gr_job *job, struct gr_stream *s, int fd, int rank, int out_fd);
void gr_streams_drain(struct gr_job *job);
int gr_stdin_setup(struct gr_job *job);
void gr_stdin_started(struct gr_job *job);
void gr_stdin_close(void);

/* teardown.c */
void gr_job_fail(struct gr_job *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void gr_job_interrupt(struct gr_job *job, int sig);
void gr_job_signal(struct gr_job *job, int sig, bool running_only);
void gr_job_check_stuck(struct gr_job *job);
int gr_job_wait_ms(const struct gr_job *job);
void gr_job_tick(struct gr_job *job);
void gr_job_sweep(struct gr_job *job);
void gr_shm_sweep(uint32_t job_id);

#endif
