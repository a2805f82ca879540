/* SPDX-License-Identifier: MIT */
/*
 * A volume: an opened backing file or block device plus what it can do.
 * Opened by the main thread at startup; read-only afterwards, so reactors
 * share it without locks.
 */
#ifndef RBLK_TARGET_VOLUME_H
#define RBLK_TARGET_VOLUME_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "rblk_proto.h"

struct tgt_backend_ops;
struct tgt_be_stats;

struct tgt_volume {
	char     name[RBLK_NAME_MAX];
	char    *path;			/* NULL for the null backend */
	const struct tgt_backend_ops *be;
	unsigned be_index;		/* registry index of be */
	int      fd;			/* -1 when there is no store */
	bool     is_blkdev;
	bool     direct;		/* fd has O_DIRECT */
	bool     buffered;		/* config direct = no: never O_DIRECT */
	bool     mem_inline;		/* uring: small I/O on the reactor (uring.c) */
	bool     created;		/* open created the file (O_EXCL): ours */
	uint64_t size;			/* bytes exported */
	uint32_t block_size;		/* logical block size */
	uint32_t flags;			/* RBLK_VOL_F_* */
	uint8_t  uuid[RBLK_UUID_LEN];	/* identity (volume_id.h), in LOGIN_RSP */
	/* __atomic: bumped when another target fenced this one (rbd_ha):
	 * sessions that logged in before belong to the old owner. */
	uint32_t epoch;
	/* __atomic: bumped at every LOGIN; a session's number says whether
	 * rbd_ha has checked the lock since it came (a new client, or one
	 * that failed over here). */
	uint32_t login_gen;
	void    *be_priv;		/* backend's per-volume state */
	struct tgt_be_stats *be_stats;	/* in flight, latency (be_stats.h) */
};

/*
 * Opens the store of cfg with its backend: creates a missing regular file
 * sparse (size needed; then (*vp)->created is set), extends a smaller one
 * to cfg->size, refuses one larger than cfg->size (data would be hidden)
 * or below one block; probes O_DIRECT, discard and write-zeroes support.
 * 0 or -errno with a message in err; a file it created for a volume it
 * then refuses is removed again.
 */
int tgt_volume_open(struct tgt_volume **vp, const struct tgt_volume_cfg *cfg,
		    char *err, size_t errlen);
/*
 * Checks, changing nothing, that tgt_volume_open() of cfg would succeed as
 * far as the file system goes: an existing store opens with the access the
 * volume needs and passes open's size rules (a device's BLKGETSIZE64, no
 * store below one block, none larger than size); a missing one is
 * writable, has a size to be created with,
 * and a parent folder that exists and is writable, or is volume_dir (made
 * at start by tgt_volume_dir_create) under a writable ancestor.  This is
 * what --check-config promises about a start.  0 or -errno with a message.
 */
int tgt_volume_check(const struct tgt_volume_cfg *cfg, const char *volume_dir,
		     char *err, size_t errlen);

/* Creates dir (mode 0700; missing parents 0755) unless it exists.  0 or
 * -errno with a message in err. */
int tgt_volume_dir_create(const char *dir, char *err, size_t errlen);

/* Is cfg's store across a network (its backend has TGT_BE_F_REMOTE)?  A
 * start then leaves out the volume whose store cannot be reached. */
bool tgt_volume_cfg_remote(const struct tgt_volume_cfg *cfg);

/* Flushes (unless read-only) and closes; returns the flush result. */
int tgt_volume_close(struct tgt_volume *v);


#endif /* RBLK_TARGET_VOLUME_H */
