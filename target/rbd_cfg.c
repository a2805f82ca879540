// SPDX-License-Identifier: MIT
/* The rbd keys of a [volume] section: parse, check, print (rbd_cfg.h). */
#include "rbd_cfg.h"
#include "helpers.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K_POOL, K_IMAGE, K_CONF, K_CLIENT, K_KEYRING, K_CREATED, K_HA, K_N };

static const char *const keys[K_N] = {
	[K_POOL] = "rbd_pool", [K_IMAGE] = "rbd_image",
	[K_CONF] = "ceph_conf", [K_CLIENT] = "ceph_client_id",
	[K_KEYRING] = "ceph_keyring", [K_CREATED] = "rbd_created",
	[K_HA] = "rbd_ha",
};

static int key_index(const char *key)
{
	for (int i = 0; i < K_N; i++)
		if (!strcmp(keys[i], key))
			return i;
	return -1;
}

bool tgt_rbd_cfg_is_key(const char *key)
{
	return key_index(key) >= 0;
}

/*
 * Pool and image names: what Ceph takes, less what would break "POOL/IMAGE"
 * (a '/'), snapshot syntax ('@'), and the config file's one line per key
 * (control characters, comment starters, blanks at either end).
 */
static int check_name(const char *what, const char *v, char *why, size_t whylen)
{
	size_t n = strlen(v);

	if (!n || n > TGT_RBD_NAME_MAX) {
		snprintf(why, whylen, "%s must be 1..%d bytes", what, TGT_RBD_NAME_MAX);
		return -EINVAL;
	}
	for (const char *c = v; *c; c++) {
		if ((unsigned char)*c < 0x21 || *c == 0x7f || strchr("/@#;", *c)) {
			snprintf(why, whylen, "%s '%s' may not contain blanks, control characters or any of / @ # ;",
				 what, v);
			return -EINVAL;
		}
	}
	return 0;
}

/* cephx user ids are letters, digits and . _ - (no "client." prefix). */
static int check_client(const char *v, char *why, size_t whylen)
{
	size_t n = strlen(v);

	if (!strncmp(v, "client.", 7)) {
		snprintf(why, whylen, "ceph_client_id '%s': give the id without 'client.' (like 'rblk')", v);
		return -EINVAL;
	}
	if (!n || n > 64) {
		snprintf(why, whylen, "ceph_client_id must be 1..64 bytes");
		return -EINVAL;
	}
	for (const char *c = v; *c; c++) {
		if (!isalnum((unsigned char)*c) && !strchr("._-", *c)) {
			snprintf(why, whylen, "ceph_client_id '%s' may contain only A-Z a-z 0-9 . _ -", v);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_path(const char *key, const char *v, char *why, size_t whylen)
{
	if (*v != '/' || strlen(v) >= PATH_MAX) {
		snprintf(why, whylen, "%s '%s' is not an absolute path", key, v);
		return -EINVAL;
	}
	for (const char *c = v; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '#' || *c == ';') {
			snprintf(why, whylen, "%s may not contain control characters, '#' or ';'", key);
			return -EINVAL;
		}
	}
	return 0;
}

static int set_str(char **slot, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*slot);
	*slot = s;
	return 0;
}

int tgt_rbd_cfg_set(struct tgt_rbd_cfg *c, const char *key, const char *value,
		    char *why, size_t whylen)
{
	int k = key_index(key), ret;

	if (k < 0) {
		snprintf(why, whylen, "unknown field '%s'", key);
		return -EINVAL;
	}
	if (c->seen & (1u << k)) {
		snprintf(why, whylen, "field '%s' given twice in this section", key);
		return -EINVAL;
	}
	c->seen |= 1u << k;
	switch (k) {
	case K_POOL:
	case K_IMAGE:
		ret = check_name(k == K_POOL ? "rbd_pool" : "rbd_image", value, why, whylen);
		return ret ? ret : set_str(k == K_POOL ? &c->pool : &c->image, value);
	case K_CONF:
	case K_KEYRING:
		ret = check_path(key, value, why, whylen);
		return ret ? ret : set_str(k == K_CONF ? &c->conf : &c->keyring, value);
	case K_CLIENT:
		ret = check_client(value, why, whylen);
		return ret ? ret : set_str(&c->client_id, value);
	case K_CREATED:
	case K_HA: {
		bool *b = k == K_HA ? &c->ha : &c->created;

		if (!strcasecmp(value, "yes") || !strcmp(value, "1") ||
		    !strcasecmp(value, "true") || !strcasecmp(value, "on"))
			*b = true;
		else if (!strcasecmp(value, "no") || !strcmp(value, "0") ||
			 !strcasecmp(value, "false") || !strcasecmp(value, "off"))
			*b = false;
		else {
			snprintf(why, whylen, "field '%s': '%s' is not yes|no", key, value);
			return -EINVAL;
		}
		return 0;
	}
	}
	return 0;
}

int tgt_rbd_cfg_check(const struct tgt_rbd_cfg *c, bool is_rbd, char *why,
		      size_t whylen)
{
	if (!is_rbd) {
		for (int k = 0; k < K_N; k++) {
			if (c->seen & (1u << k)) {
				snprintf(why, whylen, "field '%s' is for backend rbd only", keys[k]);
				return -EINVAL;
			}
		}
		return 0;
	}
	if (!c->pool || !c->image) {
		snprintf(why, whylen, "backend 'rbd' needs fields 'rbd_pool' and 'rbd_image'");
		return -EINVAL;
	}
	return 0;
}

size_t tgt_rbd_cfg_format(const struct tgt_rbd_cfg *c, char *buf, size_t len)
{
	size_t n = 0;

	if (!c->pool)
		return 0;
#define OUT(...) (n += snprintf(buf && n < len ? buf + n : NULL, \
				    buf && n < len ? len - n : 0, __VA_ARGS__))
	OUT("rbd_pool = %s\nrbd_image = %s\n", c->pool, c->image);
	if (c->conf)
		OUT("ceph_conf = %s\n", c->conf);
	if (c->client_id)
		OUT("ceph_client_id = %s\n", c->client_id);
	if (c->keyring)
		OUT("ceph_keyring = %s\n", c->keyring);
	if (c->created)
		OUT("rbd_created = yes\n");
	if (c->ha)
		OUT("rbd_ha = yes\n");
#undef OUT
	return n;
}

int tgt_rbd_cfg_copy(struct tgt_rbd_cfg *dst, const struct tgt_rbd_cfg *src)
{
	char **d[] = { &dst->pool, &dst->image, &dst->conf, &dst->client_id, &dst->keyring };
	char *const s[] = { src->pool, src->image, src->conf, src->client_id, src->keyring };

	memset(dst, 0, sizeof(*dst));
	for (unsigned i = 0; i < ARRAY_SIZE(d); i++) {
		if (s[i] && !(*d[i] = strdup(s[i]))) {
			tgt_rbd_cfg_free(dst);
			return -ENOMEM;
		}
	}
	dst->created = src->created;
	dst->ha = src->ha;
	dst->seen = src->seen;
	return 0;
}

int tgt_rbd_cfg_check_files(const struct tgt_rbd_cfg *c, char *why, size_t whylen)
{
	const char *files[] = { tgt_rbd_cfg_conf(c), c->keyring };

	for (unsigned i = 0; i < 2; i++) {
		if (files[i] && access(files[i], R_OK) < 0) {
			int e = errno;

			snprintf(why, whylen, "field '%s': %s: %s",
				 i ? "ceph_keyring" : "ceph_conf", files[i], strerror(e));
			return -e;
		}
	}
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool tgt_rbd_cfg_same_image(const struct tgt_rbd_cfg *a, const struct tgt_rbd_cfg *b)
{
	return same_str(a->pool, b->pool) && same_str(a->image, b->image) &&
	       same_str(tgt_rbd_cfg_conf(a), tgt_rbd_cfg_conf(b)) &&
	       same_str(tgt_rbd_cfg_client(a), tgt_rbd_cfg_client(b)) &&
	       same_str(a->keyring, b->keyring) && a->ha == b->ha;
}

void tgt_rbd_cfg_free(struct tgt_rbd_cfg *c)
{
	free(c->pool);
	free(c->image);
	free(c->conf);
	free(c->client_id);
	free(c->keyring);
	memset(c, 0, sizeof(*c));
}

int tgt_rbd_cfg_set_spec(struct tgt_rbd_cfg *c, const char *spec, char *why,
			 size_t whylen)
{
	const char *slash = strchr(spec, '/');
	char pool[TGT_RBD_NAME_MAX + 2];
	size_t n;
	int ret;

	if (!slash || slash == spec) {
		snprintf(why, whylen, "'%s' is not POOL/IMAGE", spec);
		return -EINVAL;
	}
	n = slash - spec;
	if (n > TGT_RBD_NAME_MAX) {
		snprintf(why, whylen, "pool name longer than %d bytes", TGT_RBD_NAME_MAX);
		return -EINVAL;
	}
	memcpy(pool, spec, n);
	pool[n] = '\0';
	if ((ret = check_name("pool", pool, why, whylen)) ||
	    (ret = check_name("image", slash + 1, why, whylen)))
		return ret;
	if ((ret = set_str(&c->pool, pool)) || (ret = set_str(&c->image, slash + 1)))
		return ret;
	c->seen |= (1u << K_POOL) | (1u << K_IMAGE);
	return 0;
}
