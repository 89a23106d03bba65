/*
 * Discovery, once at load: which kernel driver AF_ALG binds for each algorithm, and whether
 * it counts as hardware. An algorithm is offloaded only when its chosen driver binds by name,
 * or when the kernel refuses names of drivers and every driver of the kernel name is accepted.
 */
#include "afalg.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

struct impl {
    char name[128], driver[128], type[128];
    int priority, internal, async;
    int tested; /* its self-test passed: until then (7.3 tests in the background) it serves none */
};

int ccree_drivers_parse(struct ccree_drivers *d, const char *value)
{
    const char *p;

    memset(d, 0, sizeof(*d));
    if (strcmp(value, "any") == 0) {
        d->any = 1;
        return 0;
    }
    if (*value == '\0' || strlen(value) >= sizeof(d->list))
        return -1;
    for (p = value; *p != '\0'; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_' || *p == '-'
              || (*p == ',' && p[1] != ',' && p[1] != '\0' && p != value)))
            return -1;
    strcpy(d->list, value);
    return 0;
}

static int driver_accepted(const struct ccree_drivers *d, const char *driver)
{
    size_t dl = strlen(driver);
    const char *w = d->list;

    if (d->any)
        return 1;
    while (*w != '\0') {
        size_t wl = strcspn(w, ",");

        if (dl > wl && driver[dl - wl - 1] == '-' && strncmp(driver + dl - wl, w, wl) == 0)
            return 1;
        w += wl + (w[wl] == ',');
    }
    return 0;
}

/* /proc/crypto, one entry per implementation; *n entries. */
static struct impl *read_proc_crypto(size_t *n)
{
    FILE *f = fopen("/proc/crypto", "re");
    struct impl *v = NULL, *e = NULL, *t;
    char line[256], key[32], val[128];
    size_t cap = 0;

    *n = 0;
    if (f == NULL)
        return NULL;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%31s : %127[^\n]", key, val) != 2)
            continue;
        if (strcmp(key, "name") == 0) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 128;
                if ((t = realloc(v, cap * sizeof(*v))) == NULL)
                    break;
                v = t;
            }
            e = &v[(*n)++];
            memset(e, 0, sizeof(*e));
            e->tested = 1; /* a kernel that does not say */
            snprintf(e->name, sizeof(e->name), "%s", val);
        } else if (e == NULL) {
            continue;
        } else if (strcmp(key, "driver") == 0) {
            snprintf(e->driver, sizeof(e->driver), "%s", val);
        } else if (strcmp(key, "type") == 0) {
            snprintf(e->type, sizeof(e->type), "%s", val);
        } else if (strcmp(key, "priority") == 0) {
            e->priority = atoi(val);
        } else if (strcmp(key, "async") == 0) {
            e->async = strcmp(val, "yes") == 0;
        } else if (strcmp(key, "internal") == 0) {
            e->internal = strcmp(val, "yes") == 0;
        } else if (strcmp(key, "selftest") == 0) {
            e->tested = strcmp(val, "passed") == 0;
        }
    }
    fclose(f);
    return v;
}

static int type_matches(enum ccree_kind kind, const char *type)
{
    if (kind == CCREE_HASH)
        return strcmp(type, "shash") == 0 || strcmp(type, "ahash") == 0;
    if (kind == CCREE_AEAD)
        return strcmp(type, "aead") == 0;
    return strcmp(type, "skcipher") == 0 || strcmp(type, "lskcipher") == 0;
}

static int restrict_level(void)
{
    FILE *f = fopen("/proc/sys/crypto/af_alg_restrict", "re");
    int level = -1;

    if (f != NULL) {
        if (fscanf(f, "%d", &level) != 1)
            level = -1;
        fclose(f);
    }
    return level;
}

void ccree_ident(struct ccree_ident *id)
{
    struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct c[2] = { { 0 } };

    id->pid = getpid();
    id->euid = geteuid();
    id->egid = getegid();
    id->caps = syscall(SYS_capget, &h, c) == 0
                   ? c[0].effective | (unsigned long long)c[1].effective << 32 : 0;
}

/* What Linux 7.3's allowlist asks of a privileged process. */
static const char *privileged(const struct ccree_ident *id)
{
    return id->caps & (1ull << CAP_NET_ADMIN | 1ull << CAP_SYS_ADMIN)
               ? "with CAP_NET_ADMIN or CAP_SYS_ADMIN"
               : "without CAP_NET_ADMIN and CAP_SYS_ADMIN";
}

static int by_priority(const void *x, const void *y)
{
    int a = (*(struct impl *const *)x)->priority, b = (*(struct impl *const *)y)->priority;

    return (a < b) - (a > b); /* highest first; a difference of ints can overflow */
}

/* Whether an implementation serves a kernel name of a kind, or will once tested. */
static int serves(const struct impl *v, const char *kname, enum ccree_kind kind)
{
    return !v->internal && strcmp(v->name, kname) == 0 && type_matches(kind, v->type);
}

/*
 * Binds the accepted implementations of one algorithm by driver name, best first; where the
 * best is refused by name (ENOENT: Linux 7.2's mask, 7.3's allowlist) and every implementation
 * is accepted, those still in their self-tests too, the kernel name, which bound at discovery,
 * can resolve only to an accepted one: its sockets bind that. A failure names the best
 * implementation tried.
 */
static void choose(const struct ccree_drivers *d, const struct ccree_alg *a, struct impl *v, size_t n,
                   const char *restricted, struct ccree_path *p)
{
    struct impl **c = calloc(n + 1, sizeof(*c));
    size_t i, k = 0, accepted = 0;
    int fd, first = 0, all = 1;

    for (i = 0; c != NULL && i < n; i++) {
        if (!serves(&v[i], a->kname, a->kind))
            continue;
        all = all && driver_accepted(d, v[i].driver);
        if (v[i].tested)
            c[k++] = &v[i];
    }
    qsort(c, k, sizeof(*c), by_priority);
    snprintf(p->reason, sizeof(p->reason), "no usable %s in /proc/crypto", a->kname);
    if (k > 0 && !driver_accepted(d, c[0]->driver)) {
        snprintf(p->driver, sizeof(p->driver), "%s", c[0]->driver);
        snprintf(p->reason, sizeof(p->reason), "driver %s is not hardware (drivers = %s)",
                 c[0]->driver, d->list);
    }
    for (i = 0; i < k; i++) {
        if (!driver_accepted(d, c[i]->driver))
            continue;
        if ((fd = afalg_bind(a->kind, c[i]->driver)) >= 0) {
            close(fd);
            snprintf(p->driver, sizeof(p->driver), "%s", c[i]->driver);
            p->offload = 1;
            p->reason[0] = '\0';
            break;
        }
        if (accepted++ > 0)
            continue;
        first = -fd;
        snprintf(p->driver, sizeof(p->driver), "%s", c[i]->driver);
        if (fd == -ENOENT && *restricted)
            snprintf(p->reason, sizeof(p->reason),
                     "bind of driver %s refused by %s (its allowlist names no driver)",
                     c[i]->driver, restricted);
        else
            snprintf(p->reason, sizeof(p->reason), "bind of driver %s failed: %s%s", c[i]->driver,
                     strerror(-fd),
                     fd == -ENOENT ? " (Linux 7.2+ binds only software implementations)" : "");
    }
    if (!p->offload && first == ENOENT && all) {
        snprintf(p->driver, sizeof(p->driver), "%s", a->kname);
        p->offload = 1;
        p->reason[0] = '\0';
    }
    free(c);
}

/* The first row with the same kernel algorithm as row i: it is discovered once. */
static size_t same_as_earlier(size_t i)
{
    size_t j;

    for (j = 0; j < i; j++)
        if (ccree_algs[j].kind == ccree_algs[i].kind
            && strcmp(ccree_algs[j].kname, ccree_algs[i].kname) == 0)
            break;
    return j;
}

void ccree_discover(const struct ccree_drivers *d, struct ccree_path *paths)
{
    int bound[CCREE_NKINDS] = { 0 }, restrict_lvl = restrict_level(), fd;
    int err[CCREE_NALGS] = { 0 };
    char restricted[96] = ""; /* the allowlist this process gets, if any */
    struct ccree_ident me;
    struct impl *v = NULL;
    size_t i, n = 0;

    memset(paths, 0, CCREE_NALGS * sizeof(*paths));
    if ((fd = afalg_available()) < 0) {
        const char *why = strerror(-fd);

        for (i = 0; i < CCREE_NALGS; i++)
            snprintf(paths[i].reason, sizeof(paths[i].reason), "no AF_ALG: socket: %s%s",
                     why, restrict_lvl == 2 ? " (af_alg_restrict = 2)" : "");
        return;
    }
    ccree_ident(&me);
    if (restrict_lvl > 0)
        snprintf(restricted, sizeof(restricted), "af_alg_restrict = %d to a process %s",
                 restrict_lvl, privileged(&me));
    /* Binding the generic name first also instantiates template algorithms such as cbc(aes). */
    for (i = 0; i < CCREE_NALGS; i++) {
        if (same_as_earlier(i) < i)
            continue;
        if ((fd = afalg_bind(ccree_algs[i].kind, ccree_algs[i].kname)) < 0) {
            err[i] = -fd;
            continue;
        }
        close(fd);
        bound[ccree_algs[i].kind] = 1;
    }
    v = read_proc_crypto(&n);
    for (i = 0; i < CCREE_NALGS; i++) {
        const struct ccree_alg *a = &ccree_algs[i];
        struct ccree_path *p = &paths[i];
        size_t j = same_as_earlier(i);

        if (j < i)
            *p = paths[j];
        else if (err[i] == ENOENT && *restricted)
            snprintf(p->reason, sizeof(p->reason), "bind refused by %s", restricted);
        else if (err[i] == ENOENT && !bound[a->kind])
            snprintf(p->reason, sizeof(p->reason), "module algif_%s missing (bind: %s)",
                     afalg_type(a->kind), strerror(err[i]));
        else if (err[i] == ENOENT)
            snprintf(p->reason, sizeof(p->reason), "the kernel has no %s (bind: %s)", a->kname,
                     strerror(err[i]));
        else if (err[i] != 0)
            snprintf(p->reason, sizeof(p->reason), "bind of %s failed: %s", a->kname,
                     strerror(err[i]));
        else if (v == NULL)
            snprintf(p->reason, sizeof(p->reason), "cannot read /proc/crypto");
        else
            choose(d, a, v, n, restricted, p);
    }
    free(v);
}

int ccree_refused(const struct ccree_ident *then, const char *name, char *why, size_t len)
{
    struct ccree_ident now;
    int lvl = restrict_level();
    char knob[40] = "";

    ccree_ident(&now);
    if (lvl >= 0)
        snprintf(knob, sizeof(knob), "; af_alg_restrict = %d", lvl);
    if (now.euid != then->euid || now.egid != then->egid || now.caps != then->caps)
        snprintf(why, len,
                 "bind of %s refused after load (%s): this process's credentials changed since "
                 "(uid %ld %s at load, now uid %ld %s)%s",
                 name, strerror(ENOENT), then->euid, privileged(then), now.euid, privileged(&now),
                 knob);
    else if (now.pid != then->pid)
        snprintf(why, len,
                 "bind of %s refused after load (%s): this process forked from %ld, which loaded "
                 "the provider%s",
                 name, strerror(ENOENT), then->pid, knob);
    else
        return 0;
    return 1;
}

/* The AEADs of Linux's kernel TLS, by the names net/tls asks the crypto API for. */
static const struct {
    const char *cipher, *kname;
} ktls_ciphers[] = {
    { "AES-128-GCM", "gcm(aes)" },
    { "AES-256-GCM", "gcm(aes)" },
    { "AES-128-CCM", "ccm(aes)" },
    { "ChaCha20-Poly1305", "rfc7539(chacha20,poly1305)" },
};

/* Whether a line of the kernel's module list names net/tls's tls.ko. */
static int names_tls(const char *line)
{
    const char *k = strstr(line, "tls.ko");

    return k != NULL && (k == line || k[-1] == '/') && strchr(":.\n", k[6]) != NULL;
}

/* 1 when the kernel's module list names tls.ko, 0 when not, -1 when it cannot be read. */
static int module_listed(const char *list)
{
    struct utsname u;
    char path[256], line[512];
    FILE *f;
    int found = 0;

    if (uname(&u) != 0)
        return -1;
    snprintf(path, sizeof(path), "/lib/modules/%s/%s", u.release, list);
    if ((f = fopen(path, "re")) == NULL)
        return -1;
    while (!found && fgets(line, sizeof(line), f) != NULL)
        found = names_tls(line);
    fclose(f);
    return found;
}

/* The tls module: its counters exist once it is loaded or built in. */
static const char *ktls_module(void)
{
    struct stat st;
    int dep;

    if (stat("/proc/net/tls_stat", &st) == 0 || stat("/sys/module/tls", &st) == 0)
        return "loaded";
    if (module_listed("modules.builtin") == 1)
        return "built in";
    if ((dep = module_listed("modules.dep")) == 1)
        return "not loaded (modprobe tls: only a process with CAP_NET_ADMIN loads it on use)";
    return dep == 0 ? "missing" : "not loaded, and no module list of this kernel";
}

/*
 * What the kernel's crypto_alloc_aead(kname, 0, 0) takes: the highest priority usable AEAD of
 * that name; of equal ones, the first /proc/crypto lists (the kernel's own list order).
 */
static const struct impl *kernel_choice(const struct impl *v, size_t n, const char *kname)
{
    const struct impl *best = NULL;
    size_t i;

    for (i = 0; i < n; i++)
        if (v[i].tested && serves(&v[i], kname, CCREE_AEAD)
            && (best == NULL || v[i].priority > best->priority))
            best = &v[i];
    return best;
}

static int append(char **s, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int append(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    char *t;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (t = realloc(*s, *len + n + 1)) == NULL)
        return 0;
    *s = t;
    va_start(ap, fmt);
    vsnprintf(*s + *len, n + 1, fmt, ap);
    va_end(ap);
    *len += n;
    return 1;
}

char *ccree_ktls_report(const struct ccree_drivers *d)
{
    char *s = NULL, line[256], key[64];
    unsigned long long val;
    size_t i, n = 0, len = 0;
    struct impl *v = read_proc_crypto(&n);
    const char *module = ktls_module();
    int ok = append(&s, &len, "module\t%s\n", module);
    FILE *f;

    for (i = 0; ok && i < sizeof(ktls_ciphers) / sizeof(ktls_ciphers[0]); i++) {
        const struct impl *c = kernel_choice(v, n, ktls_ciphers[i].kname);
        const char *why = "-";

        if (strcmp(module, "missing") == 0)
            why = "no tls module";
        else if (v == NULL)
            why = "cannot read /proc/crypto";
        else if (c == NULL)
            why = "not registered: the kernel makes it from its templates at first use";
        else if (!driver_accepted(d, c->driver))
            why = "not hardware (drivers)";
        if (c != NULL)
            ok = append(&s, &len, "cipher\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n",
                        ktls_ciphers[i].cipher, ktls_ciphers[i].kname, c->driver, c->priority,
                        c->async ? "async" : "sync",
                        driver_accepted(d, c->driver) ? "hardware" : "software", why);
        else
            ok = append(&s, &len, "cipher\t%s\t%s\t-\t-\t-\t-\t%s\n", ktls_ciphers[i].cipher,
                        ktls_ciphers[i].kname, why);
    }
    free(v);
    /* The kernel's counters of this network namespace; present once the module is loaded. */
    if ((f = fopen("/proc/net/tls_stat", "re")) != NULL) {
        while (ok && fgets(line, sizeof(line), f) != NULL)
            if (sscanf(line, "%63s %llu", key, &val) == 2)
                ok = append(&s, &len, "counter\t%s\t%llu\n", key, val);
        fclose(f);
    }
    if (!ok) {
        free(s);
        return NULL;
    }
    return s;
}
