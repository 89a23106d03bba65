/* ccree-info: what the ccree provider offloads in this process's configuration, and why not. */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>

int main(void)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    OSSL_PARAM params[] = { OSSL_PARAM_utf8_string("ccree-algorithms", NULL, 0), OSSL_PARAM_END };
    static const char *const head[] = { "algorithm", "kernel", "path", "driver", "why not",
                                        "kernel ops", "kernel bytes", "sw ops", "sw bytes" };
    char *report, *line, *save = NULL;
    int i;

    if (prov == NULL || !OSSL_PROVIDER_get_params(prov, params)) {
        fprintf(stderr, "ccree-info: the ccree provider did not load\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    report = OPENSSL_zalloc(params[0].return_size + 1);
    params[0].data = report;
    params[0].data_size = params[0].return_size + 1;
    if (report == NULL || !OSSL_PROVIDER_get_params(prov, params)) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    printf("%-12s %-10s %-8s %-18s %s\n", head[0], head[1], head[2], head[3], head[4]);
    for (line = strtok_r(report, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *f[9], *s2 = NULL, *t = strtok_r(line, "\t", &s2);

        for (i = 0; i < 9 && t != NULL; i++, t = strtok_r(NULL, "\t", &s2))
            f[i] = t;
        if (i == 9)
            printf("%-12s %-10s %-8s %-18s %s\n", f[0], f[1], f[2], f[3], f[4]);
    }
    OPENSSL_free(report);
    OSSL_PROVIDER_unload(prov);
    return 0;
}
