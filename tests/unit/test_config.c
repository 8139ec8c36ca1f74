/*
 * Configuration table: value parsing for every type (sizes with suffixes,
 * durations, strict booleans, enums), rejection of bad values with a message
 * naming the variable, nearest-name suggestions, file + environment
 * precedence and the recorded source of each value.
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
    const char *yes[] = {"y", "yes", "1", "on", "YES"}, *no[] = {"n", "no", "0", "off"};
    for (int i = 0; i < 5; i++)
        UCHECK(parse_ok(GAS_CFG_T_BOOL, NULL, yes[i]) == 1, "true '%s'", yes[i]);
    for (int i = 0; i < 4; i++)
        UCHECK(parse_ok(GAS_CFG_T_BOOL, NULL, no[i]) == 0, "false '%s'", no[i]);
    parse_bad(GAS_CFG_T_BOOL, NULL, "");   /* a set-but-empty boolean never flips the default */
    parse_bad(GAS_CFG_T_BOOL, NULL, "maybe");
    UCHECK(parse_ok(GAS_CFG_T_ENUM, "abort|return", "return") == 1, "enum");
    parse_bad(GAS_CFG_T_ENUM, "abort|return", "ignore");
    UCHECK(parse_ok(GAS_CFG_T_UINT, NULL, "42") == 42, "uint");
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
    unlink(path);
    return unit_finish("test_config");
}
