/*
 * A process that loaded the provider as root, forked and dropped to nobody, as an nginx worker
 * does: where the kernel now refuses a bind (Linux 7.3's shorter allowlist for unprivileged
 * processes, or the shim's CCREE_FAULT=bind-unprivileged), the algorithm runs in software in
 * that process, with the reason in its report and in ccree-info --stats; no call fails and
 * every answer equals the default provider's. Where nothing is refused, nothing changes.
 * Under the shipped offer = offloaded: an algorithm root offloaded stays offered (fetched with
 * ?provider=ccree, as applications do, it is ccree's and runs in software), and its report
 * does not say "not offered".
 * Usage: test_privdrop CCREE_INFO, as root, OPENSSL_CONF with stats = STATS_DIR; it skips (77)
 * elsewhere, without AF_ALG, or where root offloads none of its algorithms (and says why).
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "testutil.h"

#define STATS_DIR "/tmp/ccree-test-privdrop"
#define LEN 65536
#define CCM_LEN 4096

static const char *const algs[] = { "AES-128-CBC", "AES-128-XTS", "SHA1", "SHA2-256",
                                    "HMAC-SHA2-256", "CMAC-AES-128-CBC", "AES-128-CCM" };
#define NALGS (sizeof(algs) / sizeof(algs[0]))
static OSSL_PROVIDER *prov;
static unsigned char key[32], iv[16], in[LEN];

/* Algorithm i through props into out: the output length, or -1. */
static int run(size_t i, const char *props, unsigned char *out)
{
    const char *name = algs[i];
    EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();
    EVP_CIPHER *c = NULL;
    EVP_MD *md = NULL;
    EVP_MAC *mac = NULL;
    EVP_MAC_CTX *mc = NULL;
    OSSL_PARAM params[2] = { OSSL_PARAM_END, OSSL_PARAM_END };
    int n = -1, m = 0, k = 0;
    unsigned int dl = 0;
    size_t ml = 0;

    if (strncmp(name, "HMAC-", 5) == 0 || strncmp(name, "CMAC-", 5) == 0) {
        int hmac = name[0] == 'H';

        params[0] = OSSL_PARAM_construct_utf8_string(hmac ? OSSL_MAC_PARAM_DIGEST
                                                          : OSSL_MAC_PARAM_CIPHER,
                                                     (char *)(hmac ? "SHA2-256" : "AES-128-CBC"), 0);
        if ((mac = EVP_MAC_fetch(NULL, hmac ? "HMAC" : "CMAC", props)) != NULL
            && (mc = EVP_MAC_CTX_new(mac)) != NULL && EVP_MAC_init(mc, key, hmac ? 32 : 16, params)
            && EVP_MAC_update(mc, in, LEN) && EVP_MAC_final(mc, out, &ml, 64))
            n = (int)ml;
    } else if ((md = EVP_MD_fetch(NULL, name, props)) != NULL) {
        if (EVP_Digest(in, LEN, out, &dl, md, NULL))
            n = (int)dl;
    } else if ((c = EVP_CIPHER_fetch(NULL, name, props)) == NULL || cc == NULL) {
        n = -1;
    } else if (strstr(name, "CCM") != NULL) {
        if (EVP_EncryptInit_ex2(cc, c, NULL, NULL, NULL)
            && EVP_CIPHER_CTX_ctrl(cc, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0
            && EVP_CIPHER_CTX_ctrl(cc, EVP_CTRL_AEAD_SET_TAG, 16, NULL) > 0
            && EVP_EncryptInit_ex2(cc, NULL, key, iv, NULL)
            && EVP_EncryptUpdate(cc, NULL, &k, NULL, CCM_LEN)
            && EVP_EncryptUpdate(cc, NULL, &k, iv, 16)
            && EVP_EncryptUpdate(cc, out, &k, in, CCM_LEN) && EVP_EncryptFinal_ex(cc, out + k, &m)
            && EVP_CIPHER_CTX_ctrl(cc, EVP_CTRL_AEAD_GET_TAG, 16, out + k + m) > 0)
            n = k + m + 16;
    } else if (EVP_EncryptInit_ex2(cc, c, key, iv, NULL) && EVP_EncryptUpdate(cc, out, &k, in, LEN)
               && EVP_EncryptFinal_ex(cc, out + k, &m)) {
        n = k + m;
    }
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(mac);
    EVP_MD_free(md);
    EVP_CIPHER_free(c);
    EVP_CIPHER_CTX_free(cc);
    return n;
}

/* af_alg_restrict, read here rather than through the provider; -1 where the kernel has none. */
static int restrict_level(void)
{
    char v[16] = "";
    FILE *f = fopen("/proc/sys/crypto/af_alg_restrict", "re");

    if (f != NULL && fgets(v, sizeof(v), f) == NULL)
        v[0] = '\0';
    if (f != NULL)
        fclose(f);
    return v[0] >= '0' && v[0] <= '9' ? atoi(v) : -1;
}

/*
 * In the child, as nobody: every algorithm answers as the default provider does, and is in
 * the state the kernel allows now. Writes the names of those that went to software to out.
 * The number of failures.
 */
static int as_nobody(const tu_alg_info *before, FILE *out)
{
    static unsigned char a[LEN + 64], b[LEN + 64];
    int level = restrict_level(), bad = 0;
    size_t i;

    for (i = 0; i < NALGS; i++) {
        int n = run(i, "?provider=ccree", a), refused;
        tu_alg_info now;
        const char *wrong = NULL;

        if (n <= 0 || run(i, "provider=default", b) != n || memcmp(a, b, n) != 0) {
            fprintf(stderr, "%s as nobody: %s\n", algs[i],
                    n <= 0 ? "the call failed" : "the answer differs from the default provider's");
            ERR_print_errors_fp(stderr);
            bad++;
            continue;
        }
        now = tu_alg(prov, algs[i]);
        refused = strcmp(before[i].state, "offload") == 0 && strcmp(now.state, "software") == 0;
        if (refused && (strstr(now.reason, "refused") == NULL || now.offload_ops != 0
                        || now.fallback_ops == 0))
            wrong = "software without a refusal in its reason, or counted in the kernel";
        else if (refused && strstr(now.reason, "not offered") != NULL)
            wrong = "reported not offered, yet ccree offers it (root offloaded it) and ran it";
        else if (!refused && strcmp(now.state, before[i].state) != 0)
            wrong = "changed state";
        else if (!refused && strcmp(now.state, "offload") == 0 && now.offload_ops == 0)
            wrong = "offloaded, but no kernel op counted";
        else if (level == 1 && strcmp(algs[i], "AES-128-CBC") == 0
                 && strcmp(before[i].state, "offload") == 0 && !refused)
            wrong = "af_alg_restrict = 1 refuses cbc(aes) to nobody, yet it stayed offloaded";
        else if (level == 1 && strcmp(before[i].driver, "sha1") == 0 && refused)
            wrong = "af_alg_restrict = 1 allows sha1 to nobody, yet it went to software";
        else if (level != 1 && refused)
            wrong = "went to software where no allowlist applies";
        printf("%s as nobody: %s (root: %s), kernel ops %llu, software ops %llu, reason '%s'\n",
               algs[i], now.state, before[i].state, (unsigned long long)now.offload_ops,
               (unsigned long long)now.fallback_ops, now.reason);
        if (wrong != NULL) {
            fprintf(stderr, "%s as nobody: %s\n", algs[i], wrong);
            bad++;
        }
        if (refused)
            fprintf(out, "%s\n", algs[i]);
    }
    fflush(stdout);
    return bad;
}

/* ccree-info --stats shows each algorithm named in went (one a line) as software in pid, refused. */
static int stats_show(const char *info, pid_t pid, const char *went)
{
    char cmd[512], line[1024], name[64], path[16];
    const char *w;
    int bad = 0, found;
    long p;
    FILE *f;

    for (w = went; *w != '\0'; w = strchr(w, '\n') + 1) {
        size_t len = strcspn(w, "\n");

        snprintf(cmd, sizeof(cmd), "%s --stats " STATS_DIR, info);
        if ((f = popen(cmd, "r")) == NULL)
            return 1;
        found = 0;
        while (fgets(line, sizeof(line), f) != NULL)
            if (sscanf(line, "%ld %63s %15s", &p, name, path) == 3 && p == pid
                && strlen(name) == len && strncmp(name, w, len) == 0) {
                printf("ccree-info --stats: %s", line);
                found = strcmp(path, "software") == 0 && strstr(line, "refused") != NULL;
            }
        pclose(f);
        if (!found) {
            fprintf(stderr, "ccree-info --stats shows no refused software line of %.*s for %ld\n",
                    (int)len, w, (long)pid);
            bad++;
        }
    }
    return bad;
}

/* A directory of root's that only root may write to, for stats = STATS_DIR. */
static int stats_dir(void)
{
    struct stat st;

    if (mkdir(STATS_DIR, 0700) != 0 && errno != EEXIST)
        return 0;
    return lstat(STATS_DIR, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0
           && chmod(STATS_DIR, 0700) == 0;
}

int main(int argc, char **argv)
{
    tu_alg_info before[NALGS];
    char went[1024] = "";
    int ready[2], go[2], status, offloaded = 0, bad;
    size_t i, n;
    pid_t pid;

    if (argc != 2) {
        fprintf(stderr, "usage: %s CCREE_INFO\n", argv[0]);
        return 1;
    }
    if (geteuid() != 0) {
        printf("skipped: needs root (it loads the provider as root, then drops to nobody)\n");
        return 77;
    }
    if (!stats_dir() || (prov = OSSL_PROVIDER_load(NULL, "ccree")) == NULL) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    for (i = 0; i < NALGS; i++) {
        before[i] = tu_alg(prov, algs[i]);
        offloaded += strcmp(before[i].state, "offload") == 0;
    }
    if (strstr(before[2].reason, "no AF_ALG") != NULL && !tu_require_offload()) {
        printf("skipped: this kernel has no AF_ALG (these tests run in the VM)\n");
        return 77;
    }
    if (offloaded == 0) {
        for (i = 0; i < NALGS; i++)
            printf("%s not offloaded as root: %s\n", algs[i], before[i].reason);
        if (tu_require_offload())
            return 1;
        printf("skipped: root offloads none of these algorithms, so nobody has nothing to lose\n");
        return 77;
    }
    if (!RAND_bytes(key, sizeof(key)) || !RAND_bytes(iv, sizeof(iv)) || !RAND_bytes(in, sizeof(in))
        || pipe(ready) != 0 || pipe(go) != 0)
        return 1;
    fflush(stdout);
    if ((pid = fork()) == 0) {
        FILE *out = fdopen(ready[1], "w");
        char c;

        close(ready[0]);
        close(go[1]);
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
            perror("dropping to nobody");
            _exit(1);
        }
        bad = as_nobody(before, out);
        fclose(out);
        read(go[0], &c, 1); /* ccree-info reads this process's statistics meanwhile */
        _exit(bad != 0);
    }
    close(ready[1]);
    close(go[0]);
    for (n = 0; n < sizeof(went) - 1; n += (size_t)status) {
        if ((status = (int)read(ready[0], went + n, sizeof(went) - 1 - n)) <= 0)
            break;
    }
    went[n] = '\0';
    bad = stats_show(argv[1], pid, went);
    close(go[1]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bad++;
    OSSL_PROVIDER_unload(prov);
    if (bad != 0)
        return 1;
    printf("nobody: every answer right; %s\n",
           went[0] ? "what the kernel refused ran in software, with the reason" : "nothing refused");
    return 0;
}
