/* options.c - gasrun's command line. */
#include "gasrun.h"
#include "log.h"
#include "runtime/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: gasrun -n N [options] [--] program [args...]\n"
    "\n"
    "Start N ranks of program on this host, or on several hosts, and serve\n"
    "their rendezvous.\n"
    "\n"
    "  -n, --np N          number of ranks (1..4096), required\n"
    "      --hosts LIST    place ranks on hosts h1[:K],h2[:K],... (K slots each)\n"
    "      --hostfile FILE hosts from FILE: lines 'name [slots=K] [iface=NAME]\n"
    "                      [addr=IP]', # comments (configs/ has an example)\n"
    "      --ppn K         K ranks per host (instead of the slot counts)\n"
    "      --launcher CMD  start remote ranks with 'CMD host command...'\n"
    "                      (default: " GR_DEFAULT_LAUNCHER ")\n"
    "      --launcher-mode exec|shell\n"
    "                      pass the rank's command line as separate words\n"
    "                      (exec) or as one sh-quoted word (shell); default:\n"
    "                      shell when CMD is ssh, else exec\n"
    "      --rendezvous ADDR[:PORT]\n"
    "                      remote ranks reach the rendezvous at ADDR (default:\n"
    "                      this host's address on the route to each host)\n"
    "      --bind core|numa|none\n"
    "                      pin each rank on this host: core (one CPU), numa (one\n"
    "                      NUMA node's CPUs) or none; default: numa on a\n"
    "                      multi-node machine, else none (--bind-to is the same)\n"
    "      --timeout T     kill the job after T (seconds, or 500ms, 10min; exit 124);\n"
    "                      0 = never\n"
    "      --tag-output    prefix every output line of rank r with \"[r] \"\n"
    "                      (default when N > 1)\n"
    "      --no-tag-output pass output lines through untagged\n"
    "  -v, --verbose       log launches, rendezvous events and exits to stderr\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 when every rank exits 0; else the first failing rank's\n"
    "status (128+signal for a rank killed by a signal), the code of an ABORT,\n"
    "124 on --timeout, 128+signal when gasrun is interrupted, 127 when the\n"
    "program cannot be run, 2 on a usage error, 1 on other errors.\n"
    "See docs/gasrun.md.\n";

enum {
    OPT_TIMEOUT = 256, OPT_TAG, OPT_NO_TAG, OPT_HOSTS, OPT_HOSTFILE, OPT_PPN, OPT_LAUNCHER,
    OPT_LAUNCHER_MODE, OPT_RENDEZVOUS, OPT_BIND_TO
};

static const struct option long_opts[] = {
    { "np",            required_argument, NULL, 'n' },
    { "timeout",       required_argument, NULL, OPT_TIMEOUT },
    { "tag-output",    no_argument,       NULL, OPT_TAG },
    { "no-tag-output", no_argument,       NULL, OPT_NO_TAG },
    { "hosts",         required_argument, NULL, OPT_HOSTS },
    { "hostfile",      required_argument, NULL, OPT_HOSTFILE },
    { "ppn",           required_argument, NULL, OPT_PPN },
    { "launcher",      required_argument, NULL, OPT_LAUNCHER },
    { "launcher-mode", required_argument, NULL, OPT_LAUNCHER_MODE },
    { "rendezvous",    required_argument, NULL, OPT_RENDEZVOUS },
    { "bind",          required_argument, NULL, OPT_BIND_TO },
    { "bind-to",       required_argument, NULL, OPT_BIND_TO },
    { "verbose",       no_argument,       NULL, 'v' },
    { "help",          no_argument,       NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    gr_msg("%s (see gasrun --help)", what);
    return 2;
}

int gr_parse_count(const char *arg, int *n_p)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || v < 1 || v > GR_MAX_RANKS)
        return -1;
    *n_p = (int)v;
    return 0;
}

#define GR_TIMEOUT_MAX_S 1e9 /* about 31 years (the --timeout message names it); never: 0 */

/* --timeout's value: a duration as GAS_TIMEOUT takes it (bare: seconds; s, ms, us, ns, min). */
static int parse_seconds(const char *arg, double *s_p, const char **why_p)
{
    uint64_t ns;
    if (gas_rt_config_parse(GAS_CFG_T_TIME, NULL, arg, &ns, why_p) < 0)
        return -1;
    if ((double)ns / 1e9 > GR_TIMEOUT_MAX_S) {
        *why_p = "above 1e9 s";
        return -1;
    }
    *s_p = (double)ns / 1e9;
    return 0;
}

int gr_options_parse(int argc, char **argv, struct gr_opts *o)
{
    *o = (struct gr_opts){ .nranks = 0, .timeout = 0, .tag = -1,
                           .launcher_mode = GR_LAUNCH_AUTO };
    opterr = 0;
    /* '+': stop at the program name, whose options are its own. */
    int c;
    const char *why = "";
    while ((c = getopt_long(argc, argv, "+:n:vh", long_opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (gr_parse_count(optarg, &o->nranks) < 0)
                return usage_error("-n wants a rank count from 1 to 4096, not '%s'", optarg);
            break;
        case OPT_TIMEOUT:
            if (parse_seconds(optarg, &o->timeout, &why) < 0)
                return usage_error("--timeout wants a duration (seconds, or with a unit: 90, "
                                   "1.5s, 500ms, 10min; at most 1e9 s; 0: never), not '%s': %s",
                                   optarg, why);
            snprintf(o->timeout_shown, sizeof o->timeout_shown, "%.40s%s", optarg,
                     strchr("0123456789.", optarg[strlen(optarg) - 1]) ? " s" : "");
            break;
        case OPT_TAG:
            o->tag = 1;
            break;
        case OPT_NO_TAG:
            o->tag = 0;
            break;
        case OPT_BIND_TO:
            if (gr_bind_parse(optarg, &o->cpu_bind) < 0)
                return usage_error("--bind wants core, numa or none, not '%s'", optarg);
            break;
        case OPT_HOSTS:
            o->hosts = optarg;
            break;
        case OPT_HOSTFILE:
            o->hostfile = optarg;
            break;
        case OPT_PPN:
            if (gr_parse_count(optarg, &o->ppn) < 0)
                return usage_error("--ppn wants a rank count from 1 to 4096, not '%s'", optarg);
            break;
        case OPT_LAUNCHER:
            if (optarg[strspn(optarg, " \t")] == '\0')
                return usage_error("--launcher wants a command, not '%s'", optarg);
            o->launcher = optarg;
            break;
        case OPT_LAUNCHER_MODE:
            if (strcmp(optarg, "exec") == 0)
                o->launcher_mode = GR_LAUNCH_EXEC;
            else if (strcmp(optarg, "shell") == 0)
                o->launcher_mode = GR_LAUNCH_SHELL;
            else
                return usage_error("--launcher-mode wants exec or shell, not '%s'", optarg);
            break;
        case OPT_RENDEZVOUS: {
            struct sockaddr_storage ss;
            socklen_t len;
            char with_port[GAS_BOOT_ADDR_MAX + 8];
            snprintf(with_port, sizeof with_port, "%s:0", optarg);
            if (gas_boot_addr_parse(optarg, &ss, &len) < 0 &&
                gas_boot_addr_parse(with_port, &ss, &len) < 0)
                return usage_error("--rendezvous wants a numeric address (ip, ip:port, [ipv6] "
                                   "or [ipv6]:port), not '%s'", optarg);
            o->bind = optarg;
            break;
        }
        case 'v':
            gr_verbose = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            fflush(stdout);
            return 0;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: {
            char opt[3] = { '-', (char)optopt, '\0' };
            return usage_error("unknown option '%s'", optopt ? opt : argv[optind - 1]);
        }
        }
    }
    if (o->nranks == 0)
        return usage_error("%sthe number of ranks is required: -n N", "");
    if (o->hosts != NULL && o->hostfile != NULL)
        return usage_error("%s--hosts and --hostfile do not go together", "");
    if (o->hosts == NULL && o->hostfile == NULL &&
        (o->ppn || o->launcher || o->launcher_mode || o->bind))
        return usage_error("%s--ppn, --launcher, --launcher-mode and --rendezvous need --hosts or "
                           "--hostfile", "");
    if (optind >= argc)
        return usage_error("%sno program to run", "");
    o->argv = argv + optind;
    return -1;
}
