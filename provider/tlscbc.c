/*
 * TLS and SSL 3 CBC records: libssl leaves the padding and the MAC of a decrypted record to a
 * provider's CBC cipher. They come off here in constant time: a record with bad padding costs
 * as long as a good one and yields a random MAC, which then fails libssl's MAC check.
 */
#include <string.h>

#include <openssl/prov_ssl.h>
#include <openssl/rand.h>

#include "prov.h"

#define PAD_MAX 256 /* the most padding a record holds, its length byte included */

/* All ones when true, all zeros when false. */
static size_t msb(size_t x)
{
    return 0 - (x >> (sizeof(x) * 8 - 1));
}

static size_t lt(size_t a, size_t b)
{
    return msb(a ^ ((a ^ b) | ((a - b) ^ b)));
}

static size_t ge(size_t a, size_t b)
{
    return ~lt(a, b);
}

static size_t eq(size_t a, size_t b)
{
    size_t x = a ^ b;

    return msb(~x & (x - 1));
}

int ccree_tls_explicit_iv(int version)
{
    if (version == SSL3_VERSION || version == TLS1_VERSION)
        return 0;
    return version == TLS1_1_VERSION || version == TLS1_2_VERSION || version == DTLS1_VERSION
                   || version == DTLS1_2_VERSION || version == DTLS1_BAD_VER
               ? 1
               : -1;
}

/* The MAC that ends at mac_end (secret) of a record of len bytes (public), to mac. */
static void copy_mac(const unsigned char *rec, size_t len, size_t mac_end, size_t macsize,
                     unsigned char *mac)
{
    unsigned char rotated[EVP_MAX_MD_SIZE] = { 0 };
    size_t mac_start = mac_end - macsize, in_mac = 0, offset = 0, i, j, k;
    size_t scan = len > macsize + PAD_MAX ? len - (macsize + PAD_MAX) : 0;

    /* Every byte that can be the MAC's is read; the MAC's land in rotated, rotated by offset. */
    for (i = scan, j = 0; i < len; i++) {
        size_t started = eq(i, mac_start);

        in_mac = (in_mac | started) & lt(i, mac_end);
        offset |= j & started;
        rotated[j] |= rec[i] & (unsigned char)in_mac;
        j++;
        j &= lt(j, macsize);
    }
    for (j = 0; j < macsize; j++, offset++) {
        offset &= lt(offset, macsize);
        mac[j] = 0;
        for (k = 0; k < macsize; k++)
            mac[j] |= rotated[k] & (unsigned char)eq(k, offset);
    }
}

int ccree_tls_cbc_unpad(int version, unsigned char *rec, size_t *len, size_t bs, size_t macsize,
                        unsigned char *mac, OSSL_LIB_CTX *libctx)
{
    unsigned char random[EVP_MAX_MD_SIZE];
    size_t n = *len, pad, good, i;

    if (n < 1 + macsize || macsize > EVP_MAX_MD_SIZE)
        return 0; /* public lengths */
    pad = rec[n - 1];
    good = ge(n, 1 + macsize + pad);
    if (version == SSL3_VERSION) { /* SSL 3 checks only that the padding is minimal */
        good &= ge(bs, pad + 1);
    } else {
        for (i = 0; i < PAD_MAX && i < n; i++)
            good &= ~(ge(pad, i) & (pad ^ rec[n - 1 - i]));
        good = eq(0xff, good & 0xff);
    }
    n -= good & (pad + 1);
    if (macsize == 0) { /* encrypt-then-MAC: the MAC is checked already, the padding is public */
        *len = n;
        return good != 0;
    }
    if (RAND_bytes_ex(libctx, random, macsize, 0) <= 0)
        return 0;
    copy_mac(rec, *len, n, macsize, mac);
    for (i = 0; i < macsize; i++)
        mac[i] = (unsigned char)((good & mac[i]) | (~good & random[i]));
    *len = n - macsize;
    return 1;
}
