/* SPDX-License-Identifier: MIT */
/*
 * Mutual LOGIN authentication with a shared secret (docs/protocol.md,
 * "Authentication"), in the spirit of DH-HMAC-CHAP's bidirectional mode
 * without the DH part:
 *
 *   target -> initiator   Nt                      (LOGIN_RSP AUTH_REQUIRED)
 *   initiator -> target   Ni, MAC_I               (second LOGIN)
 *   target -> initiator   MAC_T                   (LOGIN_RSP OK)
 *
 *   MAC_I = HMAC-SHA-256(secret, "RBLK-INI" || Nt || Ni || volume || host)
 *   MAC_T = HMAC-SHA-256(secret, "RBLK-TGT" || Ni || Nt || volume || host)
 *
 * volume and host are the raw 64-byte wire fields of the LOGIN, every byte
 * of them (NUL padding included), so both sides hash exactly what crossed
 * the wire.  The labels keep the two MACs apart: a proof one side computes
 * can never be replayed as the other side's (no reflection across the
 * parallel queues of one attach).  Used by the target (nonce, verify,
 * proof) and the client library (compute, check the proof).
 */
#ifndef RBLK_PROTO_AUTH_H
#define RBLK_PROTO_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "rblk_proto.h"

/* 16 bytes at least: a passive observer of one LOGIN can test guesses
 * offline against (Nt, Ni, MAC_I), so a short or human secret falls to a
 * dictionary; `rblkctl volume secret --generate` writes 32 random bytes. */
#define RBLK_SECRET_MIN		16
#define RBLK_SECRET_MAX		1024

struct rblk_secret {
	size_t  len;
	uint8_t key[RBLK_SECRET_MAX];
};

/* Fills nonce with RBLK_NONCE_LEN bytes from the CSPRNG; 0 or -EIO. */
int rblk_auth_nonce(uint8_t nonce[RBLK_NONCE_LEN]);

enum rblk_auth_role {
	RBLK_AUTH_INITIATOR,	/* MAC_I: the initiator proves the secret */
	RBLK_AUTH_TARGET,	/* MAC_T: the target proves the secret */
};

/*
 * Computes MAC_I or MAC_T (above) over the two nonces and the raw 64-byte
 * volume and host fields.  Returns 0, -EINVAL for an unusable secret, -EIO
 * if libcrypto fails.
 */
int rblk_auth_mac(const struct rblk_secret *s, enum rblk_auth_role role,
		  const uint8_t tgt_nonce[RBLK_NONCE_LEN],
		  const uint8_t ini_nonce[RBLK_NONCE_LEN],
		  const char volume[RBLK_NAME_MAX], const char host[RBLK_NAME_MAX],
		  uint8_t mac[RBLK_MAC_LEN]);

/*
 * Recomputes the MAC and compares it with got in constant time.  Returns 0
 * when it matches, -EACCES when it does not (or on any internal failure:
 * a check that cannot be made is a refusal).
 */
int rblk_auth_verify(const struct rblk_secret *s, enum rblk_auth_role role,
		     const uint8_t tgt_nonce[RBLK_NONCE_LEN],
		     const uint8_t ini_nonce[RBLK_NONCE_LEN],
		     const char volume[RBLK_NAME_MAX],
		     const char host[RBLK_NAME_MAX],
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

#define RBLK_SECRET_GEN_LEN	32	/* bytes --generate writes */

/*
 * Creates path (which must not exist: a secret is never overwritten) with
 * mode 0600 and RBLK_SECRET_GEN_LEN bytes from getrandom(2), fsynced.  The
 * last byte is never '\n' or '\r' (rblk_auth_load_secret would strip it).
 * Returns 0, or -errno with a one-line reason naming the file in err; on
 * failure no file is left behind.
 */
int rblk_auth_generate_secret(const char *path, char *err, size_t errlen);

/* Overwrites the key bytes (so a freed secret does not linger). */
void rblk_auth_clear_secret(struct rblk_secret *s);

#endif /* RBLK_PROTO_AUTH_H */
