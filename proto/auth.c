// SPDX-License-Identifier: MIT
/* LOGIN challenge/response with HMAC-SHA-256: see auth.h. */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

int rblk_auth_nonce(uint8_t nonce[RBLK_NONCE_LEN])
{
	return RAND_bytes(nonce, RBLK_NONCE_LEN) == 1 ? 0 : -EIO;
}

#define LABEL_LEN	8
#define MSG_LEN		(LABEL_LEN + 2 * RBLK_NONCE_LEN + 2 * RBLK_NAME_MAX)

/* label || first nonce || second nonce || volume field || host field.
 * The fields go in raw: padding bytes are part of what is proven. */
static void build_msg(uint8_t *msg, enum rblk_auth_role role,
		      const uint8_t tgt_nonce[RBLK_NONCE_LEN],
		      const uint8_t ini_nonce[RBLK_NONCE_LEN],
		      const char volume[RBLK_NAME_MAX],
		      const char host[RBLK_NAME_MAX])
{
	const bool ini = role == RBLK_AUTH_INITIATOR;
	uint8_t *p = msg;

	memcpy(p, ini ? "RBLK-INI" : "RBLK-TGT", LABEL_LEN);
	p += LABEL_LEN;
	memcpy(p, ini ? tgt_nonce : ini_nonce, RBLK_NONCE_LEN);
	p += RBLK_NONCE_LEN;
	memcpy(p, ini ? ini_nonce : tgt_nonce, RBLK_NONCE_LEN);
	p += RBLK_NONCE_LEN;
	memcpy(p, volume, RBLK_NAME_MAX);
	p += RBLK_NAME_MAX;
	memcpy(p, host, RBLK_NAME_MAX);
}

int rblk_auth_mac(const struct rblk_secret *s, enum rblk_auth_role role,
		  const uint8_t tgt_nonce[RBLK_NONCE_LEN],
		  const uint8_t ini_nonce[RBLK_NONCE_LEN],
		  const char volume[RBLK_NAME_MAX], const char host[RBLK_NAME_MAX],
		  uint8_t mac[RBLK_MAC_LEN])
{
	uint8_t msg[MSG_LEN];
	unsigned int len = RBLK_MAC_LEN;

	if (s->len < RBLK_SECRET_MIN || s->len > RBLK_SECRET_MAX)
		return -EINVAL;
	build_msg(msg, role, tgt_nonce, ini_nonce, volume, host);
	if (!HMAC(EVP_sha256(), s->key, (int)s->len, msg, sizeof(msg), mac, &len) ||
	    len != RBLK_MAC_LEN)
		return -EIO;
	return 0;
}

int rblk_auth_verify(const struct rblk_secret *s, enum rblk_auth_role role,
		     const uint8_t tgt_nonce[RBLK_NONCE_LEN],
		     const uint8_t ini_nonce[RBLK_NONCE_LEN],
		     const char volume[RBLK_NAME_MAX],
		     const char host[RBLK_NAME_MAX],
		     const uint8_t got[RBLK_MAC_LEN])
{
	uint8_t want[RBLK_MAC_LEN];
	int ret;

	if (rblk_auth_mac(s, role, tgt_nonce, ini_nonce, volume, host, want))
		return -EACCES;
	/* Constant time: a byte-wise early exit would leak how much matched. */
	ret = CRYPTO_memcmp(want, got, RBLK_MAC_LEN) ? -EACCES : 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ret;
}

int rblk_auth_load_secret(const char *path, struct rblk_secret *s,
			  char *err, size_t errlen)
{
	uint8_t buf[RBLK_SECRET_MAX + 2];
	struct stat st;
	size_t got = 0;
	int fd, ret;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "secret file %s: %s", path,
			 ret == -ELOOP ? "is a symbolic link" : strerror(-ret));
		return ret;
	}
	/* fstat on the open fd: no window between the check and the read. */
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "secret file %s: %s", path, strerror(-ret));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "secret file %s: not a regular file", path);
		ret = -EINVAL;
		goto out_close;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen,
			 "secret file %s: mode %04o lets others read it; must be 0600 (chmod 600)",
			 path, (unsigned)(st.st_mode & 07777));
		ret = -EPERM;
		goto out_close;
	}
	while (got < sizeof(buf)) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "secret file %s: read: %s", path,
				 strerror(-ret));
			goto out_wipe;
		}
		if (n == 0)
			break;
		got += n;
	}
	/* `echo secret > f` and editors add a newline; it is not part of it. */
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
		got--;
	if (got < RBLK_SECRET_MIN || got > RBLK_SECRET_MAX) {
		snprintf(err, errlen,
			 "secret file %s: secret must be %d..%d bytes (make one with: rblkctl volume secret NAME --generate FILE)",
			 path, RBLK_SECRET_MIN, RBLK_SECRET_MAX);
		ret = -EINVAL;
		goto out_wipe;
	}
	memcpy(s->key, buf, got);
	s->len = got;
	ret = 0;
out_wipe:
	OPENSSL_cleanse(buf, sizeof(buf));
out_close:
	close(fd);
	return ret;
}

/* getrandom until len bytes came (it may return fewer, or EINTR). */
static int fill_random(uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

int rblk_auth_generate_secret(const char *path, char *err, size_t errlen)
{
	uint8_t key[RBLK_SECRET_GEN_LEN];
	size_t off = 0;
	int fd, ret;

	ret = fill_random(key, sizeof(key));
	/* Redraw a trailing newline byte: loading would strip it. */
	while (!ret && (key[sizeof(key) - 1] == '\n' || key[sizeof(key) - 1] == '\r'))
		ret = fill_random(key + sizeof(key) - 1, 1);
	if (ret) {
		snprintf(err, errlen, "getrandom: %s", strerror(-ret));
		goto out_wipe;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "secret file %s: %s", path,
			 ret == -EEXIST ? "exists (a secret is never overwritten: remove it or pick another name)"
					: strerror(-ret));
		goto out_wipe;
	}
	/* The umask may have left less than 0600, never more; make it exact. */
	if (fchmod(fd, 0600) < 0) {
		ret = -errno;
		goto out_unlink;
	}
	while (off < sizeof(key)) {
		ssize_t n = write(fd, key + off, sizeof(key) - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out_unlink;
		}
		off += (size_t)n;
	}
	if (fsync(fd) < 0) {
		ret = -errno;
		goto out_unlink;
	}
	close(fd);
	ret = 0;
	goto out_wipe;

out_unlink:
	snprintf(err, errlen, "secret file %s: %s", path, strerror(-ret));
	close(fd);
	unlink(path);
out_wipe:
	OPENSSL_cleanse(key, sizeof(key));
	return ret;
}

void rblk_auth_clear_secret(struct rblk_secret *s)
{
	OPENSSL_cleanse(s, sizeof(*s));
}
