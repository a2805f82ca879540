// SPDX-License-Identifier: MIT
/*
 * The admin thread's config and the file under it: copies of the config
 * (clone), and putting a new one in place (commit: saved, then current).
 *
 * Atomic config writes.  The sequence is the classic one: write a temp file
 * in the same directory (same file system, so rename is atomic), fsync it
 * (its data is on disk before its name is), rename over the config, fsync
 * the directory (the rename itself is on disk).  A crash at any point
 * leaves either the old file or the new one under the config's name, and
 * at worst a stray ".NAME.tmp.*" file beside it.
 */
#include "admin.h"
#include "admin_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "log.h"

int tgt_admin_save_config(const char *path, const struct tgt_config *cfg,
			  char *err, size_t errlen)
{
	char dbuf[PATH_MAX], bbuf[PATH_MAX], tmp[PATH_MAX + 32];
	struct tgt_config check;
	char perr[512];
	const char *dir, *base;
	struct stat st;
	mode_t mode = 0600;
	char *text;
	int fd = -1, dfd, ret;

	text = tgt_config_format(cfg);
	if (!text) {
		snprintf(err, errlen, "formatting the config: out of memory");
		return -ENOMEM;
	}
	/* Never persist something the daemon would refuse at the next start. */
	ret = tgt_config_parse(text, path, &check, perr, sizeof(perr));
	if (ret) {
		snprintf(err, errlen, "refusing to write a config that does not parse back: %s", perr);
		goto out_free_text;
	}
	tgt_config_free(&check);

	if (strlen(path) >= sizeof(dbuf)) {
		ret = -ENAMETOOLONG;
		snprintf(err, errlen, "config path too long");
		goto out_free_text;
	}
	strcpy(dbuf, path);
	strcpy(bbuf, path);
	dir = dirname(dbuf);
	base = basename(bbuf);
	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.XXXXXX", dir, base);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "creating temp file in %s: %s", dir, strerror(-ret));
		goto out_free_text;
	}
	if (fchmod(fd, mode) < 0 ||
	    (ret = rblk_write_all(fd, text, strlen(text))) ||
	    fsync(fd) < 0) {
		ret = ret ? ret : -errno;
		snprintf(err, errlen, "writing %s: %s", tmp, strerror(-ret));
		goto out_unlink;
	}
	if (close(fd) < 0) {
		fd = -1;
		ret = -errno;
		snprintf(err, errlen, "writing %s: %s", tmp, strerror(-ret));
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		ret = -errno;
		snprintf(err, errlen, "renaming %s to %s: %s", tmp, path, strerror(-ret));
		goto out_unlink;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0) {
		/* The new file is in place; only its durability is in doubt. */
		rblk_warn("config %s: fsync of directory %s: %s", path, dir,
			  strerror(errno));
	}
	if (dfd >= 0)
		close(dfd);
	free(text);
	return 0;

out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out_free_text:
	free(text);
	return ret;
}

/* ---- config copies ------------------------------------------------------- */

/* Deep copy through format+parse: the same path the file takes. */
int tgt_admin_cfg_clone(const struct tgt_config *src, struct tgt_config *dst,
			char *err, size_t errlen)
{
	char *text = tgt_config_format(src);
	int ret;

	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = tgt_config_parse(text, "<admin>", dst, err, errlen);
	free(text);
	return ret;
}

int tgt_admin_cfg_commit(struct tgt_admin *a, struct tgt_config *next,
			 char *err, size_t errlen)
{
	int ret;

	if (a->config_path) {
		/* Never over an edit the target has not read. */
		ret = tgt_admin_config_fresh(a, err, errlen);
		if (!ret)
			ret = tgt_admin_save_config(a->config_path, next, err, errlen);
		if (ret) {
			tgt_config_free(next);
			return ret;
		}
		tgt_admin_config_written(a, next);
	}
	tgt_config_free(&a->cfg);
	a->cfg = *next;
	tgt_config_init(next);
	return 0;
}

void tgt_admin_cfg_restore(struct tgt_admin *a, struct tgt_config *prev)
{
	char err[512];

	if (tgt_admin_cfg_commit(a, prev, err, sizeof(err)))
		rblk_err("admin: could not restore the previous config: %s", err);
}

int tgt_admin_cfg_append_volume(struct tgt_config *cfg,
				const struct tgt_volume_cfg *v)
{
	struct tgt_volume_cfg *vols, *n;

	vols = realloc(cfg->vols, (cfg->n_vols + 1) * sizeof(*vols));
	if (!vols)
		return -ENOMEM;
	cfg->vols = vols;
	n = &vols[cfg->n_vols];
	memset(n, 0, sizeof(*n));
	memcpy(n->name, v->name, sizeof(n->name));
	memcpy(n->backend, v->backend, sizeof(n->backend));
	n->size = v->size;
	n->read_only = v->read_only;
	n->allow_any_host = v->allow_any_host;
	if (v->path && !(n->path = strdup(v->path)))
		return -ENOMEM;
	if (v->created_file && !(n->created_file = strdup(v->created_file)))
		return -ENOMEM;
	if (v->rbd.pool && tgt_rbd_cfg_copy(&n->rbd, &v->rbd))
		return -ENOMEM;
	cfg->n_vols++;
	return 0;
}

/* Removes a volume from a config copy (freeing what it owned through
 * tgt_config_free's rules: swap it to the end, free via a one-volume cfg). */
void tgt_admin_cfg_remove_volume(struct tgt_config *cfg, const char *name)
{
	struct tgt_config one;

	for (unsigned i = 0; i < cfg->n_vols; i++) {
		if (strcmp(cfg->vols[i].name, name))
			continue;
		tgt_config_init(&one);
		one.vols = malloc(sizeof(*one.vols));
		if (one.vols) {
			one.vols[0] = cfg->vols[i];
			one.n_vols = 1;
		}
		memmove(&cfg->vols[i], &cfg->vols[i + 1],
			(cfg->n_vols - i - 1) * sizeof(*cfg->vols));
		cfg->n_vols--;
		tgt_config_free(&one);
		return;
	}
}
