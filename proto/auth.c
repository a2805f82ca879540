// SPDX-License-Identifier: MIT
/* LOGIN challenge/response with HMAC-SHA-256: see auth.h. */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

/* The exact message: nonce || volume field || host field (wire bytes). */
static int build_msg(uint8_t *msg, const uint8_t nonce[RBLK_NONCE_LEN],
		     const char *volume, const char *host)
{
	size_t vl = strnlen(volume, RBLK_NAME_MAX);
	size_t hl = strnlen(host, RBLK_NAME_MAX);

	if (vl >= RBLK_NAME_MAX || hl >= RBLK_NAME_MAX)
		return -EINVAL;
	memset(msg, 0, RBLK_NONCE_LEN + 2 * RBLK_NAME_MAX);
	memcpy(msg, nonce, RBLK_NONCE_LEN);
	memcpy(msg + RBLK_NONCE_LEN, volume, vl);
	memcpy(msg + RBLK_NONCE_LEN + RBLK_NAME_MAX, host, hl);
	return 0;
}

int rblk_auth_mac(const struct rblk_secret *s,
		  const uint8_t nonce[RBLK_NONCE_LEN],
		  const char *volume, const char *host,
		  uint8_t mac[RBLK_MAC_LEN])
{
	uint8_t msg[RBLK_NONCE_LEN + 2 * RBLK_NAME_MAX];
	unsigned int len = RBLK_MAC_LEN;
	int ret;

	if (!s->len || s->len > RBLK_SECRET_MAX)
		return -EINVAL;
	ret = build_msg(msg, nonce, volume, host);
	if (ret)
		return ret;
	if (!HMAC(EVP_sha256(), s->key, (int)s->len, msg, sizeof(msg), mac, &len) ||
	    len != RBLK_MAC_LEN)
		return -EIO;
	return 0;
}

int rblk_auth_verify(const struct rblk_secret *s,
		     const uint8_t nonce[RBLK_NONCE_LEN],
		     const char *volume, const char *host,
		     const uint8_t got[RBLK_MAC_LEN])
{
	uint8_t want[RBLK_MAC_LEN];
	int ret;

	if (rblk_auth_mac(s, nonce, volume, host, want))
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
			 "secret file %s: secret must be %d..%d bytes (try: openssl rand -hex 32)",
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

void rblk_auth_clear_secret(struct rblk_secret *s)
{
	OPENSSL_cleanse(s, sizeof(*s));
}
