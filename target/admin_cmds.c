// SPDX-License-Identifier: MIT
/*
 * Admin request handlers.  Every change follows one pattern: validate,
 * prepare the new state (open the volume, grow the file), write the new
 * config atomically, and only then publish it to the exports the reactors
 * see.  If the write fails nothing visible changed; if publishing fails
 * the old config is written back.
 */
#include "admin_int.h"
#include "admin_json.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "acl_entry.h"
#include "admin_rbd.h"
#include "auth.h"
#include "backend.h"
#include "be_stats.h"
#include "helpers.h"
#include "limit_counts.h"
#include "log.h"
#include "size.h"

static void free_strv(char **v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- handlers ------------------------------------------------------------ */

static int cmd_ping(struct tgt_admin *a, json_object *req, json_object *rsp,
		    char *err, size_t errlen)
{
	add_str(rsp, "socket", a->socket_path);
	add_str(rsp, "config", a->config_path);
	add_str(rsp, "volume_dir", a->volume_dir);
	add_u64(rsp, "protocol", RBLK_PROTO_VERSION);
	return 0;
}

static bool export_exists(const char *name)
{
	bool found;

	tgt_exports_lock();
	found = tgt_export_find_locked(name) != NULL;
	tgt_exports_unlock();
	return found;
}

/* Two volumes on one store would corrupt each other's data. */
static int store_in_use(const struct tgt_admin *a, const char *path,
			char *err, size_t errlen)
{
	struct stat st, o;

	if (stat(path, &st))
		return 0;
	for (unsigned i = 0; i < a->cfg.n_vols; i++) {
		if (!a->cfg.vols[i].path || stat(a->cfg.vols[i].path, &o))
			continue;
		if (S_ISBLK(o.st_mode) && S_ISBLK(st.st_mode) ?
		    o.st_rdev == st.st_rdev :
		    o.st_dev == st.st_dev && o.st_ino == st.st_ino) {
			snprintf(err, errlen, "%s is already the store of volume '%s'",
				 path, a->cfg.vols[i].name);
			return -EEXIST;
		}
	}
	return 0;
}

/* What "volume.create" asked for, read from the request. */
struct create_req {
	const char *name, *path, *device, *backend;
	bool have_size;
};

/*
 * The store of a new file, device or storeless volume: backend, path
 * (given, or NAME.img in volume_dir) and whether it is created here
 * (*created; then recorded as created_file when it is the default path,
 * the one file delete may remove).  Fills vc; 0 or -errno with why (vc
 * may hold allocations either way).
 */
static int create_choose_store(struct tgt_admin *a, const struct create_req *cr,
			       struct tgt_volume_cfg *vc, bool *created,
			       char *err, size_t errlen)
{
	const char *path = cr->device ? cr->device : cr->path;
	const struct tgt_backend_ops *be;
	char defpath[PATH_MAX];
	struct stat st;
	int ret;

	snprintf(vc->backend, sizeof(vc->backend), "%s", cr->backend ? cr->backend : "uring");
	be = tgt_backend_find(vc->backend);
	if (!be || strlen(cr->backend ? cr->backend : "") >= sizeof(vc->backend)) {
		char pbuf[32];

		snprintf(err, errlen, "unknown backend '%s' (have: %s)",
			 adm_printable(cr->backend, pbuf, sizeof(pbuf)), tgt_backend_names());
		return -EINVAL;
	}
	if (cr->path && cr->device) {
		snprintf(err, errlen, "give either a path or a device, not both");
		return -EINVAL;
	}
	if (be->flags & TGT_BE_F_NO_STORE) {
		if (path) {
			snprintf(err, errlen, "backend '%s' has no backing store: no path or device", vc->backend);
			return -EINVAL;
		}
		if (!cr->have_size) {
			snprintf(err, errlen, "backend '%s' needs a size", vc->backend);
			return -EINVAL;
		}
	} else if (path) {
		ret = adm_check_path(cr->device ? "device" : "path", path, err, errlen);
		if (ret)
			return ret;
		if (stat(path, &st) == 0) {
			if (cr->device && !S_ISBLK(st.st_mode)) {
				snprintf(err, errlen, "%s is not a block device", path);
				return -EINVAL;
			}
			if (!cr->device && !S_ISREG(st.st_mode)) {
				snprintf(err, errlen, "%s is not a regular file (use --device for block devices)", path);
				return -EINVAL;
			}
		} else if (cr->device || errno != ENOENT) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
			return ret;
		} else if (!cr->have_size) {
			snprintf(err, errlen, "%s does not exist: give a size to create it", path);
			return -EINVAL;
		} else {
			*created = true;
		}
	} else {
		if (!cr->have_size) {
			snprintf(err, errlen, "a size is needed (like --size 10G)");
			return -EINVAL;
		}
		ret = tgt_volume_dir_create(a->volume_dir, err, errlen);
		if (ret)
			return ret;
		snprintf(defpath, sizeof(defpath), "%s/%s.img", a->volume_dir, cr->name);
		if (lstat(defpath, &st) == 0) {
			snprintf(err, errlen, "%s already exists (export it with --path, or remove it)", defpath);
			return -EEXIST;
		}
		path = defpath;
		*created = true;
		/* The one file delete may remove: recorded in the config, so
		 * the fact survives restarts and is checked against path at
		 * delete. */
		if (!(vc->created_file = strdup(defpath)))
			return -ENOMEM;
	}
	if (path) {
		ret = store_in_use(a, path, err, errlen);
		if (ret)
			return ret;
		vc->path = strdup(path);
		if (!vc->path)
			return -ENOMEM;
	}
	if (*created && vc->read_only) {
		snprintf(err, errlen, "cannot create a new read-only volume (it would only read zeroes)");
		return -EINVAL;
	}
	return 0;
}

/* The opened volume into the saved config, then into the exports; a
 * failed export takes the config back. */
static int create_commit(struct tgt_admin *a, struct tgt_volume *vol,
			 const struct tgt_volume_cfg *vc, char *err, size_t errlen)
{
	struct tgt_config next, prev;
	int ret;

	ret = tgt_admin_cfg_clone(&a->cfg, &next, err, errlen);
	if (!ret)
		ret = tgt_admin_cfg_append_volume(&next, vc);
	if (!ret)
		ret = tgt_admin_cfg_commit(a, &next, err, errlen);
	else
		tgt_config_free(&next);
	if (ret)
		return ret;
	ret = tgt_export_add(vol, vc, err, errlen);
	if (ret && !tgt_admin_cfg_clone(&a->cfg, &prev, err, errlen)) {
		tgt_admin_cfg_remove_volume(&prev, vc->name);
		tgt_admin_cfg_restore(a, &prev);
	}
	return ret;
}

static int cmd_create(struct tgt_admin *a, json_object *req, json_object *rsp,
		      char *err, size_t errlen)
{
	struct tgt_volume_cfg vc = { .line = 0 };
	struct create_req cr = { 0 };
	struct tgt_volume *vol;
	bool created = false;
	int ret;

	if ((ret = adm_get_name(req, "name", "volume", &cr.name, err, errlen)) ||
	    (ret = adm_get_str(req, "path", false, &cr.path, err, errlen)) ||
	    (ret = adm_get_str(req, "device", false, &cr.device, err, errlen)) ||
	    (ret = adm_get_str(req, "backend", false, &cr.backend, err, errlen)) ||
	    (ret = adm_get_bool(req, "read_only", &vc.read_only, err, errlen)) ||
	    (ret = adm_get_bool(req, "allow_any_host", &vc.allow_any_host, err, errlen)) ||
	    (ret = adm_get_size(req, &vc.size, &cr.have_size, err, errlen)))
		return ret;
	if (export_exists(cr.name) || tgt_config_find_volume(&a->cfg, cr.name)) {
		snprintf(err, errlen, "volume '%s' already exists", cr.name);
		return -EEXIST;
	}
	snprintf(vc.name, sizeof(vc.name), "%s", cr.name);
	if (tgt_admin_rbd_requested(req))
		/* An image, not a file: nothing about paths applies. */
		ret = tgt_admin_rbd_prepare(&a->cfg, req, &vc, vc.size, &created,
					    err, errlen);
	else
		ret = create_choose_store(a, &cr, &vc, &created, err, errlen);
	if (ret)
		goto out_free;
	ret = tgt_volume_open(&vol, &vc, err, errlen);
	if (ret)
		goto out_undo_create;
	ret = create_commit(a, vol, &vc, err, errlen);
	if (ret)
		goto out_close;
	rblk_info("admin: volume %s created (%s, %" PRIu64 " bytes, backend %s)",
		  cr.name, vc.path ? vc.path : vc.rbd.image ? vc.rbd.image : "no store",
		  vol->size, vc.backend);
	tgt_exports_lock();
	json_object_object_add(rsp, "volume",
			       adm_volume_json(a, tgt_export_find_locked(cr.name), true));
	tgt_exports_unlock();
	/* Closed until the admin says who may use it (docs/admin.md). */
	if (!vc.allow_any_host)
		add_str(rsp, "warning", "no host may log in yet: allow hosts (volume allow NAME HOST) or open it (volume allow NAME --any)");
	if (created && vc.rbd.pool)
		json_object_object_add(rsp, "created_image", json_object_new_boolean(1));
	goto out_free;

out_close:
	tgt_volume_close(vol);
out_undo_create:
	if (created && vc.path)
		unlink(vc.path);
	if (created && vc.rbd.pool)
		tgt_admin_rbd_undo_create(&vc);
out_free:
	free(vc.path);
	free(vc.created_file);
	tgt_rbd_cfg_free(&vc.rbd);
	return ret;
}

/*
 * The store a delete leaves or removes: only the file volume create made
 * (created_file, and still the volume's path), or any regular file with
 * remove_file.  A --path file, a device, a volume written by hand or
 * created before created_file existed keeps its store: the admin's.
 */
static void delete_store(const char *name, const char *path, bool owned,
			 bool remove_file, json_object *rsp)
{
	int e;

	if (!path)
		return;
	if (!owned && !remove_file) {
		add_str(rsp, "kept_file", path);
		add_str(rsp, "kept_reason", "not created by volume create");
		return;
	}
	if (unlink(path) == 0) {
		add_str(rsp, "removed_file", path);
		rblk_info("admin: volume %s: removed %s%s", name, path,
			  owned ? "" : " (remove_file)");
		return;
	}
	e = errno;
	rblk_warn("admin: volume %s: removing %s: %s", name, path, strerror(e));
	add_str(rsp, "kept_file", path);
	add_str(rsp, "kept_reason", strerror(e));
}

static int cmd_delete(struct tgt_admin *a, json_object *req, json_object *rsp,
		      char *err, size_t errlen)
{
	const struct tgt_volume_cfg *vc;
	struct tgt_config next, prev;
	const char *name;
	struct tgt_export *e;
	char *path = NULL;
	unsigned sessions;
	bool force, remove_file, owned, blk = false;
	int ret;

	if ((ret = adm_get_name(req, "name", "volume", &name, err, errlen)) ||
	    (ret = adm_get_bool(req, "force", &force, err, errlen)) ||
	    (ret = adm_get_bool(req, "remove_file", &remove_file, err, errlen)))
		return ret;
	tgt_exports_lock();
	e = tgt_export_find_locked(name);
	sessions = e ? e->n_sessions : 0;
	if (e && e->vol->path) {
		path = strdup(e->vol->path);
		blk = e->vol->is_blkdev;
	}
	tgt_exports_unlock();
	if (!e) {
		snprintf(err, errlen, "no volume '%s'", name);
		return -ENOENT;
	}
	if (remove_file && blk) {
		snprintf(err, errlen, "volume '%s' is the block device %s: remove_file removes only files; nothing changed",
			 name, path);
		ret = -EINVAL;
		goto out_free;
	}
	if (sessions && !force) {
		snprintf(err, errlen, "volume '%s' has %u session(s) attached; use --force to disconnect them",
			 name, sessions);
		free(path);
		return -EBUSY;
	}
	vc = tgt_config_find_volume(&a->cfg, name);
	owned = path && vc && vc->created_file && !strcmp(vc->created_file, path);
	ret = tgt_admin_cfg_clone(&a->cfg, &prev, err, errlen);
	if (ret)
		goto out_free;
	ret = tgt_admin_cfg_clone(&a->cfg, &next, err, errlen);
	if (ret) {
		tgt_config_free(&prev);
		goto out_free;
	}
	tgt_admin_cfg_remove_volume(&next, name);
	ret = tgt_admin_cfg_commit(a, &next, err, errlen);
	if (ret) {
		tgt_config_free(&prev);
		goto out_free;
	}
	ret = tgt_export_remove(name, force);
	if (ret) {
		/* A session logged in since the check: keep the volume. */
		tgt_admin_cfg_restore(a, &prev);
		snprintf(err, errlen, "volume '%s' %s", name,
			 ret == -EBUSY ? "got a session attached meanwhile; use --force"
				       : "vanished meanwhile");
		goto out_free;
	}
	/* Only an image rblk created is ours to remove. */
	tgt_admin_rbd_deleted(tgt_config_find_volume(&prev, name), rsp);
	tgt_config_free(&prev);
	delete_store(name, path, owned, remove_file, rsp);
	add_u64(rsp, "disconnected", force ? sessions : 0);
	rblk_info("admin: volume %s deleted%s", name,
		  sessions ? " (sessions disconnected)" : "");
out_free:
	free(path);
	return ret;
}

/*
 * The size of a resize: "size" as for create, or a string "+S", which
 * grows the volume by S (*grow_by set; the caller adds the current size
 * under the registry lock, so two "+1G" make 2G more).
 */
static int get_resize(json_object *req, uint64_t *size, bool *grow_by,
		      char *err, size_t errlen)
{
	json_object *j, *tmp;
	const char *s;
	bool have;
	int ret;

	*grow_by = false;
	if (json_object_object_get_ex(req, "size", &j) &&
	    json_object_is_type(j, json_type_string) &&
	    (s = json_object_get_string(j))[0] == '+') {
		tmp = json_object_new_object();
		if (!tmp)
			return -ENOMEM;
		json_object_object_add(tmp, "size", json_object_new_string(s + 1));
		ret = adm_get_size(tmp, size, &have, err, errlen);
		json_object_put(tmp);
		*grow_by = true;
		return ret;
	}
	if ((ret = adm_get_size(req, size, &have, err, errlen)))
		return ret;
	if (!have) {
		snprintf(err, errlen, "missing field \"size\"");
		return -EINVAL;
	}
	return 0;
}

static int cmd_resize(struct tgt_admin *a, json_object *req, json_object *rsp,
		      char *err, size_t errlen)
{
	struct tgt_config next, prev;
	struct tgt_volume_cfg *vc;
	const char *name;
	struct tgt_export *e;
	struct tgt_volume *vol = NULL;
	uint64_t size, old;
	char *path = NULL;
	bool grow_by, blk = false, ro = false, nostore = false;
	int ret;

	if ((ret = adm_get_name(req, "name", "volume", &name, err, errlen)) ||
	    (ret = get_resize(req, &size, &grow_by, err, errlen)))
		return ret;
	tgt_exports_lock();
	e = tgt_export_find_locked(name);
	if (e) {
		old = __atomic_load_n(&e->size, __ATOMIC_RELAXED);
		if (grow_by)
			size = old + size > old ? old + size : UINT64_MAX;
		blk = e->vol->is_blkdev;
		ro = e->vol->flags & RBLK_VOL_F_READ_ONLY;
		nostore = !e->vol->path;
		path = e->vol->path ? strdup(e->vol->path) : NULL;
		/* Only this thread deletes exports: vol outlives the lock. */
		if (e->vol->be->flags & TGT_BE_F_OWN_STORE)
			vol = e->vol;
	}
	tgt_exports_unlock();
	if (!e) {
		snprintf(err, errlen, "no volume '%s'", name);
		return -ENOENT;
	}
	if (blk || ro) {
		snprintf(err, errlen, "volume '%s' is %s: resize is for writable file volumes",
			 name, blk ? "a block device" : "read-only");
		ret = -EOPNOTSUPP;
		goto out_free;
	}
	if (size < old) {
		snprintf(err, errlen, "volume '%s' is %" PRIu64 " bytes; shrinking to %" PRIu64 " would cut off data (only growing is supported)",
			 name, old, size);
		ret = -EINVAL;
		goto out_free;
	}
	if (size == old) {
		add_u64(rsp, "size", size);
		goto out_free;
	}
	if (vol) {
		/* The store's size is the volume's: no config to change. */
		ret = tgt_admin_store_grow(vol, size, err, errlen);
		if (ret)
			goto out_free;
		goto published;
	}
	if ((ret = tgt_admin_cfg_clone(&a->cfg, &prev, err, errlen)))
		goto out_free;
	if ((ret = tgt_admin_cfg_clone(&a->cfg, &next, err, errlen))) {
		tgt_config_free(&prev);
		goto out_free;
	}
	vc = tgt_config_find_volume(&next, name);
	if (vc)
		vc->size = size;
	/* Config first: after a crash here the next start grows the file to
	 * the configured size; the reverse order would leave a file larger
	 * than its config, which the target refuses to load. */
	ret = tgt_admin_cfg_commit(a, &next, err, errlen);
	if (ret) {
		tgt_config_free(&prev);
		goto out_free;
	}
	if (!nostore && truncate(path, (off_t)size) < 0) {
		ret = -errno;
		snprintf(err, errlen, "growing %s: %s", path, strerror(-ret));
		tgt_admin_cfg_restore(a, &prev);
		goto out_free;
	}
	tgt_config_free(&prev);
published:
	tgt_export_set_size(name, size);
	add_u64(rsp, "size", size);
	add_u64(rsp, "old_size", old);
	rblk_info("admin: volume %s resized %" PRIu64 " -> %" PRIu64 " bytes",
		  name, old, size);
out_free:
	free(path);
	return ret;
}

static int cmd_list(struct tgt_admin *a, json_object *req, json_object *rsp,
		    char *err, size_t errlen)
{
	json_object *arr = json_object_new_array();

	if (!arr)
		return -ENOMEM;
	tgt_exports_lock();
	for (struct tgt_export *e = tgt_exports_first(); e; e = e->next)
		json_object_array_add(arr, adm_volume_json(a, e, false));
	tgt_exports_unlock();
	json_object_object_add(rsp, "volumes", arr);
	return 0;
}

static int cmd_show(struct tgt_admin *a, json_object *req, json_object *rsp,
		    char *err, size_t errlen)
{
	struct tgt_export *e;
	const char *name;
	json_object *o;
	int ret;

	if ((ret = adm_get_name(req, "name", "volume", &name, err, errlen)))
		return ret;
	tgt_exports_lock();
	e = tgt_export_find_locked(name);
	if (!e) {
		tgt_exports_unlock();
		snprintf(err, errlen, "no volume '%s'", name);
		return -ENOENT;
	}
	o = adm_volume_json(a, e, true);
	if (o) {
		json_object_object_add(o, "session_list", adm_sessions_json(e, true));
		json_object_object_add(o, "stats", adm_export_stats_json(e));
	}
	tgt_exports_unlock();
	json_object_object_add(rsp, "volume", o);
	return 0;
}

static int cmd_stats(struct tgt_admin *a, json_object *req, json_object *rsp,
		     char *err, size_t errlen)
{
	json_object *arr = json_object_new_array();
	struct tgt_io_stats *total = aligned_alloc(64, sizeof(*total));
	const char *name;
	bool found = false;
	int ret;

	if (!arr || !total) {
		json_object_put(arr);
		free(total);
		return -ENOMEM;
	}
	memset(total, 0, sizeof(*total));
	ret = adm_get_str(req, "name", false, &name, err, errlen);
	if (ret) {
		json_object_put(arr);
		free(total);
		return ret;
	}
	tgt_exports_lock();
	for (struct tgt_export *e = tgt_exports_first(); e; e = e->next) {
		json_object *o;

		if (name && strcmp(name, e->name))
			continue;
		found = true;
		o = json_object_new_object();
		if (!o)
			break;
		add_str(o, "name", e->name);
		json_object_object_add(o, "stats", adm_export_stats_json(e));
		json_object_object_add(o, "backend_io", tgt_be_stats_to_json(e->vol->be_stats));
		json_object_object_add(o, "sessions", adm_sessions_json(e, true));
		json_object_array_add(arr, o);
		for (unsigned r = 0; r < e->n_stats; r++)
			tgt_stats_sum(total, &e->stats[r]);
	}
	tgt_exports_unlock();
	if (name && !found) {
		char pbuf[80];

		json_object_put(arr);
		free(total);
		snprintf(err, errlen, "no volume '%s'", adm_printable(name, pbuf, sizeof(pbuf)));
		return -ENOENT;
	}
	json_object_object_add(rsp, "volumes", arr);
	/* The sum over the volumes listed (a deleted volume's counts go
	 * with it). */
	json_object_object_add(rsp, "total", tgt_stats_to_json(total));
	free(total);
	/* Target-wide: how often a limit acted (not per volume). */
	json_object_object_add(rsp, "limits", tgt_limits_to_json());
	return 0;
}

/* The "host" field of allow/deny: a name, address or CIDR range. */
static int get_host_entry(json_object *req, const char **out, char *err,
			  size_t errlen)
{
	struct tgt_acl_entry e;
	char pbuf[80];
	int ret;

	ret = adm_get_str(req, "host", true, out, err, errlen);
	if (ret)
		return ret;
	if (!strcmp(*out, "*")) {
		snprintf(err, errlen, "'*' is not a host: use any (rblkctl volume allow NAME --any)");
		return -EINVAL;
	}
	if (tgt_acl_entry_parse(*out, &e, NULL, 0)) {
		snprintf(err, errlen, "invalid host '%s': want a host name, an IP address or a CIDR range like 10.0.0.0/24",
			 adm_printable(*out, pbuf, sizeof(pbuf)));
		return -EINVAL;
	}
	return 0;
}

/*
 * allow/deny of one entry, or of "any host" (allow_any_host).  The two
 * exclude each other, as in nvmet: a volume with a list is not silently
 * opened, and an open volume does not silently keep a list that means
 * nothing.  Builds the change on a config copy.
 */
static int change_hosts(struct tgt_admin *a, json_object *req, json_object *rsp,
			bool allow, char *err, size_t errlen)
{
	struct tgt_volume_cfg *vc;
	struct tgt_config next;
	const char *name, *host = NULL;
	char **hosts;
	unsigned n, i;
	bool any;
	int ret;

	if ((ret = adm_get_name(req, "name", "volume", &name, err, errlen)) ||
	    (ret = adm_get_bool(req, "any", &any, err, errlen)))
		return ret;
	if (any && json_object_object_get_ex(req, "host", NULL)) {
		snprintf(err, errlen, "give a host or any, not both");
		return -EINVAL;
	}
	if (!any && (ret = get_host_entry(req, &host, err, errlen)))
		return ret;
	if (!export_exists(name) || !tgt_config_find_volume(&a->cfg, name)) {
		snprintf(err, errlen, "no volume '%s'", name);
		return -ENOENT;
	}
	vc = tgt_config_find_volume(&a->cfg, name);
	if (any && allow && vc->n_allow_hosts) {
		snprintf(err, errlen, "volume '%s' has an allow list (%u entries): deny them first; a list and any host exclude each other",
			 name, vc->n_allow_hosts);
		return -EINVAL;
	}
	if (!any && allow && vc->allow_any_host) {
		snprintf(err, errlen, "volume '%s' is open to any host: deny --any first; a list and any host exclude each other",
			 name);
		return -EINVAL;
	}
	for (i = 0; host && i < vc->n_allow_hosts && strcmp(vc->allow_hosts[i], host); i++)
		;
	/* Already so: a second allow or deny is not an error (scripts run
	 * twice), and says that nothing changed. */
	if ((any && allow == vc->allow_any_host) ||
	    (!any && allow == (i < vc->n_allow_hosts))) {
		json_object_object_add(rsp, "changed", json_object_new_boolean(0));
		return 0;
	}
	if ((ret = tgt_admin_cfg_clone(&a->cfg, &next, err, errlen)))
		return ret;
	vc = tgt_config_find_volume(&next, name);
	if (any) {
		vc->allow_any_host = allow;
	} else if (allow) {
		hosts = realloc(vc->allow_hosts, (vc->n_allow_hosts + 1) * sizeof(*hosts));
		if (!hosts || !(hosts[vc->n_allow_hosts] = strdup(host))) {
			if (hosts)
				vc->allow_hosts = hosts;
			tgt_config_free(&next);
			return -ENOMEM;
		}
		vc->allow_hosts = hosts;
		vc->n_allow_hosts++;
	} else {
		free(vc->allow_hosts[i]);
		memmove(&vc->allow_hosts[i], &vc->allow_hosts[i + 1],
			(vc->n_allow_hosts - i - 1) * sizeof(char *));
		vc->n_allow_hosts--;
	}
	/* Copy the list before commit hands next's storage to a->cfg. */
	n = vc->n_allow_hosts;
	any = vc->allow_any_host;
	hosts = n ? calloc(n, sizeof(char *)) : NULL;
	for (i = 0; hosts && i < n; i++)
		hosts[i] = strdup(vc->allow_hosts[i]);
	if (n && (!hosts || !hosts[n - 1])) {
		free_strv(hosts, n);
		tgt_config_free(&next);
		return -ENOMEM;
	}
	ret = tgt_admin_cfg_commit(a, &next, err, errlen);
	if (!ret)
		ret = tgt_export_set_hosts(name, hosts, n, any);
	free_strv(hosts, n);
	if (ret)
		return ret;
	json_object_object_add(rsp, "changed", json_object_new_boolean(1));
	/* Emptying the list closes the volume; say so, it used to open it. */
	if (!n && !any)
		add_str(rsp, "warning", "allow list is now empty: no host may log in");
	rblk_info("admin: volume %s: %s %s%s", name, allow ? "allowed" : "denied",
		  host ? "host " : "any host", host ? host : "");
	return 0;
}

static int cmd_allow(struct tgt_admin *a, json_object *req, json_object *rsp,
		     char *err, size_t errlen)
{
	return change_hosts(a, req, rsp, true, err, errlen);
}

static int cmd_deny(struct tgt_admin *a, json_object *req, json_object *rsp,
		    char *err, size_t errlen)
{
	return change_hosts(a, req, rsp, false, err, errlen);
}

static int cmd_secret(struct tgt_admin *a, json_object *req, json_object *rsp,
		      char *err, size_t errlen)
{
	struct rblk_secret *secret = NULL;
	struct tgt_volume_cfg *vc;
	struct tgt_config next;
	const char *name, *file;
	bool clear;
	int ret;

	if ((ret = adm_get_name(req, "name", "volume", &name, err, errlen)) ||
	    (ret = adm_get_str(req, "file", false, &file, err, errlen)) ||
	    (ret = adm_get_bool(req, "clear", &clear, err, errlen)))
		return ret;
	if (!!file == clear) {
		snprintf(err, errlen, "give either a secret file or clear");
		return -EINVAL;
	}
	if (!export_exists(name) || !tgt_config_find_volume(&a->cfg, name)) {
		snprintf(err, errlen, "no volume '%s'", name);
		return -ENOENT;
	}
	if (file) {
		char why[512];

		ret = adm_check_path("secret file", file, err, errlen);
		if (ret)
			return ret;
		secret = malloc(sizeof(*secret));
		if (!secret)
			return -ENOMEM;
		ret = rblk_auth_load_secret(file, secret, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "%s", why);
			goto out_free;
		}
	}
	if ((ret = tgt_admin_cfg_clone(&a->cfg, &next, err, errlen)))
		goto out_free;
	vc = tgt_config_find_volume(&next, name);
	free(vc->secret_file);
	vc->secret_file = file ? strdup(file) : NULL;
	if (file && !vc->secret_file) {
		tgt_config_free(&next);
		ret = -ENOMEM;
		goto out_free;
	}
	ret = tgt_admin_cfg_commit(a, &next, err, errlen);
	if (!ret)
		ret = tgt_export_set_secret(name, secret);
	if (!ret) {
		json_object_object_add(rsp, "auth", json_object_new_boolean(!clear));
		rblk_info("admin: volume %s: secret %s", name, clear ? "cleared" : "set");
	}
out_free:
	if (secret) {
		rblk_auth_clear_secret(secret);
		free(secret);
	}
	return ret;
}

static const struct tgt_admin_cmd cmds[] = {
	{ .name = "ping",		.fn = cmd_ping },
	{ .name = "volume.create",	.fn = cmd_create },
	{ .name = "volume.delete",	.fn = cmd_delete },
	{ .name = "volume.resize",	.fn = cmd_resize },
	{ .name = "volume.list",	.fn = cmd_list },
	{ .name = "volume.show",	.fn = cmd_show },
	{ .name = "volume.allow",	.fn = cmd_allow },
	{ .name = "volume.deny",	.fn = cmd_deny },
	{ .name = "volume.secret",	.fn = cmd_secret },
	{ .name = "volume.set",		.fn = tgt_admin_cmd_set },
	{ .name = "stats",		.fn = cmd_stats },
	{ .name = "config.reload",	.fn = tgt_admin_cmd_reload },
	{ .name = "status",		.fn = tgt_admin_cmd_status },
};

const struct tgt_admin_cmd *tgt_admin_cmd_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

const char *tgt_admin_cmd_names(void)
{
	return "ping, volume.create, volume.delete, volume.resize, volume.list, "
	       "volume.show, volume.allow, volume.deny, volume.secret, volume.set, stats, "
	       "config.reload, status";
}
