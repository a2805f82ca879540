// SPDX-License-Identifier: MIT
/*
 * The config file workflow (docs/admin.md, "Editing the config"): the
 * file and rblkctl are two ways to change one thing, and neither loses
 * the other's edit.
 *
 *  - The target remembers the SHA-256 of the file's bytes as it last read
 *    or wrote them.  Before every write it reads the file again; other
 *    bytes there are an edit it has not read, and the write is refused
 *    (ESTALE) with nothing changed.  A hash and not mtime + size + inode:
 *    an edit within one mtime tick that keeps the size (a typo fixed in
 *    place) is still seen, and a touch that changes no byte is not an
 *    edit.  Reading a config (< 1 MiB) per admin change costs nothing.
 *  - A reload (SIGHUP, rblkctl reload) reads the file and applies what
 *    changed, all or nothing: new volumes are opened, removed ones closed
 *    (their files are kept), a volume whose store changed is replaced in
 *    one step, ACL and secret changes apply to new logins.  Volumes that
 *    did not change, and their sessions, are not touched.  A file that
 *    does not parse, a store that does not open, a secret that cannot be
 *    used, a session on a volume that would go: refused with the reason,
 *    and nothing changed.  [target] keys take effect at the next start;
 *    the answer lists the ones that differ.
 */
#include "admin_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "export.h"
#include "helpers.h"
#include "log.h"

static void digest(const char *text, uint8_t out[ADMIN_DIGEST_LEN])
{
	unsigned len = ADMIN_DIGEST_LEN;

	if (!EVP_Digest(text, strlen(text), out, &len, EVP_sha256(), NULL))
		memset(out, 0, ADMIN_DIGEST_LEN);	/* matches no file: writes refused */
}

void tgt_admin_digest(struct tgt_admin *a, const char *text)
{
	digest(text, a->cfg_digest);
}

int tgt_admin_config_fresh(struct tgt_admin *a, char *err, size_t errlen)
{
	uint8_t now[ADMIN_DIGEST_LEN];
	char why[512], *text;
	int ret;

	if (!a->config_path)
		return 0;
	ret = tgt_config_read(a->config_path, &text, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "config %s cannot be read back (%s): not writing over it; nothing changed",
			 a->config_path, why);
		return ret;
	}
	digest(text, now);
	free(text);
	if (memcmp(now, a->cfg_digest, sizeof(now))) {
		snprintf(err, errlen, "config %s was changed on disk since the target read it (its SHA-256 differs): this change would overwrite that edit.  Apply the edit with 'rblkctl reload' (or SIGHUP), or undo it; nothing changed",
			 a->config_path);
		return -ESTALE;
	}
	return 0;
}

void tgt_admin_config_written(struct tgt_admin *a, const struct tgt_config *cfg)
{
	char *text = tgt_config_format(cfg);	/* the bytes the save wrote */

	if (!text) {
		rblk_err("admin: out of memory: later config writes are refused until a reload");
		memset(a->cfg_digest, 0, sizeof(a->cfg_digest));
		return;
	}
	digest(text, a->cfg_digest);
	free(text);
}

/* ---- reload -------------------------------------------------------------- */

static bool same_str(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

/* The [target] keys that differ: they take effect at the next start. */
static void target_changes(const struct tgt_config *o, const struct tgt_config *n,
			   json_object *arr)
{
	bool tcp = o->n_listen_tcp != n->n_listen_tcp;
	const struct { const char *key; bool differs; } keys[] = {
		{ "listen_rdma", !same_str(o->listen_rdma, n->listen_rdma) },
		{ "reactors", o->reactors != n->reactors },
		{ "log_level", o->log_level != n->log_level },
		{ "max_queue_depth", o->max_queue_depth != n->max_queue_depth },
		{ "reactor_buffer_mb", o->buffer_mb != n->buffer_mb },
		{ "login_timeout", o->login_timeout != n->login_timeout },
		{ "idle_timeout", o->idle_timeout != n->idle_timeout },
		{ "data_timeout", o->data_timeout != n->data_timeout },
		{ "max_connections", o->max_conns != n->max_conns },
		{ "max_connections_per_host", o->max_conns_host != n->max_conns_host },
		{ "conn_buffer_mb", o->conn_buffer_mb != n->conn_buffer_mb },
		{ "host_buffer_mb", o->host_buffer_mb != n->host_buffer_mb },
		{ "max_prelogin", o->max_prelogin != n->max_prelogin },
		{ "max_prelogin_per_host", o->max_prelogin_per_host != n->max_prelogin_per_host },
		{ "rdma_poll", o->rdma_poll != n->rdma_poll },
		{ "rdma_poll_us", o->rdma_poll_us != n->rdma_poll_us },
		{ "tcp_zero_copy", o->tcp_zero_copy != n->tcp_zero_copy },
		{ "admin_socket", !same_str(o->admin_socket, n->admin_socket) },
		{ "volume_dir", !same_str(o->volume_dir, n->volume_dir) },
	};

	for (unsigned i = 0; !tcp && i < o->n_listen_tcp; i++)
		tcp = strcmp(o->listen_tcp[i], n->listen_tcp[i]);
	if (tcp)
		json_object_array_add(arr, json_object_new_string("listen_tcp"));
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].differs)
			json_object_array_add(arr, json_object_new_string(keys[i].key));
}

/* Whether the volume's store (what its open depends on) is unchanged. */
static bool same_store(const struct tgt_volume_cfg *o, const struct tgt_volume_cfg *n)
{
	return same_str(o->path, n->path) && o->size == n->size &&
	       !strcmp(o->backend, n->backend) && o->read_only == n->read_only &&
	       o->buffered == n->buffered && tgt_rbd_cfg_same_image(&o->rbd, &n->rbd);
}

static unsigned sessions_of(const char *name)
{
	struct tgt_export *e;
	unsigned n;

	tgt_exports_lock();
	e = tgt_export_find_locked(name);
	n = e ? e->n_sessions : 0;
	tgt_exports_unlock();
	return n;
}

/* A new export for vc: its store opened (unless access_only) and its
 * ACL and secret loaded; appended to the plan as op. */
static int plan_prepare(struct tgt_admin_plan *p, enum tgt_export_op op,
			const struct tgt_volume_cfg *vc, char *err, size_t errlen)
{
	struct tgt_volume *vol = NULL;
	struct tgt_export *prep;
	int ret;

	if (op != TGT_EXPORT_ACCESS) {
		ret = tgt_volume_open(&vol, vc, err, errlen);
		if (ret)
			return ret;
	}
	ret = tgt_export_prepare(vol, vc, &prep, err, errlen);
	if (ret) {
		if (vol && vol->created)
			unlink(vol->path);
		tgt_volume_close(vol);
		return ret;
	}
	if (op == TGT_EXPORT_ACCESS && tgt_export_same_access(prep)) {
		tgt_export_discard(prep);
		return 0;
	}
	p->ch[p->n++] = (struct tgt_export_change){ .op = op, .name = vc->name, .prep = prep };
	json_object_array_add(op == TGT_EXPORT_ADD ? p->added : p->changed,
			      json_object_new_string(vc->name));
	return 0;
}

void tgt_admin_plan_free(struct tgt_admin_plan *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct tgt_export *prep = p->ch[i].prep;

		if (prep && prep->vol && prep->vol->created)
			unlink(prep->vol->path);
		tgt_export_discard(prep);
	}
	free(p->ch);
	json_object_put(p->added);
	json_object_put(p->removed);
	json_object_put(p->changed);
}

int tgt_admin_plan_build(struct tgt_admin *a, const struct tgt_config *next,
			 struct tgt_admin_plan *p, char *err, size_t errlen)
{
	unsigned busy;
	int ret;

	p->ch = calloc(a->cfg.n_vols + next->n_vols + 1, sizeof(*p->ch));
	p->added = json_object_new_array();
	p->removed = json_object_new_array();
	p->changed = json_object_new_array();
	if (!p->ch || !p->added || !p->removed || !p->changed)
		return -ENOMEM;
	/* Sessions first: a refused reload should not have opened anything. */
	for (unsigned i = 0; i < a->cfg.n_vols; i++) {
		const struct tgt_volume_cfg *o = &a->cfg.vols[i];
		const struct tgt_volume_cfg *n = tgt_config_find_volume(next, o->name);

		if (n && same_store(o, n))
			continue;
		busy = sessions_of(o->name);
		if (busy) {
			snprintf(err, errlen, "volume %s has %u session(s) attached and would be %s: %s",
				 o->name, busy, n ? "replaced (its store changed)" : "removed",
				 n ? "detach them first" :
				 "detach them, or delete it with rblkctl volume delete --force");
			return -EBUSY;
		}
		if (!n) {
			p->ch[p->n++] = (struct tgt_export_change){
				.op = TGT_EXPORT_REMOVE, .name = o->name };
			json_object_array_add(p->removed, json_object_new_string(o->name));
		}
	}
	for (unsigned i = 0; i < next->n_vols; i++) {
		const struct tgt_volume_cfg *n = &next->vols[i];
		const struct tgt_volume_cfg *o = tgt_config_find_volume(&a->cfg, n->name);

		ret = plan_prepare(p, !o ? TGT_EXPORT_ADD : same_store(o, n) ?
				   TGT_EXPORT_ACCESS : TGT_EXPORT_REPLACE, n, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static void log_names(char *buf, size_t len, const char *what, json_object *arr)
{
	size_t n = strlen(buf);

	if (!json_object_array_length(arr))
		return;
	n += snprintf(buf + n, n < len ? len - n : 0, "%s%s ", n ? "; " : "", what);
	for (size_t i = 0; i < json_object_array_length(arr) && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
			      json_object_get_string(json_object_array_get_idx(arr, i)));
}

/* Everything of a reload but the request; how reload and SIGHUP share it. */
static int reload(struct tgt_admin *a, json_object *rsp, char *err, size_t errlen)
{
	struct tgt_admin_plan p = { .n = 0 };
	struct tgt_config next;
	json_object *restart;
	char *text, sum[512] = "";
	int ret;

	if (!a->config_path) {
		snprintf(err, errlen, "the target runs without a config file: nothing to reload");
		return -EINVAL;
	}
	ret = tgt_config_read(a->config_path, &text, err, errlen);
	if (ret)
		return ret;
	ret = tgt_config_parse(text, a->config_path, &next, err, errlen);
	if (ret) {
		free(text);
		return ret;
	}
	ret = tgt_admin_plan_build(a, &next, &p, err, errlen);
	if (!ret)
		ret = tgt_exports_change(p.ch, p.n, err, errlen);
	if (ret) {
		if (ret == -ENOMEM && !err[0])
			snprintf(err, errlen, "out of memory");
		tgt_admin_plan_free(&p);
		tgt_config_free(&next);
		free(text);
		return ret;
	}
	restart = json_object_new_array();
	if (restart)
		target_changes(&a->cfg, &next, restart);
	tgt_config_free(&a->cfg);
	a->cfg = next;
	tgt_admin_digest(a, text);
	free(text);
	log_names(sum, sizeof(sum), "added", p.added);
	log_names(sum, sizeof(sum), "removed (files kept)", p.removed);
	log_names(sum, sizeof(sum), "changed", p.changed);
	if (restart)
		log_names(sum, sizeof(sum), "at the next start", restart);
	rblk_info("config %s reloaded: %s", a->config_path, sum[0] ? sum : "no change");
	json_object_object_add(rsp, "config", json_object_new_string(a->config_path));
	json_object_object_add(rsp, "added", json_object_get(p.added));
	json_object_object_add(rsp, "removed", json_object_get(p.removed));
	json_object_object_add(rsp, "changed", json_object_get(p.changed));
	json_object_object_add(rsp, "restart_needed", restart);
	tgt_admin_plan_free(&p);
	return 0;
}

int tgt_admin_cmd_reload(struct tgt_admin *a, json_object *req,
			 json_object *rsp, char *err, size_t errlen)
{
	int ret = reload(a, rsp, err, errlen);
	size_t n = strlen(err);

	/* All or nothing: say which, next to why. */
	if (ret && n && n < errlen)
		snprintf(err + n, errlen - n, "; nothing changed");
	return ret;
}

void tgt_admin_reload_signal(struct tgt_admin *a)
{
	json_object *rsp = json_object_new_object();
	char err[1024] = "";
	int ret;

	if (!rsp) {
		rblk_err("SIGHUP: config reload: out of memory; nothing changed");
		return;
	}
	ret = reload(a, rsp, err, sizeof(err));
	if (ret)
		rblk_err("SIGHUP: config reload refused: %s; nothing changed",
			 err[0] ? err : strerror(-ret));
	json_object_put(rsp);
}
