/*
 * gasrun.h - the job launcher's shared state and the interfaces of its parts.
 *
 *   main.c        job set-up, the event loop, exit status
 *   options.c     command line
 *   hosts.c       --hosts / --hostfile, placing ranks on hosts
 *   launch.c      program lookup, fork/exec of the ranks
 *   remote.c      the launcher command line for a rank on another host
 *   hostaddr.c    which address each host reaches gasrun's rendezvous at
 *   listen.c      the rendezvous' TCP listeners; HELLO check of new connections
 *   reap.c        child exits
 *   signals.c     signalfd: SIGCHLD, forwarded signals
 *   stdio.c       rank output forwarding with tags, stdin relay
 *   sink.c        gasrun's stdout and stderr, written without blocking the loop
 *   teardown.c    failing the job, killing ranks, the final sweep
 *   rendezvous.c  the boot protocol server (knows nothing of processes)
 *   kvstore.c     its key-value store
 *   bind.c        --bind-to: the CPUs (and so the NUMA node) of each local rank
 *   loop.c, log.c event loop, messages
 */
#ifndef GR_GASRUN_H
#define GR_GASRUN_H

#include "loop.h"
#include "runtime/boot_tcp.h"

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/uio.h>

#define GR_MAX_RANKS   4096
#define GR_GRACE_S     2.0          /* SIGTERM (or forwarded signal) -> SIGKILL */
#define GR_LINE_MAX    (64 * 1024)  /* longest output line held before it is cut */

#define GR_AUTH_TIMEOUT_S 30.0   /* a TCP connection must say HELLO within this, unless
                                    GAS_BOOT_TIMEOUT (the ranks' time to connect) says otherwise */
#define GR_AUTH_MAX       64     /* connections waiting for their HELLO */
#define GR_LAUNCH_WINDOW  8      /* launchers per host in flight (launch.c) */
#define GR_LAUNCH_SETTLE_S 2.0   /* how long a launch counts as in flight at most */
#define GR_LAUNCH_POLL_S  0.1    /* tick while remote ranks wait to be started */
#define GR_STDIN_FG_POLL_MS 250  /* relaying a terminal from the background: look this often */
#define GR_JOIN_REPORT_S  2.0    /* --verbose: how often the ranks not yet connected are named */

enum gr_launcher_mode { GR_LAUNCH_AUTO, GR_LAUNCH_EXEC, GR_LAUNCH_SHELL };

struct gr_opts {
    int nranks;
    double timeout;         /* seconds, 0 = none */
    char timeout_shown[48]; /* as given, with " s" after a bare number: for the message */
    int tag;                /* 1/0, or -1: on when nranks > 1 */
    const char *hosts;      /* --hosts h1[:K],h2[:K],... */
    const char *hostfile;   /* --hostfile FILE */
    int ppn;                /* --ppn K, 0 = the slots decide */
    const char *launcher;   /* --launcher CMD, NULL = GR_DEFAULT_LAUNCHER */
    int launcher_mode;      /* enum gr_launcher_mode */
    const char *bind;       /* --bind ADDR[:PORT] */
    int cpu_bind;           /* --bind-to: enum gr_bind; GR_BIND_DEFAULT: from the topology */
    char **argv;            /* program and its arguments */
};

#define GR_DEFAULT_LAUNCHER "ssh -o BatchMode=yes -T -x"

/* A host of the job.  Without --hosts/--hostfile there is one: this host. */
struct gr_host {
    char *name;
    int slots;              /* as given (slots=K, name:K, --ppn); 0 = not given */
    char *iface;            /* hostfile iface=, or NULL */
    char *addr;             /* hostfile addr=, or NULL */
    bool local;             /* this host: ranks are forked, not launched */
    int first, nranks;      /* the ranks placed here */
    int next;               /* the next of them to start */
    char boot_addr[GAS_BOOT_ADDR_MAX]; /* where its ranks reach the rendezvous */
};

/* Parse argv; returns -1 to go on, or the status to exit with (0 after --help). */
int gr_options_parse(int argc, char **argv, struct gr_opts *o);
/* A rank or slot count, 1..GR_MAX_RANKS; 0 or -1. */
int gr_parse_count(const char *arg, int *n_p);

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
    bool cut;               /* tagged: a piece was just cut and given a newline */
};

struct gr_rank {
    pid_t pid;              /* also its process group; 0 if never started.  For
                             * a rank on another host: the launcher's */
    int host;               /* index into job->hosts */
    int local_rank;         /* among the ranks of its host */
    bool remote;            /* started through the launcher, boots over TCP */
    bool tcp;               /* its TCP boot connection was accepted */
    double started_at;      /* when its launcher was started */
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
    bool stderr_tty;        /* gasrun's own stderr is a terminal (GASRUN_STDERR_TTY) */
    char *prog_path;        /* resolved program */
    uint64_t key;
    uint32_t id;
    pid_t self;

    struct gr_host *hosts;
    int nhosts;
    bool multihost;         /* --hosts or --hostfile: name hosts in messages */
    int nremote;            /* ranks started through the launcher */
    int unstarted;          /* of those, not started yet (launch window) */
    char **launcher;        /* its words, NULL-terminated */
    char *launcher_path;    /* resolved launcher[0] */
    bool launcher_shell;    /* pass the rank's command line as one sh word */
    char *cwd;              /* the ranks' working directory on other hosts */
    struct gr_net *net;     /* listeners and connections waiting for HELLO */

    struct gr_rank *ranks;
    int live;               /* ranks running */
    int *gone;              /* ranks that are gone, in order */
    int ngone;
    bool warned_nofini;     /* said once that a rank left without gas_finalize */
    double join_report_at;  /* --verbose: next naming of unconnected ranks, 0 = none */
    struct gr_rdv *rdv;

    int exit_code;          /* -1 until the first failure or the end decides it */
    bool tearing;           /* teardown started */
    bool killed;            /* SIGKILL sent to every group */
    int interrupts;         /* terminating signals received */
    bool timed_out;         /* --timeout ended it */
    double start, timeout_at, grace_at;

    int devnull;            /* stdin of ranks > 0 */
    int rank0_stdin;        /* fd that becomes rank 0's stdin */
    struct rlimit nofile;   /* the limit gasrun was started with (ranks get it back) */
    int cpu_bind;           /* enum gr_bind in force */
    cpu_set_t *cpusets;     /* per local rank of this host, NULL when not bound */
};

/* bind.c: --bind-to, for the ranks gasrun forks on its own host. */
enum gr_bind { GR_BIND_DEFAULT = 0, GR_BIND_NONE, GR_BIND_CORE, GR_BIND_NUMA };
int gr_bind_parse(const char *arg, int *bind_p);
int gr_bind_plan(struct gr_job *job);
void gr_bind_child(const struct gr_job *job, int r);

/* hosts.c: read the hosts, place the ranks (fills job->hosts and the ranks'
 * host/local_rank/remote); -1 to go on, else the status to exit with. */
int gr_hosts_setup(struct gr_job *job);
/* "rank R", or "rank R (host)" in a job with --hosts/--hostfile; buf >= 128 bytes. */
const char *gr_rank_name(const struct gr_job *job, int r, char *buf);

/* launch.c */
int gr_resolve_program(const char *name, char **path_p);
int gr_launch(struct gr_job *job);
void gr_launch_more(struct gr_job *job);

/* remote.c */
int gr_remote_setup(struct gr_job *job);
void gr_remote_exec(struct gr_job *job, int r) __attribute__((noreturn));
void gr_remote_free(struct gr_job *job);

/* hostaddr.c: the address (no port) that host h reaches this gasrun at;
 * 0, or -1 after a message. */
int gr_host_local_addr(const struct gr_host *h, struct sockaddr_storage *ss, socklen_t *len_p);

/* listen.c */
int gr_net_setup(struct gr_job *job);
double gr_net_deadline(const struct gr_job *job);   /* next timer, or -1 */
void gr_net_tick(struct gr_job *job, double now);
void gr_net_fini(struct gr_job *job);

/* reap.c */
void gr_reap(struct gr_job *job);
void gr_rank_gone_check(struct gr_job *job, int rank);
void gr_job_check_unjoined(struct gr_job *job);
void gr_job_report_unjoined(struct gr_job *job, double now);

/* signals.c */
int gr_signals_init(struct gr_job *job);
void gr_signals_child_reset(void);
/* Whether a terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) is pending. */
bool gr_signals_terminating_pending(void);

/* sink.c: every write to gasrun's stdout (fd 1) or stderr (fd 2) goes here,
 * gr_msg's too; queued when the reader does not take it at once. */
void gr_sink_writev(int fd, const struct iovec *iov, int cnt);
/* Whether fd holds so much that rank output to it should not be read now. */
bool gr_sink_full(int fd);
/* The loop runs: wait for room through it, and call on_room(fd) when a full
 * sink has room again. */
void gr_sinks_loop_ready(void (*on_room)(int fd));
/* Wait until fd's queue is written (forced: give up after a while without
 * progress); whether it is no longer full. */
bool gr_sink_settle(int fd, bool forced);
/* After the job: write what is queued (as gr_sink_settle), then write directly. */
void gr_sinks_finish(bool forced);

/* stdio.c */
/* The loop runs: rank output to a full sink pauses, and resumes when it drains. */
void gr_streams_start(struct gr_job *job);
int gr_stream_open(struct gr_job *job, struct gr_stream *s, int fd, int rank, int out_fd);
void gr_streams_drain(struct gr_job *job, bool forced);
int gr_stdin_setup(struct gr_job *job);
void gr_stdin_started(struct gr_job *job);
void gr_stdin_close(void);
/* Relaying a terminal: notice gasrun moving to or from the foreground (each
 * loop round), and how soon to look again (-1: no need). */
void gr_stdin_tick(void);
int gr_stdin_wait_ms(void);

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
