// SPDX-License-Identifier: MIT
/*
 * INI-style target config: parse (pure: text -> struct) and format (struct
 * -> text).  Every refusal names FILE:LINE and the field, so an operator can
 * fix the file without guessing; a refused config changes nothing.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl_entry.h"
#include "backend.h"
#include "helpers.h"
#include "hostport.h"
#include "log.h"
#include "size.h"

#define CFG_MAX_TEXT	(1u << 20)	/* a config is small; refuse megabytes */
#define CFG_MAX_VOLUMES	4096


void tgt_config_init(struct tgt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->log_level = -1;
	cfg->max_queue_depth = RBLK_MAX_QUEUE_DEPTH;
	cfg->buffer_mb = TGT_CFG_DEFAULT_BUFFER_MB;
	cfg->login_timeout = TGT_CFG_DEFAULT_LOGIN_TIMEOUT;
	cfg->rdma_poll_us = RBLK_POLL_US_DEFAULT;
	cfg->idle_timeout = TGT_CFG_DEFAULT_IDLE_TIMEOUT;
	cfg->data_timeout = TGT_CFG_DEFAULT_DATA_TIMEOUT;
	cfg->stall_timeout = TGT_CFG_DEFAULT_STALL_TIMEOUT;
	cfg->max_conns = TGT_CFG_DEFAULT_MAX_CONNS;
	cfg->max_conns_host = TGT_CFG_DEFAULT_MAX_CONNS_HOST;
	cfg->max_prelogin = TGT_CFG_DEFAULT_MAX_PRELOGIN;
	cfg->max_prelogin_per_host = TGT_CFG_DEFAULT_MAX_PRELOGIN_HOST;
}

void tgt_config_free(struct tgt_config *cfg)
{
	for (unsigned i = 0; i < cfg->n_listen_tcp; i++)
		free(cfg->listen_tcp[i]);
	free(cfg->listen_rdma);
	free(cfg->admin_socket);
	free(cfg->volume_dir);
	for (unsigned i = 0; i < cfg->n_vols; i++) {
		free(cfg->vols[i].path);
		for (unsigned h = 0; h < cfg->vols[i].n_allow_hosts; h++)
			free(cfg->vols[i].allow_hosts[h]);
		free(cfg->vols[i].allow_hosts);
		free(cfg->vols[i].secret_file);
		free(cfg->vols[i].created_file);
		tgt_rbd_cfg_free(&cfg->vols[i].rbd);
	}
	free(cfg->vols);
	tgt_config_init(cfg);
}

struct tgt_volume_cfg *tgt_config_find_volume(const struct tgt_config *cfg,
					      const char *name)
{
	for (unsigned i = 0; i < cfg->n_vols; i++)
		if (!strcmp(cfg->vols[i].name, name))
			return &cfg->vols[i];
	return NULL;
}

/* ---- parser ---------------------------------------------------------- */

struct parser {
	const char *fname;
	int line;
	char *err;
	size_t errlen;
	struct tgt_config *cfg;
	struct tgt_volume_cfg *vol;	/* current [volume] section, or NULL */
	int in_target;			/* inside [target] */
	unsigned seen;			/* bit per key in the current section */
	int target_seen;
};

__attribute__((format(printf, 2, 3)))
static int perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (p->err && p->errlen) {
		n = snprintf(p->err, p->errlen, "%s:%d: ", p->fname, p->line);
		if (n < 0 || (size_t)n >= p->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* "# x" and "; x" start a comment at line start or after white space. */
static void strip_comment(char *s)
{
	for (char *c = s; *c; c++) {
		if ((*c == '#' || *c == ';') &&
		    (c == s || c[-1] == ' ' || c[-1] == '\t')) {
			*c = '\0';
			return;
		}
	}
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_listen_tcp(struct parser *p, char *v)
{
	struct tgt_config *cfg = p->cfg;
	char host[256];
	unsigned port;
	char *save = NULL, *tok;

	for (tok = strtok_r(v, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		tok = trim(tok);
		if (!*tok)
			continue;
		if (rblk_split_hostport(tok, host, sizeof(host), &port) || !port)
			return perr(p, "field 'listen_tcp': '%s' is not host:port (IPv6 as [addr]:port)", tok);
		for (unsigned i = 0; i < cfg->n_listen_tcp; i++)
			if (!strcmp(cfg->listen_tcp[i], tok))
				return perr(p, "field 'listen_tcp': '%s' listed twice", tok);
		if (cfg->n_listen_tcp == TGT_CFG_MAX_LISTEN)
			return perr(p, "field 'listen_tcp': more than %d addresses",
				    TGT_CFG_MAX_LISTEN);
		cfg->listen_tcp[cfg->n_listen_tcp] = strdup(tok);
		if (!cfg->listen_tcp[cfg->n_listen_tcp])
			return -ENOMEM;
		cfg->n_listen_tcp++;
	}
	return 0;
}

enum {
	K_LISTEN_TCP, K_LISTEN_RDMA, K_REACTORS, K_LOG_LEVEL, K_MAX_QD,
	K_BUFFER_MB, K_ADMIN_SOCKET, K_VOLUME_DIR, K_LOGIN_TIMEOUT,
	K_RDMA_POLL, K_RDMA_POLL_US, K_IDLE_TIMEOUT, K_DATA_TIMEOUT, K_MAX_CONNS,
	K_MAX_CONNS_HOST, K_CONN_BUFFER_MB, K_HOST_BUFFER_MB, K_MAX_PRELOGIN,
	K_MAX_PRELOGIN_HOST, K_STALL_TIMEOUT,
};
enum {
	K_PATH, K_SIZE, K_BACKEND, K_READ_ONLY, K_ALLOW_HOSTS, K_SECRET_FILE,
	K_DIRECT, K_ALLOW_ANY_HOST, K_CREATED_FILE,
};

static const char *const target_keys[] = {
	[K_LISTEN_TCP] = "listen_tcp", [K_LISTEN_RDMA] = "listen_rdma",
	[K_REACTORS] = "reactors", [K_LOG_LEVEL] = "log_level",
	[K_MAX_QD] = "max_queue_depth", [K_BUFFER_MB] = "reactor_buffer_mb",
	[K_ADMIN_SOCKET] = "admin_socket", [K_VOLUME_DIR] = "volume_dir",
	[K_LOGIN_TIMEOUT] = "login_timeout",
	[K_RDMA_POLL] = "rdma_poll",
	[K_RDMA_POLL_US] = "rdma_poll_us",
	[K_IDLE_TIMEOUT] = "idle_timeout", [K_DATA_TIMEOUT] = "data_timeout",
	[K_MAX_CONNS] = "max_connections",
	[K_MAX_CONNS_HOST] = "max_connections_per_host",
	[K_CONN_BUFFER_MB] = "conn_buffer_mb",
	[K_HOST_BUFFER_MB] = "host_buffer_mb",
	[K_MAX_PRELOGIN] = "max_prelogin",
	[K_MAX_PRELOGIN_HOST] = "max_prelogin_per_host",
	[K_STALL_TIMEOUT] = "stall_timeout",
};
static const char *const volume_keys[] = {
	[K_PATH] = "path", [K_SIZE] = "size", [K_BACKEND] = "backend",
	[K_READ_ONLY] = "read_only", [K_ALLOW_HOSTS] = "allow_hosts",
	[K_SECRET_FILE] = "secret_file", [K_DIRECT] = "direct",
	[K_ALLOW_ANY_HOST] = "allow_any_host",
	[K_CREATED_FILE] = "created_file",
};

/* Absolute path value (admin_socket, volume_dir, secret_file). */
static int parse_abs_path(struct parser *p, const char *field, const char *v,
			  size_t max, char **out)
{
	if (*v != '/')
		return perr(p, "field '%s': '%s' is not an absolute path", field, v);
	if (strlen(v) >= max)
		return perr(p, "field '%s': path longer than %zu bytes", field, max - 1);
	*out = strdup(v);
	return *out ? 0 : -ENOMEM;
}

/*
 * "a, b, 10.0.0.1, 10.1.0.0/16": host names (matched against the name a
 * client claims) and addresses or CIDR ranges (matched against the real
 * peer address), see acl_entry.h.  Empty = no host; open access is the
 * separate allow_any_host key, so emptying a list never opens a volume.
 */
static int parse_allow_hosts(struct parser *p, char *v)
{
	struct tgt_volume_cfg *vol = p->vol;
	char *save = NULL, *tok, **h;
	struct tgt_acl_entry e;
	char why[160];

	for (tok = strtok_r(v, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		tok = trim(tok);
		if (!*tok)
			continue;
		if (!strcmp(tok, "*"))
			return perr(p, "volume '%s': field 'allow_hosts': '*' is not an entry; write allow_any_host = yes for open access",
				    vol->name);
		if (tgt_acl_entry_parse(tok, &e, why, sizeof(why)))
			return perr(p, "volume '%s': field 'allow_hosts': %s",
				    vol->name, why);
		for (unsigned i = 0; i < vol->n_allow_hosts; i++)
			if (!strcmp(vol->allow_hosts[i], tok))
				return perr(p, "volume '%s': field 'allow_hosts': '%s' listed twice",
					    vol->name, tok);
		h = realloc(vol->allow_hosts, (vol->n_allow_hosts + 1) * sizeof(*h));
		if (!h)
			return -ENOMEM;
		vol->allow_hosts = h;
		h[vol->n_allow_hosts] = strdup(tok);
		if (!h[vol->n_allow_hosts])
			return -ENOMEM;
		vol->n_allow_hosts++;
	}
	return 0;
}

static int key_index(const char *const *keys, unsigned n, const char *k)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(keys[i], k))
			return i;
	return -1;
}

/* A [target] number key in min..max; note follows the range in a refusal. */
static int uint_key(struct parser *p, int k, const char *v, unsigned min,
		    unsigned max, const char *note, unsigned *out)
{
	unsigned u;

	if (rblk_parse_uint(v, 0, max, &u) || u < min)
		return perr(p, "field '%s': '%s' is not a number %u..%u%s",
			    target_keys[k], v, min, max, note);
	*out = u;
	return 0;
}

static int target_key(struct parser *p, int k, char *v)
{
	struct tgt_config *cfg = p->cfg;
	unsigned u;

	switch (k) {
	case K_LISTEN_TCP:
		return parse_listen_tcp(p, v);
	case K_LISTEN_RDMA:
		if (*v) {
			cfg->listen_rdma = strdup(v);
			if (!cfg->listen_rdma)
				return -ENOMEM;
		}
		return 0;
	case K_REACTORS:
		if (rblk_parse_uint(v, 0, TGT_CFG_MAX_REACTORS, &u))
			return perr(p, "field 'reactors': '%s' is not a number 0..%d (0 = one per core)",
				    v, TGT_CFG_MAX_REACTORS);
		cfg->reactors = u;
		return 0;
	case K_LOG_LEVEL: {
		int level = rblk_log_level_parse(v);

		if (level < 0)
			return perr(p, "field 'log_level': '%s' is not err|warn|info|debug", v);
		cfg->log_level = level;
		return 0;
	}
	case K_MAX_QD:
		if (rblk_parse_uint(v, 0, RBLK_MAX_QUEUE_DEPTH, &u) || u == 0)
			return perr(p, "field 'max_queue_depth': '%s' is not a number 1..%d",
				    v, RBLK_MAX_QUEUE_DEPTH);
		cfg->max_queue_depth = u;
		return 0;
	case K_BUFFER_MB:
		if (rblk_parse_uint(v, 0, 65536, &u) || u < 4)
			return perr(p, "field 'reactor_buffer_mb': '%s' is not a number 4..65536", v);
		cfg->buffer_mb = u;
		return 0;
	case K_ADMIN_SOCKET:
		/* sun_path holds 108 bytes including the NUL. */
		return parse_abs_path(p, "admin_socket", v, 108, &cfg->admin_socket);
	case K_VOLUME_DIR:
		return parse_abs_path(p, "volume_dir", v, PATH_MAX - 80, &cfg->volume_dir);
	case K_LOGIN_TIMEOUT:
		if (rblk_parse_uint(v, 0, 3600, &u))
			return perr(p, "field 'login_timeout': '%s' is not a number of seconds 0..3600 (0 = none)", v);
		cfg->login_timeout = u;
		return 0;
	case K_RDMA_POLL:
		/* event: sleep on the completion channel; busy: spin (lowest
		 * latency, one core per reactor); adaptive: spin rdma_poll_us
		 * after work, then sleep. */
		if (rblk_poll_mode_parse(v, &cfg->rdma_poll))
			return perr(p, "field 'rdma_poll': '%s' is not event|busy|adaptive", v);
		return 0;
	case K_RDMA_POLL_US:
		return uint_key(p, k, v, 0, RBLK_POLL_US_MAX, " (microseconds)",
				&cfg->rdma_poll_us);
	case K_IDLE_TIMEOUT:
		return uint_key(p, k, v, 0, 86400, " (seconds, 0 = none)", &cfg->idle_timeout);
	case K_DATA_TIMEOUT:
		return uint_key(p, k, v, 0, 3600, " (seconds, 0 = none)", &cfg->data_timeout);
	case K_STALL_TIMEOUT:
		return uint_key(p, k, v, 0, 3600, " (seconds, 0 = none)", &cfg->stall_timeout);
	case K_MAX_CONNS:
		return uint_key(p, k, v, 1, TGT_CFG_MAX_CONNS, "", &cfg->max_conns);
	case K_MAX_CONNS_HOST:
		return uint_key(p, k, v, 1, TGT_CFG_MAX_CONNS, "", &cfg->max_conns_host);
	case K_CONN_BUFFER_MB:
		return uint_key(p, k, v, 0, 65536, " (MiB, 0 = automatic)", &cfg->conn_buffer_mb);
	case K_HOST_BUFFER_MB:
		return uint_key(p, k, v, 0, 65536, " (MiB, 0 = automatic)", &cfg->host_buffer_mb);
	case K_MAX_PRELOGIN:
		return uint_key(p, k, v, 0, TGT_CFG_MAX_PRELOGIN, " (0 = no cap)", &cfg->max_prelogin);
	case K_MAX_PRELOGIN_HOST:
		return uint_key(p, k, v, 0, TGT_CFG_MAX_PRELOGIN, " (0 = no cap)",
				&cfg->max_prelogin_per_host);
	}
	return 0;
}

static int volume_key(struct parser *p, int k, char *v)
{
	struct tgt_volume_cfg *vol = p->vol;
	uint64_t sz;
	int ret;

	switch (k) {
	case K_PATH:
		if (!*v)
			return perr(p, "volume '%s': field 'path' is empty", vol->name);
		if (*v != '/')
			return perr(p, "volume '%s': field 'path': '%s' is not an absolute path",
				    vol->name, v);
		if (strlen(v) >= PATH_MAX)
			return perr(p, "volume '%s': field 'path' is too long", vol->name);
		vol->path = strdup(v);
		return vol->path ? 0 : -ENOMEM;
	case K_SIZE:
		ret = rblk_parse_size(v, &sz);
		if (ret)
			return perr(p, "volume '%s': field 'size': '%s': %s",
				    vol->name, v, rblk_size_error(ret));
		if (sz == 0 || sz % 512)
			return perr(p, "volume '%s': field 'size': %s is not a positive multiple of 512 bytes",
				    vol->name, v);
		vol->size = sz;
		return 0;
	case K_BACKEND:
		if (!tgt_backend_find(v) && tgt_backend_not_built(v))
			return perr(p, "volume '%s': field 'backend': %s",
				    vol->name, tgt_backend_not_built(v));
		if (!tgt_backend_find(v))
			return perr(p, "volume '%s': field 'backend': unknown backend '%s' (have: %s)",
				    vol->name, v, tgt_backend_names());
		snprintf(vol->backend, sizeof(vol->backend), "%s", v);
		return 0;
	case K_READ_ONLY:
		if (parse_bool(v, &vol->read_only))
			return perr(p, "volume '%s': field 'read_only': '%s' is not yes|no",
				    vol->name, v);
		return 0;
	case K_ALLOW_HOSTS:
		return parse_allow_hosts(p, v);
	case K_ALLOW_ANY_HOST:
		if (parse_bool(v, &vol->allow_any_host))
			return perr(p, "volume '%s': field 'allow_any_host': '%s' is not yes|no",
				    vol->name, v);
		return 0;
	case K_SECRET_FILE:
		if (!*v)
			return 0;	/* empty = no secret */
		return parse_abs_path(p, "secret_file", v, PATH_MAX, &vol->secret_file);
	case K_CREATED_FILE:
		/* Written by volume create for the file it made: the only
		 * file volume delete removes (docs/admin.md). */
		return parse_abs_path(p, "created_file", v, PATH_MAX, &vol->created_file);
	case K_DIRECT: {
		bool direct;

		/* no = through the page cache, like nvmet's buffered_io. */
		if (parse_bool(v, &direct))
			return perr(p, "volume '%s': field 'direct': '%s' is not yes|no",
				    vol->name, v);
		vol->buffered = !direct;
		return 0;
	}
	}
	return 0;
}

static int end_section(struct parser *p)
{
	struct tgt_volume_cfg *v = p->vol;
	const struct tgt_backend_ops *be;
	char why[256];

	if (!v)
		return 0;
	be = tgt_backend_find(v->backend);
	p->line = v->line;
	if (tgt_rbd_cfg_check(&v->rbd, be->flags & TGT_BE_F_OWN_STORE, why, sizeof(why)))
		return perr(p, "volume '%s': %s", v->name, why);
	/* As nvmet: a host list and "any host" together would leave the
	 * reader guessing which one counts. */
	if (v->allow_any_host && v->n_allow_hosts)
		return perr(p, "volume '%s': allow_any_host = yes and allow_hosts exclude each other; keep one",
			    v->name);
	if (be->flags & TGT_BE_F_OWN_STORE) {
		if (v->path)
			return perr(p, "volume '%s': backend '%s' takes no 'path': rbd_pool and rbd_image name its store",
				    v->name, v->backend);
		if (v->size)
			return perr(p, "volume '%s': backend '%s' takes no 'size': the image's size is the volume's",
				    v->name, v->backend);
		return 0;
	}
	if (be->flags & TGT_BE_F_NO_STORE) {
		if (!v->size)
			return perr(p, "volume '%s': backend '%s' needs field 'size'",
				    v->name, v->backend);
		return 0;
	}
	if (!v->path)
		return perr(p, "volume '%s': field 'path' is missing", v->name);
	return 0;
}

static int section(struct parser *p, char *s)
{
	struct tgt_config *cfg = p->cfg;
	struct tgt_volume_cfg *vols;
	char *name;
	int ret, line = p->line;

	ret = end_section(p);
	if (ret)
		return ret;
	p->line = line;
	p->vol = NULL;
	p->in_target = 0;
	p->seen = 0;
	if (!strcmp(s, "target")) {
		if (p->target_seen)
			return perr(p, "section [target] appears twice");
		p->target_seen = 1;
		p->in_target = 1;
		return 0;
	}
	if (strncmp(s, "volume", 6) || (s[6] != ' ' && s[6] != '\t'))
		return perr(p, "unknown section [%s] (want [target] or [volume NAME])", s);
	name = trim(s + 6);
	if (rblk_name_valid(name))
		return perr(p, "section [volume %s]: invalid volume name (1..63 of A-Z a-z 0-9 . _ : -, not starting with '-')",
			    name);
	if (tgt_config_find_volume(cfg, name))
		return perr(p, "section [volume %s]: duplicate volume name", name);
	if (cfg->n_vols == CFG_MAX_VOLUMES)
		return perr(p, "too many volumes (max %d)", CFG_MAX_VOLUMES);
	vols = realloc(cfg->vols, (cfg->n_vols + 1) * sizeof(*vols));
	if (!vols)
		return -ENOMEM;
	cfg->vols = vols;
	p->vol = &vols[cfg->n_vols++];
	memset(p->vol, 0, sizeof(*p->vol));
	snprintf(p->vol->name, sizeof(p->vol->name), "%s", name);
	snprintf(p->vol->backend, sizeof(p->vol->backend), "%s", "uring");
	p->vol->line = p->line;
	return 0;
}

static int assignment(struct parser *p, char *s)
{
	char *eq = strchr(s, '='), *k, *v;
	int idx;

	if (!eq)
		return perr(p, "expected 'key = value' or '[section]', got '%s'", s);
	*eq = '\0';
	k = trim(s);
	v = trim(eq + 1);
	if (!*k)
		return perr(p, "missing key before '='");
	if (p->in_target) {
		idx = key_index(target_keys, ARRAY_SIZE(target_keys), k);
		if (idx < 0)
			return perr(p, "section [target]: unknown field '%s'", k);
	} else if (p->vol && tgt_rbd_cfg_is_key(k)) {
		char why[256];
		int ret = tgt_rbd_cfg_set(&p->vol->rbd, k, v, why, sizeof(why));

		if (ret == -EINVAL)
			return perr(p, "volume '%s': %s", p->vol->name, why);
		return ret;
	} else if (p->vol) {
		idx = key_index(volume_keys, ARRAY_SIZE(volume_keys), k);
		if (idx < 0)
			return perr(p, "volume '%s': unknown field '%s'", p->vol->name, k);
	} else {
		return perr(p, "field '%s' outside of any section", k);
	}
	if (p->seen & (1u << idx))
		return perr(p, "field '%s' given twice in this section", k);
	p->seen |= 1u << idx;
	return p->in_target ? target_key(p, idx, v) : volume_key(p, idx, v);
}

int tgt_config_parse(const char *text, const char *fname,
		     struct tgt_config *cfg, char *err, size_t errlen)
{
	struct parser p = {
		.fname = fname ? fname : "<config>", .err = err,
		.errlen = errlen, .cfg = cfg,
	};
	const char *cur = text;
	char *line = NULL;
	int ret = 0;

	tgt_config_init(cfg);
	if (err && errlen)
		err[0] = '\0';
	while (*cur) {
		const char *nl = strchr(cur, '\n');
		size_t n = nl ? (size_t)(nl - cur) : strlen(cur);
		char *s;

		p.line++;
		line = strndup(cur, n);
		if (!line) {
			ret = -ENOMEM;
			break;
		}
		cur += n + (nl ? 1 : 0);
		strip_comment(line);
		s = trim(line);
		if (!*s) {
			/* blank or comment */
		} else if (*s == '[') {
			char *e = s + strlen(s) - 1;

			if (*e != ']') {
				ret = perr(&p, "section header '%s' lacks ']'", s);
				break;
			}
			*e = '\0';
			ret = section(&p, trim(s + 1));
		} else {
			ret = assignment(&p, s);
		}
		free(line);
		line = NULL;
		if (ret)
			break;
	}
	free(line);
	if (!ret)
		ret = end_section(&p);
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", p.fname);
	if (ret)
		tgt_config_free(cfg);
	return ret;
}

int tgt_config_read(const char *path, char **textp, char *err, size_t errlen)
{
	struct stat st;
	char *text = NULL;
	size_t got = 0;
	int fd, ret;

	*textp = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > CFG_MAX_TEXT) {
		snprintf(err, errlen, "%s: not a regular file below 1 MiB", path);
		ret = -EINVAL;
		goto out_close;
	}
	text = malloc(st.st_size + 1);
	if (!text) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			snprintf(err, errlen, "%s: read: %s", path, strerror(-ret));
			goto out_free;
		}
		got += n;
	}
	text[got] = '\0';
	if (strlen(text) != got) {
		snprintf(err, errlen, "%s: contains a NUL byte", path);
		ret = -EINVAL;
		goto out_free;
	}
	close(fd);
	*textp = text;
	return 0;

out_free:
	free(text);
out_close:
	close(fd);
	return ret;
}

int tgt_config_load(const char *path, struct tgt_config *cfg,
		    char *err, size_t errlen)
{
	char *text;
	int ret;

	tgt_config_init(cfg);
	ret = tgt_config_read(path, &text, err, errlen);
	if (ret)
		return ret;
	ret = tgt_config_parse(text, path, cfg, err, errlen);
	free(text);
	return ret;
}

/* ---- writer ---------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
	int oom;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += n;
			return;
		}
		size_t cap = (b->cap + n + 1) * 2;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->oom = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

char *tgt_config_format(const struct tgt_config *cfg)
{
	struct sbuf b = { .cap = 1024 };

	b.s = malloc(b.cap);
	if (!b.s)
		return NULL;
	b.s[0] = '\0';
	sb_printf(&b, "# rblk-target configuration (see docs/target.md)\n[target]\nlisten_tcp = ");
	for (unsigned i = 0; i < cfg->n_listen_tcp; i++)
		sb_printf(&b, "%s%s", i ? ", " : "", cfg->listen_tcp[i]);
	sb_printf(&b, "\nlisten_rdma = %s\n", cfg->listen_rdma ? cfg->listen_rdma : "");
	sb_printf(&b, "reactors = %u\n", cfg->reactors);
	if (cfg->log_level >= 0 && cfg->log_level < 4)
		sb_printf(&b, "log_level = %s\n", rblk_log_level_name(cfg->log_level));
	if (cfg->max_queue_depth != RBLK_MAX_QUEUE_DEPTH)
		sb_printf(&b, "max_queue_depth = %u\n", cfg->max_queue_depth);
	if (cfg->buffer_mb != TGT_CFG_DEFAULT_BUFFER_MB)
		sb_printf(&b, "reactor_buffer_mb = %u\n", cfg->buffer_mb);
	if (cfg->admin_socket)
		sb_printf(&b, "admin_socket = %s\n", cfg->admin_socket);
	if (cfg->volume_dir)
		sb_printf(&b, "volume_dir = %s\n", cfg->volume_dir);
	if (cfg->login_timeout != TGT_CFG_DEFAULT_LOGIN_TIMEOUT)
		sb_printf(&b, "login_timeout = %u\n", cfg->login_timeout);
	if (cfg->rdma_poll != RBLK_POLL_EVENT)
		sb_printf(&b, "rdma_poll = %s\n", rblk_poll_mode_str(cfg->rdma_poll));
	if (cfg->rdma_poll_us != RBLK_POLL_US_DEFAULT)
		sb_printf(&b, "rdma_poll_us = %u\n", cfg->rdma_poll_us);
	if (cfg->idle_timeout != TGT_CFG_DEFAULT_IDLE_TIMEOUT)
		sb_printf(&b, "idle_timeout = %u\n", cfg->idle_timeout);
	if (cfg->data_timeout != TGT_CFG_DEFAULT_DATA_TIMEOUT)
		sb_printf(&b, "data_timeout = %u\n", cfg->data_timeout);
	if (cfg->stall_timeout != TGT_CFG_DEFAULT_STALL_TIMEOUT)
		sb_printf(&b, "stall_timeout = %u\n", cfg->stall_timeout);
	if (cfg->max_conns != TGT_CFG_DEFAULT_MAX_CONNS)
		sb_printf(&b, "max_connections = %u\n", cfg->max_conns);
	if (cfg->max_conns_host != TGT_CFG_DEFAULT_MAX_CONNS_HOST)
		sb_printf(&b, "max_connections_per_host = %u\n", cfg->max_conns_host);
	if (cfg->conn_buffer_mb)
		sb_printf(&b, "conn_buffer_mb = %u\n", cfg->conn_buffer_mb);
	if (cfg->host_buffer_mb)
		sb_printf(&b, "host_buffer_mb = %u\n", cfg->host_buffer_mb);
	if (cfg->max_prelogin != TGT_CFG_DEFAULT_MAX_PRELOGIN)
		sb_printf(&b, "max_prelogin = %u\n", cfg->max_prelogin);
	if (cfg->max_prelogin_per_host != TGT_CFG_DEFAULT_MAX_PRELOGIN_HOST)
		sb_printf(&b, "max_prelogin_per_host = %u\n",
			  cfg->max_prelogin_per_host);
	for (unsigned i = 0; i < cfg->n_vols; i++) {
		const struct tgt_volume_cfg *v = &cfg->vols[i];

		sb_printf(&b, "\n[volume %s]\n", v->name);
		if (v->path)
			sb_printf(&b, "path = %s\n", v->path);
		if (v->size) {
			char sz[32];

			sb_printf(&b, "size = %s\n",
				  rblk_format_size(v->size, sz, sizeof(sz)));
		}
		sb_printf(&b, "backend = %s\nread_only = %s\n", v->backend,
			  v->read_only ? "yes" : "no");
		if (v->n_allow_hosts) {
			sb_printf(&b, "allow_hosts = ");
			for (unsigned h = 0; h < v->n_allow_hosts; h++)
				sb_printf(&b, "%s%s", h ? ", " : "", v->allow_hosts[h]);
			sb_printf(&b, "\n");
		}
		if (v->allow_any_host)
			sb_printf(&b, "allow_any_host = yes\n");
		if (v->secret_file)
			sb_printf(&b, "secret_file = %s\n", v->secret_file);
		if (v->buffered)
			sb_printf(&b, "direct = no\n");
		if (v->created_file)
			sb_printf(&b, "created_file = %s\n", v->created_file);
		if (v->rbd.pool) {
			size_t n = tgt_rbd_cfg_format(&v->rbd, NULL, 0);
			char *rbd = malloc(n + 1);

			if (!rbd)
				b.oom = 1;
			else
				tgt_rbd_cfg_format(&v->rbd, rbd, n + 1);
			sb_printf(&b, "%s", rbd ? rbd : "");
			free(rbd);
		}
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}
