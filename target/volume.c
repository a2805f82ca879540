// SPDX-License-Identifier: MIT
/*
 * Volume open/close and capability probing.  Probes never touch the
 * exported data: discard and write-zeroes support of a file system is
 * tested on an O_TMPFILE in the same directory, O_DIRECT with a read.
 */
#include "volume.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "backend.h"
#include "be_stats.h"
#include "log.h"
#include "volume_id.h"

/* Which fallocate modes does the file system under path take? */
static uint32_t probe_file_caps(const char *path)
{
	char dir[PATH_MAX];
	uint32_t caps = 0;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		rblk_warn("cannot probe discard support next to %s (O_TMPFILE: %s): not offering DISCARD/WRITE_ZEROES",
			  path, strerror(errno));
		return 0;
	}
	if (ftruncate(fd, 65536) == 0) {
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      0, 4096) == 0)
			caps |= RBLK_VOL_F_DISCARD;
		if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			      4096, 4096) == 0)
			caps |= RBLK_VOL_F_WRITE_ZEROES;
	}
	close(fd);
	return caps;
}

static uint32_t probe_blkdev_discard(int fd)
{
	struct stat st;
	char p[128];
	unsigned long long max = 0;
	FILE *f;

	if (fstat(fd, &st) < 0)
		return 0;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/discard_max_bytes",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(p, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &max) != 1)
		max = 0;
	fclose(f);
	return max ? RBLK_VOL_F_DISCARD : 0;
}

/*
 * What a store of `have` bytes (logical block lbs) exports under cfg: the
 * rules open and --check-config share, so that a check passes exactly
 * what a start takes.  *grow: the file must first be extended to *size.
 * A store below one block (an unbound loop device is 0 bytes) is never
 * exported: there is nothing an initiator could read or write.
 */
static int size_rules(const struct tgt_volume_cfg *cfg, bool blk, uint64_t have,
		      uint32_t lbs, uint64_t *size, bool *grow, char *err,
		      size_t errlen)
{
	*grow = false;
	if (blk) {
		if (have < lbs) {
			snprintf(err, errlen, "volume %s: device %s is %" PRIu64 " bytes, less than one %u-byte block (an unbound loop device?)",
				 cfg->name, cfg->path, have, lbs);
			return -EINVAL;
		}
		if (cfg->size > have) {
			snprintf(err, errlen, "volume %s: size %" PRIu64 " is larger than device %s (%" PRIu64 " bytes)",
				 cfg->name, cfg->size, cfg->path, have);
			return -EINVAL;
		}
		/* A smaller configured size exports a prefix of the device. */
		*size = cfg->size ? cfg->size : have;
		if (*size % lbs) {
			snprintf(err, errlen, "volume %s: size %" PRIu64 " is not a multiple of the %u-byte blocks of %s",
				 cfg->name, *size, lbs, cfg->path);
			return -EINVAL;
		}
		return 0;
	}
	if (cfg->size && have > cfg->size) {
		snprintf(err, errlen, "volume %s: %s is %" PRIu64 " bytes, larger than the configured size %" PRIu64 " (refusing to hide data; fix size)",
			 cfg->name, cfg->path, have, cfg->size);
		return -EINVAL;
	}
	if (cfg->size && have < cfg->size) {
		if (cfg->read_only) {
			snprintf(err, errlen, "volume %s: read-only %s is smaller (%" PRIu64 ") than size %" PRIu64,
				 cfg->name, cfg->path, have, cfg->size);
			return -EINVAL;
		}
		/* Growing is lossless and sparse: the tail reads as zeroes. */
		*grow = true;
		have = cfg->size;
	}
	if (have < 512 || have % 512) {
		snprintf(err, errlen, "volume %s: %s size %" PRIu64 " is not a positive multiple of 512%s",
			 cfg->name, cfg->path, have,
			 have < 512 ? " (give a size to grow it)" : "");
		return -EINVAL;
	}
	*size = have;
	return 0;
}

/* Size (and logical block) of an open store; *blk for a block device. */
static int store_size(int fd, const struct tgt_volume_cfg *cfg, bool *blk,
		      uint64_t *bytes, uint32_t *lbs, char *err, size_t errlen)
{
	struct stat st;
	int ret, l;

	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "volume %s: stat %s: %s", cfg->name,
			 cfg->path, strerror(-ret));
		return ret;
	}
	*blk = S_ISBLK(st.st_mode);
	if (*blk) {
		if (ioctl(fd, BLKGETSIZE64, bytes) < 0 || ioctl(fd, BLKSSZGET, &l) < 0) {
			ret = -errno;
			snprintf(err, errlen, "volume %s: %s: size ioctl: %s",
				 cfg->name, cfg->path, strerror(-ret));
			return ret;
		}
		*lbs = (uint32_t)l;
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "volume %s: %s is neither a regular file nor a block device",
			 cfg->name, cfg->path);
		return -EINVAL;
	}
	*bytes = (uint64_t)st.st_size;
	*lbs = 512;
	return 0;
}

static int open_file(struct tgt_volume *v, const struct tgt_volume_cfg *cfg,
		     char *err, size_t errlen)
{
	int oflags = cfg->read_only ? O_RDONLY : O_RDWR;
	uint64_t have, size;
	bool grow;
	int ret;

	v->fd = open(cfg->path, oflags | O_CLOEXEC);
	if (v->fd < 0 && errno == ENOENT && !cfg->read_only) {
		if (!cfg->size) {
			snprintf(err, errlen, "volume %s: %s does not exist and no size is configured to create it",
				 cfg->name, cfg->path);
			return -ENOENT;
		}
		v->fd = open(cfg->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			     0600);
		if (v->fd >= 0) {
			v->created = true;
			rblk_info("volume %s: created %s", cfg->name, cfg->path);
		}
	}
	if (v->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "volume %s: open %s: %s", cfg->name,
			 cfg->path, strerror(-ret));
		return ret;
	}
	ret = store_size(v->fd, cfg, &v->is_blkdev, &have, &v->block_size, err, errlen);
	if (!ret)
		ret = size_rules(cfg, v->is_blkdev, have, v->block_size, &size,
				 &grow, err, errlen);
	if (ret)
		return ret;
	if (v->is_blkdev) {
		v->size = size;
		v->flags |= RBLK_VOL_F_WRITE_ZEROES | probe_blkdev_discard(v->fd);
		return 0;
	}
	if (grow) {
		if (ftruncate(v->fd, size) < 0) {
			ret = -errno;
			snprintf(err, errlen, "volume %s: extend %s to %" PRIu64 ": %s",
				 cfg->name, cfg->path, size, strerror(-ret));
			return ret;
		}
		if (have)
			rblk_info("volume %s: extended %s from %" PRIu64 " to %" PRIu64 " bytes",
				  cfg->name, cfg->path, have, size);
	}
	v->size = size;
	v->flags |= probe_file_caps(cfg->path);
	return 0;
}

int tgt_volume_open(struct tgt_volume **vp, const struct tgt_volume_cfg *cfg,
		    char *err, size_t errlen)
{
	struct tgt_volume *v;
	int ret;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->fd = -1;
	snprintf(v->name, sizeof(v->name), "%s", cfg->name);
	v->be_stats = tgt_be_stats_create();
	if (!v->be_stats) {
		ret = -ENOMEM;
		goto out_free;
	}
	v->be = tgt_backend_find(cfg->backend);
	if (!v->be) {
		snprintf(err, errlen, "volume %s: unknown backend %s",
			 cfg->name, cfg->backend);
		ret = -EINVAL;
		goto out_free;
	}
	v->be_index = tgt_backend_index(v->be);
	v->flags = RBLK_VOL_F_FLUSH | RBLK_VOL_F_FUA;
	if (cfg->read_only)
		v->flags |= RBLK_VOL_F_READ_ONLY;
	v->buffered = cfg->buffered;
	if (cfg->path) {
		v->path = strdup(cfg->path);
		if (!v->path) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
	if (v->be->flags & TGT_BE_F_NO_STORE) {
		v->size = cfg->size;
		v->block_size = 512;
		v->flags |= RBLK_VOL_F_DISCARD | RBLK_VOL_F_WRITE_ZEROES;
	} else if (v->be->flags & TGT_BE_F_OWN_STORE) {
		/* The backend reaches its store itself; its close undoes. */
		ret = v->be->open_store(v, cfg, err, errlen);
		if (ret)
			goto out_close;
	} else {
		ret = open_file(v, cfg, err, errlen);
		if (ret)
			goto out_close;
	}
	if (v->be->open) {
		ret = v->be->open(v);
		if (ret) {
			snprintf(err, errlen, "volume %s: backend %s: %s",
				 cfg->name, v->be->name, strerror(-ret));
			goto out_close;
		}
	}
	if (cfg->read_only)
		v->flags &= ~(RBLK_VOL_F_DISCARD | RBLK_VOL_F_WRITE_ZEROES |
			      RBLK_VOL_F_FUA);
	/* A backend whose store is shared (rbd) set its own identity. */
	if (!(v->be->flags & TGT_BE_F_OWN_STORE))
		tgt_uuid_local(v->uuid, v->path ? v->path : v->name);
	*vp = v;
	return 0;

out_close:
	if (v->fd >= 0)
		close(v->fd);
	/* Refused after all: the file it made goes too. */
	if (v->created)
		unlink(v->path);
	free(v->path);
out_free:
	tgt_be_stats_destroy(v->be_stats);
	free(v);
	return ret;
}

/* Replaces path (a writable buffer) by its parent folder. */
static void parent_of(char *path)
{
	const char *d = dirname(path);	/* may point into path, or elsewhere */

	memmove(path, d, strlen(d) + 1);
}

/* The nearest existing ancestor of path (path itself included) into buf. */
static void existing_ancestor(const char *path, char *buf, size_t len)
{
	struct stat st;

	snprintf(buf, len, "%s", path);
	while (stat(buf, &st) < 0 && strcmp(buf, "/") && strcmp(buf, "."))
		parent_of(buf);
}

int tgt_volume_check(const struct tgt_volume_cfg *cfg, const char *volume_dir,
		     char *err, size_t errlen)
{
	const struct tgt_backend_ops *be = tgt_backend_find(cfg->backend);
	char parent[PATH_MAX], anc[PATH_MAX];
	struct stat st;
	int fd, ret;

	if (!be) {
		snprintf(err, errlen, "volume %s: unknown backend %s", cfg->name, cfg->backend);
		return -EINVAL;
	}
	if (cfg->rbd.pool) {
		char why[400];

		ret = tgt_rbd_cfg_check_files(&cfg->rbd, why, sizeof(why));
		if (ret)
			snprintf(err, errlen, "volume %s: %s", cfg->name, why);
		return ret;
	}
	if ((be->flags & TGT_BE_F_NO_STORE) || !cfg->path)
		return 0;
	fd = open(cfg->path, (cfg->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd >= 0) {
		uint64_t have, size;
		uint32_t lbs;
		bool blk, grow;

		/* The size rules of a start, on what is there now. */
		ret = store_size(fd, cfg, &blk, &have, &lbs, err, errlen);
		if (!ret)
			ret = size_rules(cfg, blk, have, lbs, &size, &grow, err, errlen);
		close(fd);
		return ret;
	}
	ret = -errno;
	if (ret != -ENOENT || cfg->read_only) {
		snprintf(err, errlen, "volume %s: open %s: %s", cfg->name, cfg->path,
			 strerror(-ret));
		return ret;
	}
	if (!cfg->size) {
		snprintf(err, errlen, "volume %s: %s does not exist and no size is configured to create it",
			 cfg->name, cfg->path);
		return -ENOENT;
	}
	snprintf(parent, sizeof(parent), "%s", cfg->path);
	parent_of(parent);
	if (stat(parent, &st) == 0) {
		if (!S_ISDIR(st.st_mode) || access(parent, W_OK | X_OK) < 0) {
			snprintf(err, errlen, "volume %s: cannot create %s: folder %s is not writable",
				 cfg->name, cfg->path, parent);
			return -EACCES;
		}
		return 0;
	}
	if (!volume_dir || strcmp(parent, volume_dir)) {
		snprintf(err, errlen, "volume %s: cannot create %s: folder %s does not exist",
			 cfg->name, cfg->path, parent);
		return -ENOENT;
	}
	existing_ancestor(volume_dir, anc, sizeof(anc));
	if (stat(anc, &st) < 0 || !S_ISDIR(st.st_mode) || access(anc, W_OK | X_OK) < 0) {
		snprintf(err, errlen, "volume %s: volume_dir %s cannot be created under %s",
			 cfg->name, volume_dir, anc);
		return -EACCES;
	}
	return 0;
}

/* mkdir -p path (mode 0755); 0 or -errno. */
static int mkdir_parents(const char *path)
{
	char parent[PATH_MAX];
	int ret;

	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	snprintf(parent, sizeof(parent), "%s", path);
	ret = mkdir_parents(dirname(parent));
	if (ret)
		return ret;
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

int tgt_volume_dir_create(const char *dir, char *err, size_t errlen)
{
	char parent[PATH_MAX];
	int ret = 0;

	if (mkdir(dir, 0700) == 0)
		goto created;
	if (errno == EEXIST)
		return 0;
	ret = -errno;
	if (ret == -ENOENT) {
		snprintf(parent, sizeof(parent), "%s", dir);
		ret = mkdir_parents(dirname(parent));
		if (!ret && mkdir(dir, 0700) == 0)
			goto created;
		if (!ret)
			ret = -errno;
	}
	snprintf(err, errlen, "volume_dir %s: cannot create it: %s", dir, strerror(-ret));
	return ret;
created:
	rblk_info("created volume_dir %s (mode 0700)", dir);
	return 0;
}

bool tgt_volume_cfg_remote(const struct tgt_volume_cfg *cfg)
{
	const struct tgt_backend_ops *be = tgt_backend_find(cfg->backend);

	return be && (be->flags & TGT_BE_F_REMOTE);
}

int tgt_volume_close(struct tgt_volume *v)
{
	int ret = 0;

	if (!v)
		return 0;
	if (v->fd >= 0 && !(v->flags & RBLK_VOL_F_READ_ONLY) &&
	    fdatasync(v->fd) < 0) {
		ret = -errno;
		rblk_err("volume %s: final flush of %s: %s", v->name, v->path,
			 strerror(-ret));
	}
	if (v->be->close)
		v->be->close(v);
	if (v->fd >= 0)
		close(v->fd);
	tgt_be_stats_destroy(v->be_stats);
	free(v->path);
	free(v);
	return ret;
}
