// SPDX-License-Identifier: GPL-2.0
/*
 * ccsim: a stand-in for Linux's ccree driver (Arm CryptoCell), for tests.
 *
 * Registers the algorithms drivers/crypto/ccree registers for one hardware
 * revision, under the same names, priority and flags. Each request is checked
 * against ccree's limits, then done by the kernel's own software
 * implementation from a workqueue, after a configurable delay: like the
 * hardware, every request completes asynchronously. Faults and counters are
 * for tests (README.md, "Simulated CryptoCell").
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/version.h>
#include <linux/workqueue.h>
#include <crypto/internal/aead.h>
#include <crypto/internal/hash.h>
#include <crypto/internal/skcipher.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>	/* moved from asm/ in 6.12 */
#else
#include <asm/unaligned.h>
#endif

#define CC_CRA_PRIO		400	/* ccree's priority */
#define CC_MAX_SG_ENTRIES	128	/* ccree's LLI_MAX_NUM_OF_DATA_ENTRIES */
/* Software only: never ccsim itself, nor another driver-only implementation. */
#define CCSIM_MASK		(CRYPTO_ALG_ASYNC | CRYPTO_ALG_KERN_DRIVER_ONLY)

enum { NIST = 1, OSCCA = 2 };			/* ccree's std_body */
enum { SKCIPHER, AEAD, AHASH };
enum { LIM_NONE, LIM_BLOCKS, LIM_MIN16 };	/* ccree's validate_data_size() */
enum { OP_ENC, OP_DEC, OP_UPDATE, OP_FINAL, OP_FINUP, OP_DIGEST };

enum {
	F_NONE, F_EIO, F_ENOMEM, F_EBUSY, F_EBADMSG,
	F_PARTIAL_GARBAGE, F_PARTIAL_PREFIX, F_CORRUPT,
};
static const char *const fault_names[] = {
	"none", "eio", "enomem", "ebusy", "ebadmsg",
	"partial-garbage", "partial-prefix", "corrupt",
};
static const int fault_errno[] = {
	0, -EIO, -ENOMEM, -EBUSY, -EBADMSG, -EIO, -EIO, 0,
};

struct ccsim_alg {
	const char *name;
	const char *driver;
	u8 type;
	u8 limit;
	u8 std;
	u8 blocksize;		/* if not the software one's */
	u16 min_rev;
	bool registered;
	atomic64_t requests, messages, bytes, errors;
	atomic_t in_flight, max_in_flight, fault_seq;
	union {
		struct skcipher_alg sk;
		struct aead_alg ae;
		struct ahash_alg ah;
	} u;
};

#define SK(n, d, r, s, lim, ...) \
	{ .name = n, .driver = d, .type = SKCIPHER, .min_rev = r, .std = s, \
	  .limit = lim, __VA_ARGS__ }
#define AE(n, d) \
	{ .name = n, .driver = d, .type = AEAD, .min_rev = 630, .std = NIST }
#define AH(n, d, r, s) \
	{ .name = n, .driver = d, .type = AHASH, .min_rev = r, .std = s }

/*
 * drivers/crypto/ccree at v6.1: cc_cipher.c skcipher_algs[], cc_aead.c
 * aead_algs[], cc_hash.c driver_hash[] (hash and hmac). Left out: the
 * protected-key algorithms (paes, psm4), which take hardware key slots.
 */
static struct ccsim_alg algs[] = {
	SK("xts(aes)", "xts-aes-ccree", 630, NIST, LIM_MIN16, .blocksize = 1),
	SK("essiv(cbc(aes),sha256)", "essiv-aes-ccree", 712, NIST, LIM_BLOCKS),
	SK("ecb(aes)", "ecb-aes-ccree", 630, NIST, LIM_BLOCKS),
	SK("cbc(aes)", "cbc-aes-ccree", 630, NIST, LIM_BLOCKS),
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)	/* 6.7 removed ofb, ccree's too */
	SK("ofb(aes)", "ofb-aes-ccree", 630, NIST, LIM_NONE, .blocksize = 16),
#endif
	SK("cts(cbc(aes))", "cts-cbc-aes-ccree", 630, NIST, LIM_MIN16),
	SK("ctr(aes)", "ctr-aes-ccree", 630, NIST, LIM_NONE),
	SK("cbc(des3_ede)", "cbc-3des-ccree", 630, NIST, LIM_BLOCKS),
	SK("ecb(des3_ede)", "ecb-3des-ccree", 630, NIST, LIM_BLOCKS),
	SK("cbc(des)", "cbc-des-ccree", 630, NIST, LIM_BLOCKS),
	SK("ecb(des)", "ecb-des-ccree", 630, NIST, LIM_BLOCKS),
	SK("cbc(sm4)", "cbc-sm4-ccree", 713, OSCCA, LIM_BLOCKS),
	SK("ecb(sm4)", "ecb-sm4-ccree", 713, OSCCA, LIM_BLOCKS),
	SK("ctr(sm4)", "ctr-sm4-ccree", 713, OSCCA, LIM_NONE),
	AE("authenc(hmac(sha1),cbc(aes))", "authenc-hmac-sha1-cbc-aes-ccree"),
	AE("authenc(hmac(sha1),cbc(des3_ede))",
	   "authenc-hmac-sha1-cbc-des3-ccree"),
	AE("authenc(hmac(sha256),cbc(aes))", "authenc-hmac-sha256-cbc-aes-ccree"),
	AE("authenc(hmac(sha256),cbc(des3_ede))",
	   "authenc-hmac-sha256-cbc-des3-ccree"),
	AE("authenc(xcbc(aes),cbc(aes))", "authenc-xcbc-aes-cbc-aes-ccree"),
	AE("authenc(hmac(sha1),rfc3686(ctr(aes)))",
	   "authenc-hmac-sha1-rfc3686-ctr-aes-ccree"),
	AE("authenc(hmac(sha256),rfc3686(ctr(aes)))",
	   "authenc-hmac-sha256-rfc3686-ctr-aes-ccree"),
	AE("authenc(xcbc(aes),rfc3686(ctr(aes)))",
	   "authenc-xcbc-aes-rfc3686-ctr-aes-ccree"),
	AE("ccm(aes)", "ccm-aes-ccree"),
	AE("rfc4309(ccm(aes))", "rfc4309-ccm-aes-ccree"),
	AE("gcm(aes)", "gcm-aes-ccree"),
	AE("rfc4106(gcm(aes))", "rfc4106-gcm-aes-ccree"),
	AE("rfc4543(gcm(aes))", "rfc4543-gcm-aes-ccree"),
	AH("hmac(sha1)", "hmac-sha1-ccree", 630, NIST),
	AH("sha1", "sha1-ccree", 630, NIST),
	AH("hmac(sha256)", "hmac-sha256-ccree", 630, NIST),
	AH("sha256", "sha256-ccree", 630, NIST),
	AH("hmac(sha224)", "hmac-sha224-ccree", 630, NIST),
	AH("sha224", "sha224-ccree", 630, NIST),
	AH("hmac(sha384)", "hmac-sha384-ccree", 712, NIST),
	AH("sha384", "sha384-ccree", 712, NIST),
	AH("hmac(sha512)", "hmac-sha512-ccree", 712, NIST),
	AH("sha512", "sha512-ccree", 712, NIST),
	AH("hmac(md5)", "hmac-md5-ccree", 630, NIST),
	AH("md5", "md5-ccree", 630, NIST),
	AH("sm3", "sm3-ccree", 713, OSCCA),
	AH("xcbc(aes)", "xcbc-aes-ccree", 630, NIST),
	AH("cmac(aes)", "cmac-aes-ccree", 630, NIST),
};

/* ccree's cc_hw_data: the 703 is the 713 with only the OSCCA algorithms. */
static const struct {
	const char *name;
	u16 rev;
	u8 std;
} revs[] = {
	{ "630p", 630, NIST | OSCCA }, { "710", 710, NIST | OSCCA },
	{ "712", 712, NIST | OSCCA }, { "713", 713, NIST | OSCCA },
	{ "703", 713, OSCCA },
};

static char rev[8] = "712";
module_param_string(rev, rev, sizeof(rev), 0444);
MODULE_PARM_DESC(rev, "CryptoCell revision: 630p, 710, 712, 713 or 703");

static unsigned int priority = CC_CRA_PRIO;
module_param(priority, uint, 0444);
MODULE_PARM_DESC(priority, "Priority of the algorithms (ccree's: 400)");

static unsigned int latency_us;
module_param(latency_us, uint, 0644);
MODULE_PARM_DESC(latency_us, "Delay of each request (us)");

static unsigned int byte_ns;
module_param(byte_ns, uint, 0644);
MODULE_PARM_DESC(byte_ns, "Further delay per byte of a request (ns)");

static unsigned int queue_len;
module_param(queue_len, uint, 0644);
MODULE_PARM_DESC(queue_len,
		 "Requests in flight before -EBUSY (backlog) or -ENOSPC; 0: no limit");

static int fault;
static int fault_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(fault_names, val);

	if (i < 0)
		return i;
	WRITE_ONCE(fault, i);
	return 0;
}

static int fault_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", fault_names[READ_ONCE(fault)]);
}

static const struct kernel_param_ops fault_ops = {
	.set = fault_set,
	.get = fault_get,
};
module_param_cb(fault, &fault_ops, NULL, 0644);
MODULE_PARM_DESC(fault, "none, eio, enomem, ebusy, ebadmsg (the request fails), "
		 "partial-garbage, partial-prefix (half the output written, -EIO), "
		 "corrupt (one output byte wrong, success)");

static unsigned int fault_every = 1;
module_param(fault_every, uint, 0644);
MODULE_PARM_DESC(fault_every, "The fault hits every Nth request");

static char fault_driver[CRYPTO_MAX_ALG_NAME];
module_param_string(fault_driver, fault_driver, sizeof(fault_driver), 0644);
MODULE_PARM_DESC(fault_driver, "Only this driver's requests fault (default: all)");

static struct workqueue_struct *wq;
static struct dentry *dbg;
static atomic_t queued, fault_seq;
static bool armed;	/* faults spare the self-tests run at registration */

/* The request context: this, then the software implementation's request. */
struct ccsim_rctx {
	struct work_struct work;
	struct ccsim_alg *alg;
	void *req;
	u8 op;
	u8 fault;
	bool backlogged;
	unsigned int nbytes;
};

static void *sub_req(struct ccsim_rctx *rc)
{
	return (u8 *)rc + ALIGN(sizeof(*rc), CRYPTO_MINALIGN);
}

static unsigned int rctx_size(unsigned int sub)
{
	return ALIGN(sizeof(struct ccsim_rctx), CRYPTO_MINALIGN) + sub;
}

static struct ccsim_alg *tfm_alg(struct crypto_tfm *tfm)
{
	struct crypto_alg *base = tfm->__crt_alg;
	struct ccsim_alg *a;

	for (a = algs; a < algs + ARRAY_SIZE(algs); a++)
		if (base == &a->u.sk.base || base == &a->u.ae.base ||
		    base == &a->u.ah.halg.base)
			return a;
	return NULL;
}

/* ccree's cc_map_sg(): "Too many fragments". */
static bool too_many_sg(struct scatterlist *sg, unsigned int len)
{
	return len && sg_nents_for_len(sg, len) > CC_MAX_SG_ENTRIES;
}

static int pick_fault(struct ccsim_alg *a)
{
	int f = READ_ONCE(fault);
	unsigned int every = READ_ONCE(fault_every), n;

	if (!armed || f == F_NONE || !every)
		return F_NONE;
	if (fault_driver[0]) {
		if (strcmp(fault_driver, a->driver))
			return F_NONE;
		n = atomic_inc_return(&a->fault_seq);
	} else {
		n = atomic_inc_return(&fault_seq);
	}
	return n % every ? F_NONE : f;
}

static void done(struct ccsim_rctx *rc, int err)
{
	switch (rc->alg->type) {
	case SKCIPHER:
		skcipher_request_complete(rc->req, err);
		break;
	case AEAD:
		aead_request_complete(rc->req, err);
		break;
	default:
		ahash_request_complete(rc->req, err);
	}
}

/* Runs the request in software, synchronously. */
static int run(struct ccsim_rctx *rc)
{
	void *sub = sub_req(rc);

	switch (rc->alg->type) {
	case SKCIPHER: {
		struct skcipher_request *req = rc->req;

		skcipher_request_set_tfm(sub, *(struct crypto_skcipher **)
					 crypto_skcipher_ctx(crypto_skcipher_reqtfm(req)));
		skcipher_request_set_callback(sub, CRYPTO_TFM_REQ_MAY_SLEEP,
					      NULL, NULL);
		skcipher_request_set_crypt(sub, req->src, req->dst,
					   req->cryptlen, req->iv);
		return rc->op == OP_ENC ? crypto_skcipher_encrypt(sub) :
					  crypto_skcipher_decrypt(sub);
	}
	case AEAD: {
		struct aead_request *req = rc->req;

		aead_request_set_tfm(sub, *(struct crypto_aead **)
				     crypto_aead_ctx(crypto_aead_reqtfm(req)));
		aead_request_set_callback(sub, CRYPTO_TFM_REQ_MAY_SLEEP,
					  NULL, NULL);
		aead_request_set_crypt(sub, req->src, req->dst, req->cryptlen,
				       req->iv);
		aead_request_set_ad(sub, req->assoclen);
		return rc->op == OP_ENC ? crypto_aead_encrypt(sub) :
					  crypto_aead_decrypt(sub);
	}
	default: {
		struct ahash_request *req = rc->req;

		ahash_request_set_callback(sub, CRYPTO_TFM_REQ_MAY_SLEEP,
					   NULL, NULL);
		ahash_request_set_crypt(sub, req->src, req->result,
					req->nbytes);
		switch (rc->op) {
		case OP_UPDATE:
			return crypto_ahash_update(sub);
		case OP_FINAL:
			return crypto_ahash_final(sub);
		case OP_FINUP:
			return crypto_ahash_finup(sub);
		default:
			return crypto_ahash_digest(sub);
		}
	}
	}
}

/* Where the request writes its output: a scatterlist or a buffer. */
struct out {
	struct scatterlist *sg;
	u8 *buf;
	unsigned int off, len;
};

static struct out output(struct ccsim_rctx *rc)
{
	struct out o = {};

	switch (rc->alg->type) {
	case SKCIPHER: {
		struct skcipher_request *req = rc->req;

		o.sg = req->dst;
		o.len = req->cryptlen;
		break;
	}
	case AEAD: {
		struct aead_request *req = rc->req;
		unsigned int tag = crypto_aead_authsize(crypto_aead_reqtfm(req));

		o.sg = req->dst;
		o.off = req->assoclen;
		if (rc->op == OP_ENC)
			o.len = req->cryptlen + tag;
		else if (req->cryptlen >= tag)
			o.len = req->cryptlen - tag;
		break;
	}
	default: {
		struct ahash_request *req = rc->req;

		if (rc->op != OP_UPDATE) {
			o.buf = req->result;
			o.len = crypto_ahash_digestsize(crypto_ahash_reqtfm(req));
		}
	}
	}
	return o;
}

static void out_copy(struct out *o, void *buf, unsigned int off,
		     unsigned int len, bool to_out)
{
	if (o->buf && to_out)
		memcpy(o->buf + off, buf, len);
	else if (o->buf)
		memcpy(buf, o->buf + off, len);
	else if (to_out)
		sg_pcopy_from_buffer(o->sg, sg_nents(o->sg), buf, len,
				     o->off + off);
	else
		sg_pcopy_to_buffer(o->sg, sg_nents(o->sg), buf, len,
				   o->off + off);
}

/* Runs the request with a fault that writes output. */
static int run_faulty(struct ccsim_rctx *rc)
{
	struct out o = output(rc);
	unsigned int half = o.len / 2;
	u8 *keep, b;
	int err;

	if (rc->fault == F_CORRUPT) {
		err = run(rc);
		if (!err && o.len) {
			out_copy(&o, &b, 0, 1, false);
			b ^= 0x01;
			out_copy(&o, &b, 0, 1, true);
		}
		return err;
	}
	/* Partial: the first half written (right or garbage), the rest not. */
	keep = kvmalloc(o.len ?: 1, GFP_KERNEL);
	if (!keep)
		return -ENOMEM;
	out_copy(&o, keep, 0, o.len, false);
	run(rc);
	if (rc->fault == F_PARTIAL_GARBAGE)
		get_random_bytes(keep, half);
	else
		out_copy(&o, keep, 0, half, false);
	out_copy(&o, keep, 0, o.len, true);
	kvfree(keep);
	return -EIO;
}

static void work(struct work_struct *w)
{
	struct ccsim_rctx *rc = container_of(w, struct ccsim_rctx, work);
	struct ccsim_alg *a = rc->alg;
	unsigned long us;
	int err;

	if (rc->backlogged) {
		local_bh_disable();
		done(rc, -EINPROGRESS);
		local_bh_enable();
	}
	us = READ_ONCE(latency_us) +
	     div_u64((u64)rc->nbytes * READ_ONCE(byte_ns), 1000);
	if (us)
		fsleep(us);

	if (rc->fault == F_NONE)
		err = run(rc);
	else if (rc->fault < F_PARTIAL_GARBAGE)
		err = fault_errno[rc->fault];
	else
		err = run_faulty(rc);

	if (err)
		atomic64_inc(&a->errors);
	else
		atomic64_add(rc->nbytes, &a->bytes);
	atomic_dec(&a->in_flight);
	atomic_dec(&queued);
	/* ccree completes from a tasklet: bottom halves are off. */
	local_bh_disable();
	done(rc, err);
	local_bh_enable();
}

static int submit(struct ccsim_alg *a, struct crypto_async_request *base,
		  struct ccsim_rctx *rc, void *req, u8 op, unsigned int nbytes)
{
	int n;

	rc->alg = a;
	rc->req = req;
	rc->op = op;
	rc->nbytes = nbytes;
	rc->fault = pick_fault(a);
	rc->backlogged = false;

	n = atomic_inc_return(&queued);
	if (queue_len && n > queue_len) {
		if (!(base->flags & CRYPTO_TFM_REQ_MAY_BACKLOG)) {
			atomic_dec(&queued);
			atomic64_inc(&a->errors);
			return -ENOSPC;
		}
		rc->backlogged = true;
	}
	n = atomic_inc_return(&a->in_flight);
	for (;;) {
		int max = atomic_read(&a->max_in_flight);

		if (n <= max || atomic_cmpxchg(&a->max_in_flight, max, n) == max)
			break;
	}
	INIT_WORK(&rc->work, work);
	queue_work(wq, &rc->work);
	return rc->backlogged ? -EBUSY : -EINPROGRESS;
}

/* skcipher */

static int sk_init(struct crypto_skcipher *tfm)
{
	struct crypto_skcipher **fb = crypto_skcipher_ctx(tfm);
	struct ccsim_alg *a = tfm_alg(crypto_skcipher_tfm(tfm));

	*fb = crypto_alloc_skcipher(a->name, 0, CCSIM_MASK);
	if (IS_ERR(*fb))
		return PTR_ERR(*fb);
	crypto_skcipher_set_reqsize(tfm, rctx_size(sizeof(struct skcipher_request) +
						   crypto_skcipher_reqsize(*fb)));
	return 0;
}

static void sk_exit(struct crypto_skcipher *tfm)
{
	crypto_free_skcipher(*(struct crypto_skcipher **)crypto_skcipher_ctx(tfm));
}

static int sk_setkey(struct crypto_skcipher *tfm, const u8 *key,
		     unsigned int len)
{
	struct crypto_skcipher *fb = *(struct crypto_skcipher **)crypto_skcipher_ctx(tfm);

	crypto_skcipher_clear_flags(fb, CRYPTO_TFM_REQ_MASK);
	crypto_skcipher_set_flags(fb, crypto_skcipher_get_flags(tfm) &
				  CRYPTO_TFM_REQ_MASK);
	return crypto_skcipher_setkey(fb, key, len);
}

static int sk_crypt(struct skcipher_request *req, u8 op)
{
	struct crypto_skcipher *tfm = crypto_skcipher_reqtfm(req);
	struct ccsim_alg *a = tfm_alg(crypto_skcipher_tfm(tfm));
	unsigned int len = req->cryptlen;
	int err = 0;

	atomic64_inc(&a->requests);
	atomic64_inc(&a->messages);
	if (a->limit == LIM_BLOCKS &&
	    !IS_ALIGNED(len, crypto_skcipher_blocksize(tfm)))
		err = -EINVAL;
	else if (a->limit == LIM_MIN16 && len < 16)
		err = -EINVAL;
	else if (!len)
		return 0;	/* "No data to process is valid" */
	else if (too_many_sg(req->src, len) || too_many_sg(req->dst, len))
		err = -ENOMEM;
	if (err) {
		atomic64_inc(&a->errors);
		return err;
	}
	return submit(a, &req->base, skcipher_request_ctx(req), req, op, len);
}

static int sk_encrypt(struct skcipher_request *req)
{
	return sk_crypt(req, OP_ENC);
}

static int sk_decrypt(struct skcipher_request *req)
{
	return sk_crypt(req, OP_DEC);
}

/* aead */

static int ae_init(struct crypto_aead *tfm)
{
	struct crypto_aead **fb = crypto_aead_ctx(tfm);
	struct ccsim_alg *a = tfm_alg(crypto_aead_tfm(tfm));

	*fb = crypto_alloc_aead(a->name, 0, CCSIM_MASK);
	if (IS_ERR(*fb))
		return PTR_ERR(*fb);
	crypto_aead_set_reqsize(tfm, rctx_size(sizeof(struct aead_request) +
					       crypto_aead_reqsize(*fb)));
	return 0;
}

static void ae_exit(struct crypto_aead *tfm)
{
	crypto_free_aead(*(struct crypto_aead **)crypto_aead_ctx(tfm));
}

static int ae_setkey(struct crypto_aead *tfm, const u8 *key, unsigned int len)
{
	struct crypto_aead *fb = *(struct crypto_aead **)crypto_aead_ctx(tfm);

	crypto_aead_clear_flags(fb, CRYPTO_TFM_REQ_MASK);
	crypto_aead_set_flags(fb, crypto_aead_get_flags(tfm) &
			      CRYPTO_TFM_REQ_MASK);
	return crypto_aead_setkey(fb, key, len);
}

/* GCM: 4, 8, 12 to 16 (ccree's cc_gcm_setauthsize, as the generic one). */
static int ae_setauthsize(struct crypto_aead *tfm, unsigned int size)
{
	return crypto_aead_setauthsize(*(struct crypto_aead **)
				       crypto_aead_ctx(tfm), size);
}

static int ae_crypt(struct aead_request *req, u8 op)
{
	struct crypto_aead *tfm = crypto_aead_reqtfm(req);
	struct ccsim_alg *a = tfm_alg(crypto_aead_tfm(tfm));
	unsigned int tag = crypto_aead_authsize(tfm);
	unsigned int in = req->assoclen + req->cryptlen;
	unsigned int out = op == OP_ENC ? in + tag : in - tag;

	atomic64_inc(&a->requests);
	atomic64_inc(&a->messages);
	if (op == OP_DEC && req->cryptlen < tag) {
		atomic64_inc(&a->errors);
		return -EINVAL;
	}
	if (too_many_sg(req->src, in) || too_many_sg(req->dst, out)) {
		atomic64_inc(&a->errors);
		return -ENOMEM;
	}
	return submit(a, &req->base, aead_request_ctx(req), req, op,
		      req->cryptlen);
}

static int ae_encrypt(struct aead_request *req)
{
	return ae_crypt(req, OP_ENC);
}

static int ae_decrypt(struct aead_request *req)
{
	return ae_crypt(req, OP_DEC);
}

/* ahash: the state lives in the software request inside ours. */

static int ah_init_tfm(struct crypto_tfm *tfm)
{
	struct crypto_ahash **fb = crypto_tfm_ctx(tfm);
	struct ccsim_alg *a = tfm_alg(tfm);

	*fb = crypto_alloc_ahash(a->name, 0, CCSIM_MASK);
	if (IS_ERR(*fb))
		return PTR_ERR(*fb);
	crypto_ahash_set_reqsize(__crypto_ahash_cast(tfm),
				 rctx_size(sizeof(struct ahash_request) +
					   crypto_ahash_reqsize(*fb)));
	return 0;
}

static void ah_exit_tfm(struct crypto_tfm *tfm)
{
	crypto_free_ahash(*(struct crypto_ahash **)crypto_tfm_ctx(tfm));
}

static struct ahash_request *ah_sub(struct ahash_request *req)
{
	struct crypto_ahash *tfm = crypto_ahash_reqtfm(req);
	struct ahash_request *sub = sub_req(ahash_request_ctx(req));

	ahash_request_set_tfm(sub, *(struct crypto_ahash **)crypto_ahash_ctx(tfm));
	ahash_request_set_callback(sub, 0, NULL, NULL);
	return sub;
}

static int ah_setkey(struct crypto_ahash *tfm, const u8 *key, unsigned int len)
{
	struct crypto_ahash *fb = *(struct crypto_ahash **)crypto_ahash_ctx(tfm);

	crypto_ahash_clear_flags(fb, CRYPTO_TFM_REQ_MASK);
	crypto_ahash_set_flags(fb, crypto_ahash_get_flags(tfm) &
			       CRYPTO_TFM_REQ_MASK);
	return crypto_ahash_setkey(fb, key, len);
}

/* Like ccree, init, export and import need no hardware: synchronous. */
static int ah_init(struct ahash_request *req)
{
	return crypto_ahash_init(ah_sub(req));
}

static int ah_export(struct ahash_request *req, void *out)
{
	return crypto_ahash_export(ah_sub(req), out);
}

static int ah_import(struct ahash_request *req, const void *in)
{
	return crypto_ahash_import(ah_sub(req), in);
}

static int ah_op(struct ahash_request *req, u8 op)
{
	struct crypto_ahash *tfm = crypto_ahash_reqtfm(req);
	struct ccsim_alg *a = tfm_alg(crypto_ahash_tfm(tfm));
	unsigned int len = op == OP_FINAL ? 0 : req->nbytes;

	atomic64_inc(&a->requests);
	if (op != OP_UPDATE)
		atomic64_inc(&a->messages);
	else if (!len)
		return 0;
	if (too_many_sg(req->src, len)) {
		atomic64_inc(&a->errors);
		return -ENOMEM;
	}
	if (op == OP_DIGEST)
		ah_sub(req);	/* digest is init + finup */
	return submit(a, &req->base, ahash_request_ctx(req), req, op, len);
}

static int ah_update(struct ahash_request *req)
{
	return ah_op(req, OP_UPDATE);
}

static int ah_final(struct ahash_request *req)
{
	return ah_op(req, OP_FINAL);
}

static int ah_finup(struct ahash_request *req)
{
	return ah_op(req, OP_FINUP);
}

static int ah_digest(struct ahash_request *req)
{
	return ah_op(req, OP_DIGEST);
}

/* Registration: sizes are the software implementation's. */

static void set_base(struct ccsim_alg *a, struct crypto_alg *base,
		     struct crypto_tfm *fb)
{
	strscpy(base->cra_name, a->name, sizeof(base->cra_name));
	strscpy(base->cra_driver_name, a->driver, sizeof(base->cra_driver_name));
	base->cra_priority = priority;
	base->cra_flags = CRYPTO_ALG_ASYNC | CRYPTO_ALG_KERN_DRIVER_ONLY;
	base->cra_blocksize = a->blocksize ?: crypto_tfm_alg_blocksize(fb);
	base->cra_module = THIS_MODULE;
}

static int reg_skcipher(struct ccsim_alg *a)
{
	struct crypto_skcipher *fb = crypto_alloc_skcipher(a->name, 0, CCSIM_MASK);
	struct skcipher_alg *alg = &a->u.sk;

	if (IS_ERR(fb))
		return PTR_ERR(fb);
	set_base(a, &alg->base, crypto_skcipher_tfm(fb));
	alg->base.cra_ctxsize = sizeof(fb);
	alg->min_keysize = crypto_skcipher_min_keysize(fb);
	alg->max_keysize = crypto_skcipher_max_keysize(fb);
	alg->ivsize = crypto_skcipher_ivsize(fb);
	alg->chunksize = crypto_skcipher_chunksize(fb);
	crypto_free_skcipher(fb);
	alg->init = sk_init;
	alg->exit = sk_exit;
	alg->setkey = sk_setkey;
	alg->encrypt = sk_encrypt;
	alg->decrypt = sk_decrypt;
	return crypto_register_skcipher(alg);
}

static int reg_aead(struct ccsim_alg *a)
{
	struct crypto_aead *fb = crypto_alloc_aead(a->name, 0, CCSIM_MASK);
	struct aead_alg *alg = &a->u.ae;

	if (IS_ERR(fb))
		return PTR_ERR(fb);
	set_base(a, &alg->base, crypto_aead_tfm(fb));
	alg->base.cra_ctxsize = sizeof(fb);
	alg->ivsize = crypto_aead_ivsize(fb);
	alg->maxauthsize = crypto_aead_maxauthsize(fb);
	alg->chunksize = crypto_aead_alg(fb)->chunksize;
	crypto_free_aead(fb);
	alg->init = ae_init;
	alg->exit = ae_exit;
	alg->setkey = ae_setkey;
	alg->setauthsize = ae_setauthsize;
	alg->encrypt = ae_encrypt;
	alg->decrypt = ae_decrypt;
	return crypto_register_aead(alg);
}

static int reg_ahash(struct ccsim_alg *a)
{
	struct crypto_ahash *fb = crypto_alloc_ahash(a->name, 0, CCSIM_MASK);
	struct ahash_alg *alg = &a->u.ah;
	bool keyed;

	if (IS_ERR(fb))
		return PTR_ERR(fb);
	keyed = crypto_ahash_get_flags(fb) & CRYPTO_TFM_NEED_KEY;
	set_base(a, &alg->halg.base, crypto_ahash_tfm(fb));
	alg->halg.base.cra_ctxsize = sizeof(fb);
	alg->halg.base.cra_init = ah_init_tfm;
	alg->halg.base.cra_exit = ah_exit_tfm;
	alg->halg.digestsize = crypto_ahash_digestsize(fb);
	alg->halg.statesize = crypto_ahash_statesize(fb);
	crypto_free_ahash(fb);
	alg->init = ah_init;
	alg->update = ah_update;
	alg->final = ah_final;
	alg->finup = ah_finup;
	alg->digest = ah_digest;
	alg->export = ah_export;
	alg->import = ah_import;
	alg->setkey = keyed ? ah_setkey : NULL;
	return crypto_register_ahash(alg);
}

/*
 * Test-only SM4 (GB/T 32907) and SM3 (GB/T 32905) software, which Debian's
 * kernels lack, registered for the 713 and 703 under a low priority; the
 * kernel self-tests them, and the suite compares them with OpenSSL's.
 */
static u8 sm4_sbox[256];

/* In GF(2^8) modulo x^8 + x^7 + x^6 + x^5 + x^4 + x^2 + 1. */
static u8 gf_mul(u8 a, u8 b)
{
	u8 r = 0;

	for (; b; b >>= 1) {
		if (b & 1)
			r ^= a;
		a = (a << 1) ^ (a & 0x80 ? 0xf5 : 0);
	}
	return r;
}

static u8 sm4_affine(u8 x)
{
	return x ^ rol8(x, 1) ^ rol8(x, 3) ^ rol8(x, 6) ^ rol8(x, 7) ^ 0xd3;
}

/* The S-box from its definition: affine, inverse, affine. */
static void sm4_make_sbox(void)
{
	int x, y;

	for (x = 0; x < 256; x++) {
		u8 a = sm4_affine(x), inv = 0;

		for (y = 1; y < 256 && !inv; y++)
			if (gf_mul(a, y) == 1)
				inv = y;
		sm4_sbox[x] = sm4_affine(inv);
	}
}

static u32 sm4_tau(u32 a)
{
	return sm4_sbox[a >> 24] << 24 | sm4_sbox[(a >> 16) & 0xff] << 16 |
	       sm4_sbox[(a >> 8) & 0xff] << 8 | sm4_sbox[a & 0xff];
}

static int sm4_setkey(struct crypto_tfm *tfm, const u8 *key, unsigned int len)
{
	static const u32 fk[4] = { 0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc };
	u32 *rk = crypto_tfm_ctx(tfm), k[4], ck, t;
	int i, j;

	if (len != 16)
		return -EINVAL;
	for (i = 0; i < 4; i++)
		k[i] = get_unaligned_be32(key + 4 * i) ^ fk[i];
	for (i = 0; i < 32; i++) {
		for (ck = 0, j = 0; j < 4; j++)
			ck = ck << 8 | (((4 * i + j) * 7) & 0xff);
		t = sm4_tau(k[1] ^ k[2] ^ k[3] ^ ck);
		rk[i] = k[0] ^ t ^ rol32(t, 13) ^ rol32(t, 23);
		k[0] = k[1], k[1] = k[2], k[2] = k[3], k[3] = rk[i];
	}
	return 0;
}

static void sm4_crypt(const u32 *rk, u8 *out, const u8 *in, bool dec)
{
	u32 x[4], t;
	int i;

	for (i = 0; i < 4; i++)
		x[i] = get_unaligned_be32(in + 4 * i);
	for (i = 0; i < 32; i++) {
		t = sm4_tau(x[1] ^ x[2] ^ x[3] ^ rk[dec ? 31 - i : i]);
		t = x[0] ^ t ^ rol32(t, 2) ^ rol32(t, 10) ^ rol32(t, 18) ^ rol32(t, 24);
		x[0] = x[1], x[1] = x[2], x[2] = x[3], x[3] = t;
	}
	for (i = 0; i < 4; i++)
		put_unaligned_be32(x[3 - i], out + 4 * i);
}

static void sm4_encrypt(struct crypto_tfm *tfm, u8 *out, const u8 *in)
{
	sm4_crypt(crypto_tfm_ctx(tfm), out, in, false);
}

static void sm4_decrypt(struct crypto_tfm *tfm, u8 *out, const u8 *in)
{
	sm4_crypt(crypto_tfm_ctx(tfm), out, in, true);
}

struct sm3_state {
	u32 v[8];
	u64 count;
	u8 buf[64];
};

static u32 sm3_p0(u32 x)
{
	return x ^ rol32(x, 9) ^ rol32(x, 17);
}

static u32 sm3_p1(u32 x)
{
	return x ^ rol32(x, 15) ^ rol32(x, 23);
}

static void sm3_block(u32 *v, const u8 *p)
{
	u32 w[68], a = v[0], b = v[1], c = v[2], d = v[3];
	u32 e = v[4], f = v[5], g = v[6], h = v[7], ss1, ss2, tt1, tt2;
	int j;

	for (j = 0; j < 16; j++)
		w[j] = get_unaligned_be32(p + 4 * j);
	for (; j < 68; j++)
		w[j] = sm3_p1(w[j - 16] ^ w[j - 9] ^ rol32(w[j - 3], 15)) ^
		       rol32(w[j - 13], 7) ^ w[j - 6];
	for (j = 0; j < 64; j++) {
		ss1 = rol32(rol32(a, 12) + e +
			    rol32(j < 16 ? 0x79cc4519 : 0x7a879d8a, j % 32), 7);
		ss2 = ss1 ^ rol32(a, 12);
		tt1 = (j < 16 ? a ^ b ^ c : (a & b) | (a & c) | (b & c)) +
		      d + ss2 + (w[j] ^ w[j + 4]);
		tt2 = (j < 16 ? e ^ f ^ g : (e & f) | (~e & g)) + h + ss1 + w[j];
		d = c, c = rol32(b, 9), b = a, a = tt1;
		h = g, g = rol32(f, 19), f = e, e = sm3_p0(tt2);
	}
	v[0] ^= a, v[1] ^= b, v[2] ^= c, v[3] ^= d;
	v[4] ^= e, v[5] ^= f, v[6] ^= g, v[7] ^= h;
}

static int sm3_init(struct shash_desc *desc)
{
	static const u32 iv[8] = {
		0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
		0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e,
	};
	struct sm3_state *s = shash_desc_ctx(desc);

	memcpy(s->v, iv, sizeof(iv));
	s->count = 0;
	return 0;
}

static int sm3_update(struct shash_desc *desc, const u8 *p, unsigned int len)
{
	struct sm3_state *s = shash_desc_ctx(desc);

	while (len) {
		unsigned int n = min(len, 64 - (unsigned int)(s->count % 64));

		memcpy(s->buf + s->count % 64, p, n);
		s->count += n, p += n, len -= n;
		if (s->count % 64 == 0)
			sm3_block(s->v, s->buf);
	}
	return 0;
}

static int sm3_final(struct shash_desc *desc, u8 *out)
{
	struct sm3_state *s = shash_desc_ctx(desc);
	__be64 bits = cpu_to_be64(s->count * 8);
	int i;

	sm3_update(desc, "\x80", 1);
	while (s->count % 64 != 56)
		sm3_update(desc, "", 1);
	sm3_update(desc, (u8 *)&bits, 8);
	for (i = 0; i < 8; i++)
		put_unaligned_be32(s->v[i], out + 4 * i);
	return 0;
}

static struct crypto_alg sm4_soft = {
	.cra_name = "sm4",
	.cra_driver_name = "sm4-ccsim-soft",
	.cra_priority = 100,
	.cra_flags = CRYPTO_ALG_TYPE_CIPHER,
	.cra_blocksize = 16,
	.cra_ctxsize = 32 * sizeof(u32),
	.cra_module = THIS_MODULE,
	.cra_u.cipher = {
		.cia_min_keysize = 16,
		.cia_max_keysize = 16,
		.cia_setkey = sm4_setkey,
		.cia_encrypt = sm4_encrypt,
		.cia_decrypt = sm4_decrypt,
	},
};

static struct shash_alg sm3_soft = {
	.digestsize = 32,
	.init = sm3_init,
	.update = sm3_update,
	.final = sm3_final,
	.descsize = sizeof(struct sm3_state),
	.base = {
		.cra_name = "sm3",
		.cra_driver_name = "sm3-ccsim-soft",
		.cra_priority = 100,
		.cra_blocksize = 64,
		.cra_module = THIS_MODULE,
	},
};

static bool soft;	/* sm4_soft and sm3_soft registered */

static int reg_soft(void)
{
	int err;

	sm4_make_sbox();
	err = crypto_register_alg(&sm4_soft);
	if (err)
		return err;
	err = crypto_register_shash(&sm3_soft);
	if (err)
		crypto_unregister_alg(&sm4_soft);
	soft = !err;
	return err;
}

static int stats_show(struct seq_file *m, void *v)
{
	struct ccsim_alg *a = m->private;

	seq_printf(m, "requests %lld\nmessages %lld\nbytes %lld\nerrors %lld\n"
		   "in_flight %d\nmax_in_flight %d\n",
		   atomic64_read(&a->requests), atomic64_read(&a->messages),
		   atomic64_read(&a->bytes),
		   atomic64_read(&a->errors), atomic_read(&a->in_flight),
		   atomic_read(&a->max_in_flight));
	return 0;
}

static int stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, stats_show, inode->i_private);
}

/* Writing anything resets the counters. */
static ssize_t stats_write(struct file *file, const char __user *buf,
			   size_t len, loff_t *pos)
{
	struct ccsim_alg *a = ((struct seq_file *)file->private_data)->private;

	atomic64_set(&a->requests, 0);
	atomic64_set(&a->messages, 0);
	atomic64_set(&a->bytes, 0);
	atomic64_set(&a->errors, 0);
	atomic_set(&a->max_in_flight, atomic_read(&a->in_flight));
	return len;
}

static const struct file_operations stats_fops = {
	.owner = THIS_MODULE,
	.open = stats_open,
	.read = seq_read,
	.write = stats_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static void unregister(void)
{
	struct ccsim_alg *a;


	for (a = algs; a < algs + ARRAY_SIZE(algs); a++) {
		if (!a->registered)
			continue;
		if (a->type == SKCIPHER)
			crypto_unregister_skcipher(&a->u.sk);
		else if (a->type == AEAD)
			crypto_unregister_aead(&a->u.ae);
		else
			crypto_unregister_ahash(&a->u.ah);
		a->registered = false;
	}
	if (soft) {
		crypto_unregister_alg(&sm4_soft);
		crypto_unregister_shash(&sm3_soft);
		soft = false;
	}
}

static int __init ccsim_init(void)
{
	struct ccsim_alg *a;
	int i, err = 0;

	for (i = 0; i < ARRAY_SIZE(revs) && strcmp(rev, revs[i].name); i++)
		;
	if (i == ARRAY_SIZE(revs)) {
		pr_err("ccsim: unknown rev %s\n", rev);
		return -EINVAL;
	}
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)	/* 7.x warns without one of these */
	wq = alloc_workqueue("ccsim", WQ_HIGHPRI | WQ_PERCPU, 0);
#else
	wq = alloc_workqueue("ccsim", WQ_HIGHPRI, 0);
#endif
	if (!wq)
		return -ENOMEM;
	dbg = debugfs_create_dir("ccsim", NULL);

	for (a = algs; a < algs + ARRAY_SIZE(algs); a++) {
		if (a->min_rev > revs[i].rev || !(a->std & revs[i].std))
			continue;
		if (a->std == OSCCA && !soft)
			err = reg_soft();
		if (!err)
			err = a->type == SKCIPHER ? reg_skcipher(a) :
			      a->type == AEAD ? reg_aead(a) : reg_ahash(a);
		if (err) {
			pr_err("ccsim: %s: %d\n", a->driver, err);
			break;
		}
		a->registered = true;
		debugfs_create_file(a->driver, 0644, dbg, a, &stats_fops);
	}
	if (err) {
		unregister();
		debugfs_remove_recursive(dbg);
		destroy_workqueue(wq);
		return err;
	}
	armed = true;
	pr_info("ccsim: CryptoCell %s simulated\n", rev);
	return 0;
}

static void __exit ccsim_exit(void)
{
	unregister();
	debugfs_remove_recursive(dbg);
	destroy_workqueue(wq);
}

module_init(ccsim_init);
module_exit(ccsim_exit);
MODULE_DESCRIPTION("Simulated CryptoCell (ccree) for tests: software behind ccree's names");
MODULE_LICENSE("GPL");
