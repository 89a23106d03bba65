/*
 * The differential fuzz target's shared parts: the input reader, the lockstep call, the model
 * of ccree's deliberate differences from the default provider (fuzz_model.c), and the faults a
 * fuzz byte chooses for ccree's kernel requests.
 */
#ifndef CCREE_FUZZ_H
#define CCREE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "../testutil.h"

#define MAXLEN (256 * 1024)

extern OSSL_LIB_CTX *fuzz_libctx;
extern unsigned char fuzz_src[MAXLEN + 64]; /* seeded bytes: messages, keys */

/* --- the input, consumed from the front; reads past its end give zeros ---------------------- */

struct input {
    const uint8_t *p;
    size_t n;
};

unsigned take(struct input *in, size_t k);
void bytes(struct input *in, unsigned char *b, size_t k);
size_t length(struct input *in); /* mostly small; now and then up to MAXLEN - 16 */

/* --- the lockstep call ---------------------------------------------------------------------- */

/* What a call is, for the model. */
enum call_kind {
    CALL_INIT,      /* an init; AEAD: with a key, an IV, both or neither */
    CALL_PARAM,     /* set or get a parameter */
    CALL_AAD,       /* AEAD: AAD, or CCM's length */
    CALL_DATA,      /* data in or out: a cipher or AEAD update, EVP_Cipher, a TLS record */
    CALL_FINAL,     /* a final */
    CALL_MAC_UPDATE,
    CALL_MAC_NULL,  /* EVP_MAC_update(ctx, NULL, n > 0) */
    CALL_MAC_FINAL,
    CALL_COPY,
};

/* What the model knows of a lockstep pair; a copy of a pair copies it. */
struct state {
    int aead, gcm, enc;
    int spent;          /* AEAD encryption: data encrypted under the IV set last */
    int reused;         /* ...and then a re-init with a key and no IV */
    int keyed;          /* AEAD: a key was set */
    int lens_after_key; /* CCM: an IV or tag length set after the key */
    size_t ccm_l;       /* CCM: the length field's bytes, 15 - the IV length */
    int odd_record_iv;  /* CCM: an IV length other than TLS 1.2 records' 12 bytes */
    int tag_first;      /* GCM decryption: the tag set before this message's data */
    int own_tag;        /* GCM decryption: a tag set for this message */
    int data_fault;     /* GCM decryption, tag first: a fault hit this message's data */
    int withheld;       /* GCM decryption: ccree withheld this message's data (1; 2: a fault hit) */
    int finished;       /* MAC: finalised, no init since */
    int gcm_final;      /* GCM: a final (even a failed one) since the IV was set */
    int stale;          /* CCM: the default provider failed data on this context */
    int failed;         /* AEAD: both providers refused a call on this context */
};

/* One call on ccree ([0]) and the default provider ([1]), and what came back. */
struct call {
    enum call_kind kind;
    const char *what;
    struct pattern *must;       /* ccree must refuse (the default provider is not asked) */
    int fault;                  /* a fault hit one of ccree's kernel requests */
    int inplace;
    int record;                 /* a TLS 1.2 record */
    size_t inlen;
    int r[2];
    tu_errs e[2];
    size_t n[2];                /* output lengths */
    unsigned char *out[2];      /* outputs, compared; NULL: none */
    size_t outlen;              /* the bytes of out compared; 0: n[0] (out NULL: none) */
    const unsigned char *plain; /* AEAD decryption: the plaintext, inlen bytes (no leak) */
    const unsigned char *expect; /* what a fresh default context gives, inlen bytes; NULL: none */
};

/* The verdict on a call: both agree, or ccree refused as the model allows (the pair differs). */
enum verdict { SAME, REFUSED };

/* A lockstep run's log, for the report of a difference. */
extern tu_log fuzz_log;
#define note(...) tu_note(&fuzz_log, __VA_ARGS__)

/* The pattern of the model by which ccree must refuse this call, or NULL. */
struct pattern *model_must(const struct state *s, const struct call *c);

/* The call judged by the model: a difference it does not allow aborts with the log. */
enum verdict judge(struct state *s, struct call *c);

void fuzz_die(const char *what);

/*
 * One call on each side (the body sees the side as i): ccree's with the armed fault, the
 * default provider's unless the model says ccree must refuse. Outputs and lengths are the
 * body's to fill.
 */
#define LOCKSTEP(s, c, i, ...)                                                                     \
    do {                                                                                           \
        (c)->must = model_must((s), (c));                                                    \
        for ((i) = 0; (i) < 2 && !((i) == 1 && (c)->must != NULL); (i)++) {                        \
            ERR_clear_error();                                                                     \
            if ((i) == 0)                                                                          \
                fault_arm();                                                                       \
            __VA_ARGS__;                                                                           \
            if ((i) == 0)                                                                          \
                (c)->fault = fault_disarm();                                                       \
            tu_take_errors(&(c)->e[i]);                                                            \
        }                                                                                          \
    } while (0)

/* --- faults -------------------------------------------------------------------------------- */

/* A fuzz byte chooses the fault for ccree's next kernel requests (none, most often). */
void fault_choose(struct input *in);
void fault_arm(void);
int fault_disarm(void); /* whether the fault hit a kernel request */
int faults_available(void);
void fault_none(void);

/* How often each pattern of the model was seen, at exit. */
void model_report(void);

/* --- the families ------------------------------------------------------------------------- */

void run_aead(EVP_CIPHER *const cipher[2], struct input *in);
void run_mac(EVP_MAC *const mac[2], const char *name, const char *alg, size_t keylen,
             struct input *in);

#endif /* CCREE_FUZZ_H */
