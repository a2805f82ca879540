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


/*
 * The [target] keys, once: the parser, the defaults and the writer all
 * read this table (and a unit test checks each name against the config
 * man page), so a new key is one line here and a field in tgt_config.
 * Written back in this order; a number only when it is not its default.
 */
enum key_type {
	KT_UINT,	/* unsigned min..max, refused with note after the range */
	KT_PATH,	/* absolute path shorter than max bytes */
	KT_TCP_LIST,	/* listen_tcp: host:port, ... */
	KT_STRING,	/* listen_rdma: kept as written, empty = none */
	KT_LOG_LEVEL,
	KT_POLL,
	KT_TCP_ZC,
};

struct target_key {
	const char *name;
	enum key_type type;
	size_t off;			/* of the field in struct tgt_config */
	unsigned def, min, max;		/* KT_UINT (max: KT_PATH too) */
	const char *note;
	bool always;			/* written even at its default */
};

#define TK(n, t, f, ...) { .name = n, .type = t, .off = offsetof(struct tgt_config, f), __VA_ARGS__ }
static const struct target_key target_keys[] = {
	TK("listen_tcp", KT_TCP_LIST, listen_tcp, .always = true),
	TK("listen_rdma", KT_STRING, listen_rdma, .always = true),
	TK("reactors", KT_UINT, reactors, .max = TGT_CFG_MAX_REACTORS,
	   .note = " (0 = one per core)", .always = true),
	TK("log_level", KT_LOG_LEVEL, log_level),
	TK("max_queue_depth", KT_UINT, max_queue_depth, .def = RBLK_MAX_QUEUE_DEPTH,
	   .min = 1, .max = RBLK_MAX_QUEUE_DEPTH),
	TK("reactor_buffer_mb", KT_UINT, buffer_mb, .def = TGT_CFG_DEFAULT_BUFFER_MB,
	   .min = 4, .max = 65536),
	/* sun_path holds 108 bytes including the NUL. */
	TK("admin_socket", KT_PATH, admin_socket, .max = 108),
	TK("volume_dir", KT_PATH, volume_dir, .max = PATH_MAX - 80),
	TK("login_timeout", KT_UINT, login_timeout, .def = TGT_CFG_DEFAULT_LOGIN_TIMEOUT,
	   .max = 3600, .note = " (seconds, 0 = none)"),
	/* event: sleep on the completion channel; busy: spin (lowest
	 * latency, one core per reactor); adaptive: spin rdma_poll_us after
	 * work, then sleep. */
	TK("rdma_poll", KT_POLL, rdma_poll),
	TK("rdma_poll_us", KT_UINT, rdma_poll_us, .def = RBLK_POLL_US_DEFAULT,
	   .max = RBLK_POLL_US_MAX, .note = " (microseconds)"),
	/* off (default); auto: zero-copy sends where the kernel can say
	 * that it copied anyway (then that connection stops asking); on:
	 * always. */
	TK("tcp_zero_copy", KT_TCP_ZC, tcp_zero_copy),
	TK("idle_timeout", KT_UINT, idle_timeout, .def = TGT_CFG_DEFAULT_IDLE_TIMEOUT,
	   .max = 86400, .note = " (seconds, 0 = none)"),
	TK("data_timeout", KT_UINT, data_timeout, .def = TGT_CFG_DEFAULT_DATA_TIMEOUT,
	   .max = 3600, .note = " (seconds, 0 = none)"),
	TK("stall_timeout", KT_UINT, stall_timeout, .def = TGT_CFG_DEFAULT_STALL_TIMEOUT,
	   .max = 3600, .note = " (seconds, 0 = none)"),
	TK("max_connections", KT_UINT, max_conns, .def = TGT_CFG_DEFAULT_MAX_CONNS,
	   .min = 1, .max = TGT_CFG_MAX_CONNS),
	TK("max_connections_per_host", KT_UINT, max_conns_host,
	   .def = TGT_CFG_DEFAULT_MAX_CONNS_HOST, .min = 1, .max = TGT_CFG_MAX_CONNS),
	TK("conn_buffer_mb", KT_UINT, conn_buffer_mb, .max = 65536,
	   .note = " (MiB, 0 = automatic)"),
	TK("host_buffer_mb", KT_UINT, host_buffer_mb, .max = 65536,
	   .note = " (MiB, 0 = automatic)"),
	TK("max_prelogin", KT_UINT, max_prelogin, .def = TGT_CFG_DEFAULT_MAX_PRELOGIN,
	   .max = TGT_CFG_MAX_PRELOGIN, .note = " (0 = no cap)"),
	TK("max_prelogin_per_host", KT_UINT, max_prelogin_per_host,
	   .def = TGT_CFG_DEFAULT_MAX_PRELOGIN_HOST, .max = TGT_CFG_MAX_PRELOGIN,
	   .note = " (0 = no cap)"),
};
#undef TK

static const char *const tcp_zc_names[] = {
	[TGT_TCP_ZC_AUTO] = "auto",
	[TGT_TCP_ZC_ON] = "on",
	[TGT_TCP_ZC_OFF] = "off",
};
/* The parser marks keys seen in a section in one unsigned. */
_Static_assert(ARRAY_SIZE(target_keys) <= 32, "seen-key bits");

#define CFG_FIELD(cfg, k, type)	((type *)((char *)(cfg) + (k)->off))

const char *tgt_config_target_key(unsigned i)
{
	return i < ARRAY_SIZE(target_keys) ? target_keys[i].name : NULL;
}

void tgt_config_init(struct tgt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->log_level = -1;
	cfg->rdma_poll = RBLK_POLL_EVENT;
	/* Measured a loss on the benchmark's virtio link (docs/benchmarks.md,
	 * "TCP zero-copy sends"): asked for, not assumed. */
	cfg->tcp_zero_copy = TGT_TCP_ZC_OFF;
	for (unsigned i = 0; i < ARRAY_SIZE(target_keys); i++)
		if (target_keys[i].type == KT_UINT)
			*CFG_FIELD(cfg, &target_keys[i], unsigned) = target_keys[i].def;
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
	K_PATH, K_SIZE, K_BACKEND, K_READ_ONLY, K_ALLOW_HOSTS, K_SECRET_FILE,
	K_DIRECT, K_ALLOW_ANY_HOST, K_CREATED_FILE,
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

static int target_key(struct parser *p, const struct target_key *k, char *v)
{
	struct tgt_config *cfg = p->cfg;
	unsigned u;
	int level;

	switch (k->type) {
	case KT_UINT:
		if (rblk_parse_uint(v, 0, k->max, &u) || u < k->min)
			return perr(p, "field '%s': '%s' is not a number %u..%u%s",
				    k->name, v, k->min, k->max, k->note ? k->note : "");
		*CFG_FIELD(cfg, k, unsigned) = u;
		return 0;
	case KT_PATH:
		return parse_abs_path(p, k->name, v, k->max, CFG_FIELD(cfg, k, char *));
	case KT_TCP_LIST:
		return parse_listen_tcp(p, v);
	case KT_STRING:
		if (*v) {
			*CFG_FIELD(cfg, k, char *) = strdup(v);
			if (!*CFG_FIELD(cfg, k, char *))
				return -ENOMEM;
		}
		return 0;
	case KT_LOG_LEVEL:
		level = rblk_log_level_parse(v);
		if (level < 0)
			return perr(p, "field '%s': '%s' is not err|warn|info|debug", k->name, v);
		*CFG_FIELD(cfg, k, int) = level;
		return 0;
	case KT_POLL:
		if (rblk_poll_mode_parse(v, CFG_FIELD(cfg, k, enum rblk_poll_mode)))
			return perr(p, "field '%s': '%s' is not event|busy|adaptive", k->name, v);
		return 0;
	case KT_TCP_ZC:
		for (unsigned i = 0; i < ARRAY_SIZE(tcp_zc_names); i++)
			if (!strcmp(v, tcp_zc_names[i])) {
				*CFG_FIELD(cfg, k, enum tgt_tcp_zc) = i;
				return 0;
			}
		return perr(p, "field '%s': '%s' is not auto|on|off", k->name, v);
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
		idx = -1;
		for (unsigned i = 0; i < ARRAY_SIZE(target_keys); i++)
			if (!strcmp(target_keys[i].name, k))
				idx = (int)i;
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
	return p->in_target ? target_key(p, &target_keys[idx], v) : volume_key(p, idx, v);
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

/* One [target] line, unless the key is at its default. */
static void format_target_key(struct sbuf *b, const struct tgt_config *cfg,
			      const struct target_key *k)
{
	const void *f = (const char *)cfg + k->off;

	switch (k->type) {
	case KT_UINT:
		if (k->always || *(const unsigned *)f != k->def)
			sb_printf(b, "%s = %u\n", k->name, *(const unsigned *)f);
		return;
	case KT_PATH:
	case KT_STRING:
		if (k->always || *(char *const *)f)
			sb_printf(b, "%s = %s\n", k->name,
				  *(char *const *)f ? *(char *const *)f : "");
		return;
	case KT_TCP_LIST:
		sb_printf(b, "%s = ", k->name);
		for (unsigned i = 0; i < cfg->n_listen_tcp; i++)
			sb_printf(b, "%s%s", i ? ", " : "", cfg->listen_tcp[i]);
		sb_printf(b, "\n");
		return;
	case KT_LOG_LEVEL:
		if (*(const int *)f >= 0 && *(const int *)f < 4)
			sb_printf(b, "%s = %s\n", k->name, rblk_log_level_name(*(const int *)f));
		return;
	case KT_POLL:
		if (*(const enum rblk_poll_mode *)f != RBLK_POLL_EVENT)
			sb_printf(b, "%s = %s\n", k->name,
				  rblk_poll_mode_str(*(const enum rblk_poll_mode *)f));
		return;
	case KT_TCP_ZC:
		if (*(const enum tgt_tcp_zc *)f != TGT_TCP_ZC_OFF)
			sb_printf(b, "%s = %s\n", k->name,
				  tcp_zc_names[*(const enum tgt_tcp_zc *)f]);
		return;
	}
}

char *tgt_config_format(const struct tgt_config *cfg)
{
	struct sbuf b = { .cap = 1024 };

	b.s = malloc(b.cap);
	if (!b.s)
		return NULL;
	b.s[0] = '\0';
	sb_printf(&b, "# rblk-target configuration (see rblk-target.conf(5))\n[target]\n");
	for (unsigned i = 0; i < ARRAY_SIZE(target_keys); i++)
		format_target_key(&b, cfg, &target_keys[i]);
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
