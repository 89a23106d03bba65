/* test_evp: known answers, independent of the default provider. */
#include "evp.h"

/* ------------------------------------------------------------------ */
/* KAT                                                                  */
/* ------------------------------------------------------------------ */

static void kat_cipher(const char *name, const char *key, const char *iv,
                       const char *pt, const char *ct)
{
    unsigned char k[32], v[16], p[32], c[32], out[64];
    size_t ci, klen = strlen(key) / 2, n = strlen(pt) / 2;
    EVP_CIPHER_CTX *ctx;
    int l1 = 0, l2 = 0, enc;
    csnap s;

    for (ci = 0; ci < NCIPHERS; ci++)
        if (strcmp(ciphers[ci].name, name) == 0)
            break;
    assert_true(ci < NCIPHERS);
    where("test=kat alg=%s", name);
    assert_true(tu_unhex(key, k, klen));
    assert_true(iv == NULL || tu_unhex(iv, v, strlen(iv) / 2));
    assert_true(tu_unhex(pt, p, n) && tu_unhex(ct, c, n));
    counters_begin(&s, name, 1);
    for (enc = 1; enc >= 0; enc--) {
        ctx = EVP_CIPHER_CTX_new();
        assert_non_null(ctx);
        CHECK(EVP_CipherInit_ex2(ctx, subj_c[ci], k, iv ? v : NULL, enc,
                                 NULL) == 1, "init");
        CHECK(EVP_CIPHER_CTX_set_padding(ctx, 0) == 1, "padding");
        CHECK(EVP_CipherUpdate(ctx, out, &l1, enc ? p : c, (int)n) == 1,
              "update");
        CHECK(EVP_CipherFinal_ex(ctx, out + l1, &l2) == 1, "final");
        expect_bytes(enc ? "KAT encrypt" : "KAT decrypt", out,
                     (size_t)(l1 + l2), enc ? c : p, n);
        EVP_CIPHER_CTX_free(ctx);
    }
    counters_end(&s);
}

static void kat_md(const char *name, const char *msg, const char *hex)
{
    unsigned char exp[64], out[EVP_MAX_MD_SIZE];
    unsigned int outl = 0;
    size_t mi, n = strlen(hex) / 2;
    csnap s;

    for (mi = 0; mi < NMDS; mi++)
        if (strcmp(mds[mi].name, name) == 0)
            break;
    assert_true(mi < NMDS);
    where("test=kat alg=%s", name);
    assert_true(tu_unhex(hex, exp, n));
    counters_begin(&s, name, 1);
    CHECK(EVP_Digest(msg, strlen(msg), out, &outl, subj_m[mi], NULL) == 1,
          "EVP_Digest");
    expect_bytes("KAT digest", out, outl, exp, n);
    counters_end(&s);
}

void test_kat(void **state)
{
    (void)state;
    /* FIPS-197 appendix C */
    kat_cipher("AES-128-ECB", "000102030405060708090a0b0c0d0e0f", NULL,
               "00112233445566778899aabbccddeeff",
               "69c4e0d86a7b0430d8cdb78070b4c55a");
    kat_cipher("AES-192-ECB",
               "000102030405060708090a0b0c0d0e0f1011121314151617", NULL,
               "00112233445566778899aabbccddeeff",
               "dda97ca4864cdfe06eaf70a0ec0d7191");
    kat_cipher("AES-256-ECB",
               "000102030405060708090a0b0c0d0e0f"
               "101112131415161718191a1b1c1d1e1f", NULL,
               "00112233445566778899aabbccddeeff",
               "8ea2b7ca516745bfeafc49904b496089");
    /* SP 800-38A F.2.1 CBC-AES128.Encrypt, block #1 */
    kat_cipher("AES-128-CBC", "2b7e151628aed2a6abf7158809cf4f3c",
               "000102030405060708090a0b0c0d0e0f",
               "6bc1bee22e409f96e93d7e117393172a",
               "7649abac8119b246cee98e9b12e9197d");
    /* SP 800-38A F.5.1 CTR-AES128.Encrypt, block #1 */
    kat_cipher("AES-128-CTR", "2b7e151628aed2a6abf7158809cf4f3c",
               "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
               "6bc1bee22e409f96e93d7e117393172a",
               "874d6191b620e3261bef6864990db6ce");
    /* GB/T 32907-2016 example 1 */
    kat_cipher("SM4-ECB", "0123456789abcdeffedcba9876543210", NULL,
               "0123456789abcdeffedcba9876543210",
               "681edf34d206965e86b3e94f536e4246");
    /* FIPS 81 appendix B, ECB */
    kat_cipher("DES-ECB", "0123456789abcdef", NULL, "4e6f772069732074",
               "3fa40e8a984d4815");
    /* SP 800-67 Rev. 1 appendix B */
    kat_cipher("DES-EDE3-ECB",
               "0123456789abcdef23456789abcdef01456789abcdef0123", NULL,
               "54686520717566636b2062726f776e20666f78206a756d70",
               "a826fd8ce53b855fcce21c8112256fe668d5c05dd9b6b900");
    kat_md("SHA1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d");
    kat_md("MD5", "abc", "900150983cd24fb0d6963f7d28e17f72");
    kat_md("SM3", "abc",
           "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
    kat_md("SHA2-256", "abc",
           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    kat_md("SHA2-224", "abc",
           "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7");
    kat_md("SHA2-384", "abc",
           "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
           "8086072ba1e7cc2358baeca134c825a7");
    kat_md("SHA2-512", "abc",
           "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
           "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
}
