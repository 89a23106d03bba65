/* The algorithm table: one row per algorithm drives discovery, dispatch and params. */
#ifndef CCREE_ALGS_H
#define CCREE_ALGS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's socket types. */
enum ccree_kind { CCREE_SKCIPHER, CCREE_HASH, CCREE_AEAD, CCREE_NKINDS };

/* OpenSSL's operations: a hash row is a digest, or a MAC when it names what it runs on. */
enum ccree_op { CCREE_OP_CIPHER, CCREE_OP_DIGEST, CCREE_OP_MAC };

struct ccree_alg {
    const char *names;   /* OpenSSL's names (providers/implementations/include/prov/names.h) */
    const char *under;   /* a MAC: the digest or cipher it runs on, as OpenSSL names it */
    const char *kname;   /* kernel crypto API name */
    enum ccree_kind kind;
    int mode;            /* EVP_CIPH_*_MODE; 0 for digests and MACs */
    unsigned long flags; /* the EVP_CIPH_* or EVP_MD_FLAG_* flags OpenSSL reports */
    size_t keylen;       /* 0 for digests and HMAC (any length) */
    size_t ivlen;        /* AEAD: the default; GCM and CCM take others */
    size_t blocksize;    /* as OpenSSL reports it: 1 for CTR and XTS */
    size_t mdsize;       /* digests and MACs */
};

/* Process-wide counters of one algorithm, indexed [0] kernel, [1] software. */
struct ccree_stats {
    _Atomic uint64_t ops[2];
    _Atomic uint64_t bytes[2];
};

#define CCREE_NALGS 43
#define CCREE_NAME_MAX 32 /* the longest name below, "CMAC-AES-128-CBC" ..., fits */

extern const struct ccree_alg ccree_algs[CCREE_NALGS];
extern struct ccree_stats *_Atomic ccree_stats; /* in memory, or in the file of src/stats.c */

enum ccree_op ccree_op(size_t idx);
/* A MAC's family: the operation of the row it runs on (CMAC: a cipher; HMAC: a digest). */
enum ccree_op ccree_under(size_t idx);
/* AEAD, XTS, CBC-CTS: a request is one message, and an answer cut short is no prefix of it. */
int ccree_whole(size_t idx);
/* The name reports use: OpenSSL's first name, or for a MAC "HMAC-SHA2-256". */
const char *ccree_name(size_t idx, char buf[CCREE_NAME_MAX]);
/* A count added after src/stats.c moved the counters from s: moved after them. */
void ccree_count_late(size_t idx, struct ccree_stats *s);

/*
 * Adds to the counters of algorithm idx. All sequentially consistent: if the move's exchange
 * did not take this add, the add came after it, so the load below sees the pointer the move
 * stored before.
 */
static inline void ccree_count(size_t idx, int software, size_t ops, size_t bytes)
{
    struct ccree_stats *s = ccree_stats;

    atomic_fetch_add(&s[idx].ops[software], ops);
    atomic_fetch_add(&s[idx].bytes[software], bytes);
    if (s != ccree_stats)
        ccree_count_late(idx, s);
}

#endif
