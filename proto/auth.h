/* SPDX-License-Identifier: MIT */
/*
 * LOGIN challenge/response (docs/protocol.md, "Authentication"):
 *   auth_mac = HMAC-SHA-256(secret, nonce || volume-field(64) || host-field(64))
 * The volume and host fields are the 64-byte NUL-padded wire fields, so both
 * sides hash exactly the bytes that crossed the wire.  Used by the target
 * (nonce, verify) and the client library (compute).
 */
#ifndef RBLK_PROTO_AUTH_H
#define RBLK_PROTO_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "rblk_proto.h"

#define RBLK_SECRET_MIN		16	/* bytes; `openssl rand -hex 32` gives 64 */
#define RBLK_SECRET_MAX		1024

struct rblk_secret {
	size_t  len;
	uint8_t key[RBLK_SECRET_MAX];
};

/* Fills nonce with RBLK_NONCE_LEN bytes from the CSPRNG; 0 or -EIO. */
int rblk_auth_nonce(uint8_t nonce[RBLK_NONCE_LEN]);

/*
 * Computes the MAC over nonce, volume and host (C strings of < 64 bytes,
 * padded with NULs to 64 as on the wire).  Returns 0, -EINVAL for a name
 * that does not fit, -EIO if libcrypto fails.
 */
int rblk_auth_mac(const struct rblk_secret *s,
		  const uint8_t nonce[RBLK_NONCE_LEN],
		  const char *volume, const char *host,
		  uint8_t mac[RBLK_MAC_LEN]);

/*
 * Recomputes the MAC and compares it with got in constant time.  Returns 0
 * when it matches, -EACCES when it does not (or on any internal failure:
 * a check that cannot be made is a refusal).
 */
int rblk_auth_verify(const struct rblk_secret *s,
		     const uint8_t nonce[RBLK_NONCE_LEN],
		     const char *volume, const char *host,
		     const uint8_t got[RBLK_MAC_LEN]);

/*
 * Loads a secret file: a regular file, not readable or writable by group
 * or others (mode 0600 or 0400), RBLK_SECRET_MIN..RBLK_SECRET_MAX bytes
 * after trailing newlines/CR are dropped.  Returns 0, or -errno with a
 * one-line reason naming the file in err: -EPERM for a bad mode, -EINVAL
 * for a bad length or a non-regular file, others from open/read.
 */
int rblk_auth_load_secret(const char *path, struct rblk_secret *s,
			  char *err, size_t errlen);

/* Overwrites the key bytes (so a freed secret does not linger). */
void rblk_auth_clear_secret(struct rblk_secret *s);

#endif /* RBLK_PROTO_AUTH_H */
