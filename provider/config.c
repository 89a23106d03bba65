/* The provider's openssl.cnf section: keys read through the core, every value validated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/conf.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include "prov.h"

/* Keys OpenSSL itself reads from a provider section, then ours. */
static const char *const known[] = { "module",   "activate", "identity",     "soft_load",
                                     "drivers",  "offload-min", "offload-goal", "fallback",
                                     "offer",    "stats" };

static int bad_config(const OSSL_CORE_HANDLE *h, const char *key, const char *value,
                      const char *expected)
{
    ccree_raise(h, CCREE_R_BAD_CONFIG, __FILE__, __LINE__, __func__, "%s = \"%s\": %s", key,
                value, expected);
    return 0;
}

/*
 * OpenSSL 3.0 cannot list the keys of a provider's section, so the configuration file is
 * read again for candidate keys and the core confirms which of them are ours. Where the file
 * cannot be found or read, nothing is reported.
 */
static int unknown_keys(const OSSL_CORE_HANDLE *h, OSSL_FUNC_core_get_params_fn *get_params)
{
    const char *name = NULL, *init, *provs, *sect;
    OSSL_PARAM pn[] = { OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_CORE_PROV_NAME, (char **)&name, 0),
                        OSSL_PARAM_END };
    char *file = CONF_get1_default_config_file();
    CONF *conf = NCONF_new(NULL);
    STACK_OF(CONF_VALUE) *values = NULL;
    long eline;
    int i, ok = 1;

    ERR_set_mark();
    if (file != NULL && conf != NULL && get_params(h, pn) && name != NULL
        && NCONF_load(conf, file, &eline) > 0
        && (init = NCONF_get_string(conf, NULL, "openssl_conf")) != NULL
        && (provs = NCONF_get_string(conf, init, "providers")) != NULL
        && (sect = NCONF_get_string(conf, provs, name)) != NULL)
        values = NCONF_get_section(conf, sect);
    ERR_pop_to_mark();
    for (i = 0; ok && i < sk_CONF_VALUE_num(values); i++) {
        CONF_VALUE *v = sk_CONF_VALUE_value(values, i);
        const char *value = NULL;
        OSSL_PARAM q[] = { OSSL_PARAM_utf8_ptr(v->name, (char **)&value, 0), OSSL_PARAM_END };
        size_t k;

        for (k = 0; k < sizeof(known) / sizeof(known[0]) && strcmp(v->name, known[k]) != 0; k++)
            ;
        if (k == sizeof(known) / sizeof(known[0]) && get_params(h, q) && value != NULL)
            ok = bad_config(h, v->name, value,
                            "unknown key (known: drivers, offload-min, offload-goal, fallback, "
                            "offer, stats)");
    }
    NCONF_free(conf);
    OPENSSL_free(file);
    return ok;
}

int ccree_read_config(const OSSL_CORE_HANDLE *h, OSSL_FUNC_core_get_params_fn *get_params,
                      struct ccree_prov *p)
{
    const char *drivers = "ccree", *omin = NULL, *goal = "time", *fallback = "yes";
    const char *offer = "offloaded", *stats = "";
    OSSL_PARAM params[] = {
        OSSL_PARAM_utf8_ptr("drivers", (char **)&drivers, 0),
        OSSL_PARAM_utf8_ptr("offload-min", (char **)&omin, 0),
        OSSL_PARAM_utf8_ptr("offload-goal", (char **)&goal, 0),
        OSSL_PARAM_utf8_ptr("fallback", (char **)&fallback, 0),
        OSSL_PARAM_utf8_ptr("offer", (char **)&offer, 0),
        OSSL_PARAM_utf8_ptr("stats", (char **)&stats, 0),
        OSSL_PARAM_END,
    };
    unsigned long v;
    char *end;

    if (!get_params(h, params) || !unknown_keys(h, get_params))
        return 0;
    if (ccree_drivers_parse(&p->drivers, drivers) != 0)
        return bad_config(h, "drivers", drivers,
                          "expected \"any\" or a comma-separated list of driver suffixes");
    p->offload_min = CCREE_AUTO;
    if (omin != NULL && strcmp(omin, "auto") != 0) {
        errno = 0;
        v = strtoul(omin, &end, 10);
        if (*omin < '0' || *omin > '9' || *end != '\0' || errno != 0 || v > CCREE_OFFLOAD_MIN_MAX)
            return bad_config(h, "offload-min", omin, "expected auto or a byte count from 0 to 1048576");
        p->offload_min = v;
    }
    if (strcmp(goal, "time") == 0)
        p->clock = CLOCK_MONOTONIC;
    else if (strcmp(goal, "cpu") == 0)
        p->clock = CLOCK_THREAD_CPUTIME_ID;
    else
        return bad_config(h, "offload-goal", goal, "expected time or cpu");
    if (strcmp(fallback, "yes") == 0)
        p->fallback = 1;
    else if (strcmp(fallback, "no") != 0)
        return bad_config(h, "fallback", fallback, "expected yes or no");
    if (strcmp(offer, "all") == 0)
        p->offer_all = 1;
    else if (strcmp(offer, "offloaded") != 0)
        return bad_config(h, "offer", offer, "expected offloaded or all");
    if (*stats != '\0' && (*stats != '/' || strlen(stats) >= sizeof(p->stats_dir) - 16))
        return bad_config(h, "stats", stats, "expected the absolute path of a directory");
    strcpy(p->stats_dir, stats);
    return 1;
}
