/*
 * The model of the differential fuzz target: how ccree may differ from the default provider.
 *
 * The rule: where the default provider fails, ccree fails (with its error or with exactly the
 * default provider's); where ccree succeeds, its return, lengths and bytes (output, tag, IV,
 * MAC) are the default provider's. ccree may fail, with its own error (ERR library "ccree"),
 * where the default provider succeeds only as a pattern of the table below says; in a few
 * patterns it must (and the default provider, which would misbehave, is not asked). After an
 * allowed refusal the two contexts differ, and the run ends.
 *
 * One deliberate difference is in bytes, not a refusal, and has its own check (withholds):
 * a GCM decryption whose tag was set before its data is checked whole at its data update; on a
 * mismatch that update returns zeros where the default provider returns the unauthenticated
 * plaintext, and the message's final must then fail on both.
 *
 * Whatever the pattern: a failed AEAD decryption leaves no plaintext in ccree's output.
 *
 * The oracle has one known fault (stale): after CCM data failed (a length other than the one
 * announced: the failed call overwrote its nonce's flags and length, OpenSSL 3.0.20), the
 * default provider's context refuses later lengths, AAD, data and tags. There ccree may
 * succeed, with exactly what a fresh default context gives for an untampered message
 * (expect).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "fuzz.h"
#include "prov.h"

tu_log fuzz_log;

/* --- the input ----------------------------------------------------------------------------- */

unsigned take(struct input *in, size_t k)
{
    unsigned v = 0;

    while (k--) {
        v = v << 8 | (in->n ? *in->p : 0);
        if (in->n) {
            in->p++;
            in->n--;
        }
    }
    return v;
}

void bytes(struct input *in, unsigned char *b, size_t k)
{
    while (k--)
        *b++ = (unsigned char)take(in, 1);
}

/* Mostly small lengths; the top bits select up to MAXLEN - 1, past 64 KiB. */
size_t length(struct input *in)
{
    unsigned v = take(in, 2);

    return (v & 0xc000) == 0xc000 ? (v & 0x3fff) * 16 : v & 0x1fff;
}

/* --- the patterns -------------------------------------------------------------------------- */

struct pattern {
    const char *name;
    int must;   /* ccree must refuse; the default provider is not asked */
    int reason; /* a refusal that may be: the reason ccree's error carries; 0: any of ccree's */
    int (*applies)(const struct state *s, const struct call *c);
    unsigned long seen;
};

static int after_final(const struct state *s, const struct call *c)
{
    return s->finished && (c->kind == CALL_MAC_UPDATE || c->kind == CALL_MAC_FINAL
                           || c->kind == CALL_MAC_NULL);
}

static int null_update(const struct state *s, const struct call *c)
{
    (void)s;
    return c->kind == CALL_MAC_NULL;
}

static int nonce_data(const struct state *s, const struct call *c)
{
    return s->reused && c->kind == CALL_DATA && c->inlen > 0;
}

static int nonce_other(const struct state *s, const struct call *c)
{
    return s->reused && c->kind != CALL_INIT && c->kind != CALL_COPY;
}

static int ccm_lengths(const struct state *s, const struct call *c)
{
    (void)c;
    return s->aead && !s->gcm && s->lens_after_key;
}

static int ccm_too_long(const struct state *s, const struct call *c)
{
    return s->aead && !s->gcm && c->kind == CALL_AAD && s->ccm_l < 8
           && (c->inlen >> (8 * s->ccm_l)) != 0;
}

static int gcm_iv_finished(const struct state *s, const struct call *c)
{
    return s->aead && s->gcm && s->gcm_final && c->kind != CALL_INIT && c->kind != CALL_COPY;
}

static int ccm_record_iv(const struct state *s, const struct call *c)
{
    return s->aead && !s->gcm && s->odd_record_iv && c->record;
}

static int withheld(const struct state *s, const struct call *c)
{
    return s->withheld && (c->kind == CALL_DATA || c->kind == CALL_PARAM);
}

static int ccm_more_data(const struct state *s, const struct call *c)
{
    return s->aead && !s->gcm && c->kind == CALL_DATA && c->inlen == 0;
}

static int after_failure(const struct state *s, const struct call *c)
{
    (void)c;
    return s->failed;
}

static int fault(const struct state *s, const struct call *c)
{
    (void)s;
    return c->fault;
}

static int overlap(const struct state *s, const struct call *c)
{
    return !s->aead && c->kind == CALL_DATA && c->inplace;
}

/* A kernel's EBADMSG on a decryption is its verdict (see withheld_by_fault), here on no data. */
static int fault_verdict(const struct state *s, const struct call *c)
{
    return s->aead && s->gcm && !s->enc && s->data_fault && c->kind == CALL_FINAL;
}

static struct pattern model[] = {
    { "update or final after a MAC's final", 1, 0, after_final, 0 },
    { "EVP_MAC_update(ctx, NULL, n > 0) (the default provider reads NULL)", 1, 0, null_update, 0 },
    { "an AEAD encryption after a re-init with a key and no IV, once data was encrypted under "
      "that IV", 1, 0, nonce_data, 0 },
    { "any other call of that message", 0, CCREE_R_BAD_STATE, nonce_other, 0 },
    { "CCM: an IV or tag length set after the key (the default provider keeps the key's)", 0,
      CCREE_R_BAD_STATE, ccm_lengths, 0 },
    { "CCM: a data length that does not fit the nonce's length field, refused when announced "
      "(the default provider fails at the data)", 0, CCREE_R_BAD_LENGTH, ccm_too_long, 0 },
    { "GCM: a call after a final without a new IV (the default provider goes on after a failed "
      "final)", 0, CCREE_R_BAD_STATE, gcm_iv_finished, 0 },
    { "CCM: a TLS record under an IV of other than 12 bytes (the default provider makes a "
      "nonce of that length)", 0, CCREE_R_BAD_STATE, ccm_record_iv, 0 },
    { "GCM decryption with its tag first: after a withheld update, more data or a new tag", 0,
      CCREE_R_BAD_STATE, withheld, 0 },
    { "ECB/CBC in place over bytes held from an earlier update (partially overlapping)", 0,
      CCREE_R_OVERLAP, overlap, 0 },
    { "CCM: an empty data update after the message's data (ccree takes CCM data in one "
      "update; the default provider goes on)", 0, 0, ccm_more_data, 0 },
    { "AEAD: a call on a context where both providers refused one before (their states after a "
      "failure differ: a refusal shows it, never bytes)", 0, 0, after_failure, 0 },
    { "a fault hit one of the call's kernel requests", 0, 0, fault, 0 },
    { "GCM decryption with its tag first: the final after a fault hit its data (a kernel's "
      "EBADMSG is a verdict)", 0, CCREE_R_BAD_DECRYPT, fault_verdict, 0 },
};
#define NMODEL (sizeof(model) / sizeof(model[0]))

struct pattern *model_must(const struct state *s, const struct call *c)
{
    size_t i;

    for (i = 0; i < NMODEL; i++)
        if (model[i].must && model[i].applies(s, c))
            return &model[i];
    return NULL;
}

/* --- the verdict --------------------------------------------------------------------------- */

void fuzz_die(const char *what)
{
    fprintf(stderr, "%s\ncalls: %s\n", what, fuzz_log.s);
    ERR_print_errors_fp(stderr);
    abort();
}

static void differ(const struct call *c, const char *what)
{
    char s[512];

    snprintf(s, sizeof(s), "ccree differs from the default provider in %s: %s (ccree %d/%zu, "
             "default %d/%zu%s)", c->what, what, c->r[0], c->n[0], c->r[1], c->n[1],
             c->fault ? ", a fault hit" : "");
    fuzz_die(s);
}

static int evp_error(const tu_errs *e)
{
    return e->n > 0 && ERR_GET_LIB(e->e[0]) == ERR_LIB_EVP;
}

static int has_reason(const tu_errs *e, int reason)
{
    int i;

    for (i = 0; i < e->n; i++)
        if (reason == 0 || ERR_GET_REASON(e->e[i]) == reason)
            return 1;
    return 0;
}

/* A failed AEAD decryption's output holds no block (or whole short message) of plaintext. */
static void no_plaintext(const struct call *c)
{
    size_t i, k;

    if (c->plain == NULL || c->out[0] == NULL || c->inlen < 4)
        return;
    for (i = 0; i < c->inlen; i += 16) {
        k = c->inlen - i < 16 ? c->inlen - i : 16;
        if (k >= 4 && memcmp(c->out[0] + i, c->plain + i, k) == 0)
            differ(c, "plaintext left in the output of a failed decryption");
    }
}

static int zeros(const unsigned char *b, size_t n)
{
    while (n > 0 && b[n - 1] == 0)
        n--;
    return n == 0;
}

/* The deliberate difference in bytes (see the top): a tag-first GCM decryption withheld. */
static int withholds(struct state *s, const struct call *c)
{
    if (!(s->aead && s->gcm && !s->enc && s->tag_first && c->kind == CALL_DATA
          && c->n[0] == c->n[1] && zeros(c->out[0], c->outlen ? c->outlen : c->n[0])))
        return 0;
    s->withheld = c->fault ? 2 : 1; /* 2: a fault hit the request */
    note(" [withheld]");
    return 1;
}

static enum verdict compare(struct state *s, const struct call *c)
{
    size_t n = c->outlen ? c->outlen : c->n[0];

    if (c->r[0] != c->r[1] || c->n[0] != c->n[1])
        differ(c, "the result or output length");
    if (c->out[0] != NULL && n > 0 && memcmp(c->out[0], c->out[1], n) != 0 && !withholds(s, c))
        differ(c, "the output");
    if (c->kind == CALL_FINAL && s->withheld)
        differ(c, "the data withheld, the default provider authenticates the message");
    return SAME;
}

/* The oracle's known fault (see the top): ccree's output is what a fresh context gives. */
static int stale(const struct state *s, const struct call *c)
{
    if (s->stale && c->kind == CALL_AAD) /* its length or AAD, refused by the default provider */
        return 1;
    return s->stale && c->expect != NULL && c->out[0] != NULL && c->n[0] >= c->inlen
           && memcmp(c->out[0], c->expect, c->inlen) == 0;
}

/*
 * A kernel's EBADMSG on a decryption is its verdict: ccree cannot tell a driver that fails an
 * authentic message (the faults here: EBADMSG, or an answer cut short, which makes the kernel
 * check a shorter message) from a forgery, and refuses the message.
 */
static int withheld_by_fault(const struct state *s, const struct call *c)
{
    return c->kind == CALL_FINAL && s->withheld == 2;
}

/*
 * A GCM decryption's final without a tag of its own checks a tag set before: ccree the last one
 * set, the default provider the one in its buffer, where a failed TLS record leaves the tag it
 * computed.
 */
static int stale_tag(const struct state *s, const struct call *c)
{
    return s->aead && s->gcm && !s->enc && c->kind == CALL_FINAL && s->failed && !s->own_tag;
}

/* Where ccree may succeed and the default provider fails: the oracle's faults; and where the
 * final of a message ccree withheld may fail: a kernel's verdict. */
static struct pattern known_faults[] = {
    { .name = "the default provider's stale CCM state after failed data (ccree gives a fresh "
      "context's bytes)", .applies = stale },
    { .name = "a kernel's EBADMSG on a tag-first GCM decryption (a fault) is a verdict: the data "
      "withheld, final refuses the message", .applies = withheld_by_fault },
    { .name = "GCM decryption: a final without a tag of its own after a failure (the default "
      "provider's buffer may hold a failed TLS record's tag)", .applies = stale_tag },
};
#define NKNOWN (sizeof(known_faults) / sizeof(known_faults[0]))

static struct pattern *known(const struct state *s, const struct call *c)
{
    size_t i;

    for (i = 0; i < NKNOWN; i++)
        if (known_faults[i].applies(s, c))
            return &known_faults[i];
    return NULL;
}

/* A copy that fails as the default provider's does, both without an error (dupctx raises none). */
static int silent_copy(const struct call *c)
{
    return c->kind == CALL_COPY && c->e[0].n == 0 && c->e[1].n == 0;
}

static struct pattern *may(const struct state *s, const struct call *c)
{
    size_t i;

    for (i = 0; i < NMODEL; i++)
        if (!model[i].must && model[i].applies(s, c) && has_reason(&c->e[0], model[i].reason))
            return &model[i];
    return NULL;
}

enum verdict judge(struct state *s, struct call *c)
{
    struct pattern *p = c->must;

    note("=%d", c->r[0]);
    if (!c->r[0])
        no_plaintext(c);
    if (p != NULL) { /* refused by ccree, or by libcrypto before any provider */
        if (c->r[0] || !(tu_ccree_raised(&c->e[0]) || evp_error(&c->e[0])))
            differ(c, p->name);
        p->seen++;
        return SAME;
    }
    if (c->r[0] && c->r[1])
        return compare(s, c);
    if (!c->r[0] && !c->r[1]) {
        s->stale |= s->aead && !s->gcm && c->kind == CALL_DATA;
        s->failed |= s->aead;
        if (!tu_failure_ok("ccree", &c->e[0], &c->e[1]) && !silent_copy(c))
            differ(c, "the error of a failure");
        return SAME;
    }
    if (c->r[0] && (p = known(s, c)) == NULL)
        differ(c, "ccree succeeds where the default provider fails");
    if (c->kind == CALL_FINAL && s->withheld && (p = known(s, c)) == NULL)
        differ(c, "the data withheld, the default provider authenticates the message");
    if (c->r[0] || (c->kind == CALL_FINAL && s->withheld)) {
        note(" [known: %s]", p->name);
        p->seen++;
        return REFUSED;
    }
    if (!tu_ccree_raised(&c->e[0]))
        differ(c, "ccree fails without its error where the default provider succeeds");
    if ((p = may(s, c)) == NULL)
        differ(c, "ccree refuses where the model allows no refusal");
    note(" [refused: %s]", p->name);
    p->seen++;
    return REFUSED;
}

void model_report(void)
{
    size_t i;

    for (i = 0; i < NMODEL; i++)
        if (model[i].seen > 0)
            printf("ccree fuzz: model %lu x %s\n", model[i].seen, model[i].name);
    for (i = 0; i < NKNOWN; i++)
        if (known_faults[i].seen > 0)
            printf("ccree fuzz: known %lu x %s\n", known_faults[i].seen, known_faults[i].name);
}

/* --- faults: test/fault.c's selector (ccree_fault_mode overrides CCREE_FAULT) ------------- */

extern char ccree_fault_mode[32] __attribute__((weak));
extern unsigned long ccree_fault_skip __attribute__((weak));
extern unsigned long ccree_fault_hits __attribute__((weak));

static const char *const fault_modes[] = {
    "recv-short",  "recv-write-eio", "recv-garbage-eio", "recv-short-eio", "recv-ebadmsg",
    "recv-enomem", "send-ebusy",     "send-eagain",      "send-enomem",
};
#define NFAULTS (sizeof(fault_modes) / sizeof(fault_modes[0]))

static int chosen = -1;
static unsigned long chosen_skip, hits;

int faults_available(void)
{
    char *volatile mode = ccree_fault_mode;
    unsigned long *volatile skip = &ccree_fault_skip, *volatile hit = &ccree_fault_hits;

    return mode != NULL && skip != NULL && hit != NULL;
}

/* One byte: a fault (about one in four) and the requests it lets through first (0 to 7). */
void fault_choose(struct input *in)
{
    unsigned v = take(in, 1);

    chosen = v % 32 < NFAULTS ? (int)(v % 32) : -1;
    chosen_skip = v >> 5;
    if (chosen >= 0)
        note(" {%s+%lu}", fault_modes[chosen], chosen_skip);
}

void fault_none(void)
{
    chosen = -1;
}

void fault_arm(void)
{
    if (chosen < 0 || !faults_available())
        return;
    hits = ccree_fault_hits;
    ccree_fault_skip = chosen_skip;
    snprintf(ccree_fault_mode, sizeof(ccree_fault_mode), "%s", fault_modes[chosen]);
}

/* Whether the armed fault hit one of the call's kernel requests. */
int fault_disarm(void)
{
    if (chosen < 0 || !faults_available())
        return 0;
    ccree_fault_mode[0] = '\0';
    ccree_fault_skip = 0;
    if (ccree_fault_hits == hits)
        return 0;
    note(" {hit}");
    return 1;
}
