/* The algorithm table: one row per algorithm drives discovery, dispatch and params. */
#ifndef CCREE_ALGS_H
#define CCREE_ALGS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum ccree_kind { CCREE_SKCIPHER, CCREE_HASH, CCREE_AEAD, CCREE_NKINDS };

struct ccree_alg {
    const char *names;  /* OpenSSL's names (providers/implementations/include/prov/names.h) */
    const char *kname;  /* kernel crypto API name */
    enum ccree_kind kind;
    int mode;           /* EVP_CIPH_*_MODE; 0 for digests */
    size_t keylen;      /* 0 for digests */
    size_t ivlen;       /* AEAD: the default; GCM and CCM take others */
    size_t blocksize;   /* as OpenSSL reports it: 1 for CTR */
    size_t mdsize;      /* digests only */
};

/* Process-wide counters of one algorithm, indexed [0] kernel, [1] software. */
struct ccree_stats {
    _Atomic uint64_t ops[2];
    _Atomic uint64_t bytes[2];
};

#define CCREE_NALGS 20

extern const struct ccree_alg ccree_algs[CCREE_NALGS];
extern struct ccree_stats ccree_stats[CCREE_NALGS];

void ccree_count(size_t idx, int software, size_t ops, size_t bytes);

#endif
