/*
 * Configuration table: value parsing for every type (sizes with suffixes up to
 * e, durations with min and a bare m refused, booleans with true/false in any
 * case, enums in any case), rejection of bad values with a message
 * naming the variable, nearest-name suggestions, file + environment
 * precedence and the recorded source of each value; GAS_CONFIG_FILE lines of
 * any length, NUL bytes, and files that are not regular files.
 */
#include "runtime/config.h"
#include "runtime/error.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t parse_ok(enum gas_rt_config_type t, const char *choices, const char *text)
{
    uint64_t v = 0;
    const char *why = NULL;
    UCHECK(gas_rt_config_parse(t, choices, text, &v, &why) == 0, "'%s' rejected: %s", text,
           why ? why : "");
    return v;
}

static void parse_bad(enum gas_rt_config_type t, const char *choices, const char *text)
{
    uint64_t v = 0;
    const char *why = NULL;
    UCHECK(gas_rt_config_parse(t, choices, text, &v, &why) != 0 && why && *why,
           "'%s' accepted", text);
}

/* The reason a value is refused (the empty string when it is accepted). */
static const char *why_bad(enum gas_rt_config_type t, const char *text)
{
    uint64_t v = 0;
    const char *why = NULL;
    if (gas_rt_config_parse(t, NULL, text, &v, &why) == 0)
        return "";
    return why ? why : "(no reason)";
}

/*
 * Minutes are written min; a bare m (MiB in sizes) is refused with a message
 * naming both readings, so GAS_WAIT_SPIN=5m is not five minutes.
 */
static void time_units(void)
{
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "2MIN") == 120000000000ull, "MIN");
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "5MS") == 5000000, "MS");
    const char *bare[] = {"5m", "5M", "5 m"};
    for (int i = 0; i < 3; i++) {
        const char *why = why_bad(GAS_CFG_T_TIME, bare[i]);
        UCHECK(strstr(why, "min") != NULL && strstr(why, "ms") != NULL,
               "duration '%s': %s", bare[i], why[0] ? why : "accepted");
    }
}

/* Every size suffix the message offers is accepted, e (EiB) included. */
static void size_units(void)
{
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "1e") == 1ull << 60, "e");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "2EiB") == 2ull << 60, "EiB");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "3kb") == 3072, "kb");
    const char *why = why_bad(GAS_CFG_T_SIZE, "12q");
    const char *units[] = {"k", "m", "g", "t", "p", "e"};
    for (int i = 0; i < 6; i++) {
        char text[8];
        snprintf(text, sizeof text, "1%s", units[i]);
        UCHECK(strstr(why, units[i]) != NULL, "size message lacks %s: %s", units[i], why);
        UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, text) == 1ull << (10 * (i + 1)), "%s", text);
    }
}

/* The boolean error lists the words accepted, true and false included. */
static void bool_message(void)
{
    const char *why = why_bad(GAS_CFG_T_BOOL, "maybe");
    const char *words[] = {"y/yes/1/on/true", "n/no/0/off/false"};
    for (int i = 0; i < 2; i++)
        UCHECK(strstr(why, words[i]) != NULL, "boolean message lacks %s: %s", words[i], why);
}

/* Write `len` bytes of `text` to a new temporary file; its path goes in path (>= 32 bytes). */
static void write_temp(char *path, const char *text, size_t len)
{
    strcpy(path, "/tmp/gas-test-config-XXXXXX");
    int fd = mkstemp(path);
    UCHECK(fd >= 0, "mkstemp");
    UCHECK(write(fd, text, len) == (ssize_t)len, "write");
    close(fd);
}

/* Load GAS_CONFIG_FILE=path; the status, with the message in gas_last_error(). */
static gas_status_t load_from(const char *path)
{
    setenv("GAS_CONFIG_FILE", path, 1);
    gas_rt_config_reset();
    gas_status_t st = gas_rt_config_load();
    unsetenv("GAS_CONFIG_FILE");
    return st;
}

/*
 * Lines of any length are whole lines: a long comment's tail is no setting,
 * a long trailing comment is no value, and errors name the right line; a NUL
 * byte is refused naming its line.
 */
static void config_file_lines(void)
{
    char path[32], *text = malloc(8192);
    char pad[3001];
    memset(pad, '-', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    snprintf(text, 8192, "#%sTIMEOUT=1ms\nSTALL_WARN=5s # %s\nSEGMENT_SIZE=64m\n", pad, pad);
    write_temp(path, text, strlen(text));
    UCHECK(load_from(path) == GAS_OK, "long lines: %s", gas_last_error());
    UCHECK(gas_rt_config_ns(GAS_CFG_TIMEOUT) == 0, "a long comment's tail set GAS_TIMEOUT");
    UCHECK(gas_rt_config_ns(GAS_CFG_STALL_WARN) == 5000000000ull, "value before a long comment");
    UCHECK(strstr(gas_rt_config_source(GAS_CFG_SEGMENT_SIZE), ":3") != NULL,
           "line number after long lines: %s", gas_rt_config_source(GAS_CFG_SEGMENT_SIZE));
    unlink(path);

    snprintf(text, 8192, "# %s\nSTALL_WARN=5s\nnot a setting\n", pad);
    write_temp(path, text, strlen(text));
    UCHECK(load_from(path) == GAS_ERR_INVALID, "a line without '=' accepted");
    UCHECK(strstr(gas_last_error(), ":3 (GAS_CONFIG_FILE): expected NAME=VALUE") != NULL,
           "wrong line: %s", gas_last_error());
    unlink(path);

    static const char nul[] = "STALL_WARN=5s\nTIMEOUT=3s\0\0\0\nSEGMENT_SIZE=64m\n";
    write_temp(path, nul, sizeof nul - 1);
    UCHECK(load_from(path) == GAS_ERR_INVALID, "a NUL byte accepted");
    UCHECK(strstr(gas_last_error(), ":2 (GAS_CONFIG_FILE): a NUL byte") != NULL,
           "NUL message: %s", gas_last_error());
    unlink(path);
    free(text);
}

/* A directory or a device is refused at once, naming GAS_CONFIG_FILE and the path. */
static void config_file_kinds(void)
{
    const char *bad[] = {"/tmp", "/dev/zero", "/dev/null"};
    for (int i = 0; i < 3; i++) {
        UCHECK(load_from(bad[i]) == GAS_ERR_INVALID, "GAS_CONFIG_FILE=%s accepted", bad[i]);
        UCHECK(strstr(gas_last_error(), "GAS_CONFIG_FILE") != NULL &&
               strstr(gas_last_error(), bad[i]) != NULL &&
               strstr(gas_last_error(), "not a regular file") != NULL,
               "message for %s: %s", bad[i], gas_last_error());
    }
}

/*
 * A value outside its row's range (config_ranges.h) is refused when the
 * table is loaded, naming the variable, where it came from and the range;
 * the ends themselves are accepted, and every default lies inside.
 */
static void config_ranges(void)
{
    char path[32];
    static const char bad[] = "UDP_MTU=10\n";
    write_temp(path, bad, sizeof bad - 1);
    UCHECK(load_from(path) == GAS_ERR_INVALID, "GAS_UDP_MTU=10 accepted");
    UCHECK(strstr(gas_last_error(), "GAS_UDP_MTU='10' (from ") != NULL &&
           strstr(gas_last_error(), ":1): outside 364..65535, or auto (0): the least in which") != NULL,
           "range message: %s", gas_last_error());
    unlink(path);
    static const char ends[] = "UDP_MTU=364\nUDP_WINDOW=1048576\nRDMA_PORT=255\nRDMA_INLINE=0\n"
                               "SEGMENT_SIZE=6m\nUDP_SEND_QUEUE=1\nUDP_PORT=65535\n";
    write_temp(path, ends, sizeof ends - 1);
    UCHECK(load_from(path) == GAS_OK, "the ends of ranges refused: %s", gas_last_error());
    UCHECK(gas_rt_config_size(GAS_CFG_UDP_WINDOW) == 1u << 20, "UDP_WINDOW=1048576");
    unlink(path);
    static const char over[] = "UDP_WINDOW=1048577\n";
    write_temp(path, over, sizeof over - 1);
    UCHECK(load_from(path) == GAS_ERR_INVALID, "GAS_UDP_WINDOW above its range accepted");
    unlink(path);
    static const char zero[] = "RDMA_PORT=0\n";
    write_temp(path, zero, sizeof zero - 1);
    UCHECK(load_from(path) == GAS_ERR_INVALID, "GAS_RDMA_PORT=0 accepted");
    unlink(path);
    /* Values that no owner could use are refused by the table, so gas-info
     * refuses them as gas_init does: below the least MTU the udp headers
     * need, a send queue with no room, a segment smaller than gas_init needs
     * (0 stays "auto"), a port beyond 65535, zero timeouts. */
    static const struct { const char *line, *msg; } unusable[] = {
        {"UDP_MTU=347\n", "GAS_UDP_MTU='347' (from file:"},
        {"UDP_SEND_QUEUE=0\n", "GAS_UDP_SEND_QUEUE='0' (from file:"},
        {"SEGMENT_SIZE=1k\n", "GAS_SEGMENT_SIZE='1k' (from file:"},
        {"SEGMENT_SIZE=6291455\n", "below 6m: the least in which gas_init"},
        {"UDP_PORT=65536\n", "outside 0..65535"},
        {"UDP_RTO_MIN=0\n", "GAS_UDP_RTO_MIN='0' (from file:"},
        {"UDP_PEER_TIMEOUT=0\n", "GAS_UDP_PEER_TIMEOUT='0' (from file:"},
        /* settings that contradict each other: the lower clamp above the upper one */
        {"UDP_RTO_MIN=300ms\n", "is above GAS_UDP_RTO_MAX='250ms' (from default)"},
        {"UDP_RTO_MAX=1ms\n", "is above GAS_UDP_RTO_MAX='1ms' (from file:"},
    };
    for (size_t i = 0; i < sizeof unusable / sizeof unusable[0]; i++) {
        write_temp(path, unusable[i].line, strlen(unusable[i].line));
        UCHECK(load_from(path) == GAS_ERR_INVALID, "%s accepted", unusable[i].line);
        UCHECK(strstr(gas_last_error(), unusable[i].msg) != NULL, "message for %s: %s",
               unusable[i].line, gas_last_error());
        unlink(path);
    }
    static const char equal[] = "UDP_RTO_MIN=100ms\nUDP_RTO_MAX=100ms\n";
    write_temp(path, equal, sizeof equal - 1);
    UCHECK(load_from(path) == GAS_OK, "GAS_UDP_RTO_MIN equal to GAS_UDP_RTO_MAX refused: %s",
           gas_last_error());
    unlink(path);
    static const char autos[] = "SEGMENT_SIZE=auto\n";
    write_temp(path, autos, sizeof autos - 1);
    UCHECK(load_from(path) == GAS_OK && gas_rt_config_size(GAS_CFG_SEGMENT_SIZE) == 0,
           "GAS_SEGMENT_SIZE=auto refused: %s", gas_last_error());
    unlink(path);
    /* The load sets every default through the range check: a default outside its
     * range fails it. */
    gas_rt_config_reset();
    UCHECK(gas_rt_config_load() == GAS_OK, "the defaults are refused: %s", gas_last_error());
}

/*
 * Numbers are decimal: nan, inf, hex and signs are refused (strtod and
 * strtoull with base 0 took nan as 2^63 ns and 05000 as octal 2560), a
 * nonzero size or duration below one unit is refused (it became 0, often
 * "auto"), blanks before a number are skipped.
 */
static void decimal_numbers(void)
{
    const char *bad_time[] = {"nan", "NaN", "inf", "0x2", "+3", "-1", " -1", ".", "e3", "0.5ns"};
    for (size_t i = 0; i < sizeof bad_time / sizeof bad_time[0]; i++)
        parse_bad(GAS_CFG_T_TIME, NULL, bad_time[i]);
    const char *bad_size[] = {"nan", "0x10", "0.9", "+4k", "1e-3"};
    for (size_t i = 0; i < sizeof bad_size / sizeof bad_size[0]; i++)
        parse_bad(GAS_CFG_T_SIZE, NULL, bad_size[i]);
    const char *bad_uint[] = {"0x100", " -1", "-1", "+5", "1e3", "nan"};
    for (size_t i = 0; i < sizeof bad_uint / sizeof bad_uint[0]; i++)
        parse_bad(GAS_CFG_T_UINT, NULL, bad_uint[i]);
    parse_bad(GAS_CFG_T_RATIO, NULL, "0x0.1");
    parse_bad(GAS_CFG_T_RATIO, NULL, "nan");
    UCHECK(parse_ok(GAS_CFG_T_UINT, NULL, "05000") == 5000, "05000 read as octal");
    UCHECK(parse_ok(GAS_CFG_T_UINT, NULL, "08080") == 8080, "08080");
    UCHECK(parse_ok(GAS_CFG_T_UINT, NULL, " 7") == 7, "a blank before a count");
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "1e3ms") == 1000000000ull, "1e3ms");
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, " 2s") == 2000000000ull, "a blank before a duration");
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "0") == 0, "0");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "0.5k") == 512, "0.5k");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "1e") == 1ull << 60, "1e (exbibyte, not an exponent)");
}

/* A file a shell can source ("export NAME=VALUE"), and GAS_NUMA refused
 * when it can never be right (gas-info refuses it as gas_init does); its
 * words in any case. */
static void config_file_export_numa(void)
{
    char path[32];
    const char *text = "export GAS_TIMEOUT=5s\nexport\tSTALL_WARN=2s\nNUMA=Interleave\n";
    write_temp(path, text, strlen(text));
    UCHECK(load_from(path) == GAS_OK, "export lines: %s", gas_last_error());
    UCHECK(gas_rt_config_ns(GAS_CFG_TIMEOUT) == 5000000000ull, "export GAS_TIMEOUT=5s ignored");
    UCHECK(gas_rt_config_ns(GAS_CFG_STALL_WARN) == 2000000000ull, "export<tab>STALL_WARN ignored");
    unlink(path);
    const char *bad[] = {"NUMA=bogus\n", "NUMA=node:\n", "NUMA=node:x\n", "NUMA=node:1x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_temp(path, bad[i], strlen(bad[i]));
        UCHECK(load_from(path) == GAS_ERR_INVALID, "%s accepted", bad[i]);
        UCHECK(strstr(gas_last_error(), "not one of local, interleave, node:N, none") != NULL,
               "GAS_NUMA message: %s", gas_last_error());
        unlink(path);
    }
}

int main(void)
{
    gas_rt_error_set_abort(0);
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "4096") == 4096, "plain size");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "4k") == 4096, "k");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "512M") == 512ull << 20, "M");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "4g") == 4ull << 30, "g");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "1TiB") == 1ull << 40, "TiB");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "2p") == 2ull << 50, "p");
    UCHECK(parse_ok(GAS_CFG_T_SIZE, NULL, "1.5k") == 1536, "fractional");
    parse_bad(GAS_CFG_T_SIZE, NULL, "12q");
    parse_bad(GAS_CFG_T_SIZE, NULL, "-1");
    parse_bad(GAS_CFG_T_SIZE, NULL, "");
    parse_bad(GAS_CFG_T_SIZE, NULL, "4gx");
    parse_bad(GAS_CFG_T_SIZE, NULL, "100e");  /* 100 EiB does not fit 64 bits */
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "3") == 3000000000ull, "bare seconds");
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "20us") == 20000, "us");
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "5ms") == 5000000, "ms");
    UCHECK(parse_ok(GAS_CFG_T_TIME, NULL, "2min") == 120000000000ull, "min");
    parse_bad(GAS_CFG_T_TIME, NULL, "5 fortnights");
    time_units();
    size_units();
    decimal_numbers();
    config_file_export_numa();
    config_ranges();
    const char *yes[] = {"y", "yes", "1", "on", "true", "YES", "True", "ON"};
    const char *no[] = {"n", "no", "0", "off", "false", "NO", "False", "Off"};
    for (int i = 0; i < 8; i++) {
        UCHECK(parse_ok(GAS_CFG_T_BOOL, NULL, yes[i]) == 1, "true '%s'", yes[i]);
        UCHECK(parse_ok(GAS_CFG_T_BOOL, NULL, no[i]) == 0, "false '%s'", no[i]);
    }
    parse_bad(GAS_CFG_T_BOOL, NULL, "");   /* a set-but-empty boolean never flips the default */
    parse_bad(GAS_CFG_T_BOOL, NULL, "maybe");
    parse_bad(GAS_CFG_T_BOOL, NULL, "t");
    bool_message();
    UCHECK(parse_ok(GAS_CFG_T_ENUM, "abort|return", "return") == 1, "enum");
    UCHECK(parse_ok(GAS_CFG_T_ENUM, "abort|return", "RETURN") == 1, "enum in upper case");
    parse_bad(GAS_CFG_T_ENUM, "abort|return", "ignore");
    UCHECK(parse_ok(GAS_CFG_T_UINT, NULL, "42") == 42, "uint");
    UCHECK(parse_ok(GAS_CFG_T_RATIO, NULL, "0.05") == 50000, "ratio");
    UCHECK(parse_ok(GAS_CFG_T_RATIO, NULL, "5%") == 50000, "ratio %%");
    UCHECK(parse_ok(GAS_CFG_T_RATIO, NULL, "1") == 1000000, "ratio 1");
    UCHECK(parse_ok(GAS_CFG_T_RATIO, NULL, "0") == 0, "ratio 0");
    parse_bad(GAS_CFG_T_RATIO, NULL, "1.5");
    parse_bad(GAS_CFG_T_RATIO, NULL, "-1%");
    parse_bad(GAS_CFG_T_RATIO, NULL, "5%%");
    parse_bad(GAS_CFG_T_RATIO, NULL, "");
    parse_bad(GAS_CFG_T_UINT, NULL, "-4");

    const char *near = gas_rt_config_nearest("GAS_SEGMNT_SIZE");
    UCHECK(near && strcmp(near, "SEGMENT_SIZE") == 0, "nearest to GAS_SEGMNT_SIZE: %s",
           near ? near : "(none)");
    UCHECK(gas_rt_config_nearest("GAS_COMPLETELY_UNRELATED_THING") == NULL, "nothing is near");

    /* Defaults, then a file, then the environment, each recorded as the source. */
    char path[] = "/tmp/gas-test-config-XXXXXX";
    int fd = mkstemp(path);
    UCHECK(fd >= 0, "mkstemp");
    const char *text = "# comment\nGAS_SEGMENT_SIZE = 64m\nSTALL_WARN=5s\nLOG_LEVEL=warn\n";
    UCHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    setenv("GAS_CONFIG_FILE", path, 1);
    setenv("GAS_STALL_WARN", "7s", 1);
    gas_rt_config_reset();
    UCHECK(gas_rt_config_load() == GAS_OK, "load: %s", gas_last_error());
    UCHECK(gas_rt_config_size(GAS_CFG_SEGMENT_SIZE) == 64ull << 20, "file value");
    UCHECK(strncmp(gas_rt_config_source(GAS_CFG_SEGMENT_SIZE), "file:", 5) == 0, "file source: %s",
           gas_rt_config_source(GAS_CFG_SEGMENT_SIZE));
    UCHECK(gas_rt_config_ns(GAS_CFG_STALL_WARN) == 7000000000ull, "env beats file");
    UCHECK(strcmp(gas_rt_config_source(GAS_CFG_STALL_WARN), "env") == 0, "env source");
    UCHECK(strcmp(gas_rt_config_source(GAS_CFG_TIMEOUT), "default") == 0, "default source");

    /* A bad value fails the load and names the variable. */
    setenv("GAS_SEGMENT_SIZE", "lots", 1);
    gas_rt_config_reset();
    UCHECK(gas_rt_config_load() == GAS_ERR_INVALID, "bad value accepted");
    UCHECK(strstr(gas_last_error(), "GAS_SEGMENT_SIZE") != NULL, "message: %s", gas_last_error());
    unsetenv("GAS_SEGMENT_SIZE");
    unsetenv("GAS_STALL_WARN");
    unlink(path);
    config_file_lines();
    config_file_kinds();
    return unit_finish("test_config");
}
