/* SPDX-License-Identifier: MIT */
/*
 * What a failed start takes back: the folders it made (volume_dir and its
 * missing parents, the admin socket's folder).  The files its volumes'
 * opens created go through tgt_exports_unlink_created (export.h).  A start
 * that fails leaves nothing of its own behind; a folder that someone else
 * filled meanwhile is kept (rmdir refuses it).  Main thread only.
 */
#ifndef RBLK_TARGET_START_UNDO_H
#define RBLK_TARGET_START_UNDO_H

#include <limits.h>

#define TGT_START_UNDO_DIRS	2

struct tgt_start_undo {
	struct {
		char path[PATH_MAX];	/* the folder to be made */
		char kept[PATH_MAX];	/* its first ancestor that existed */
	} dirs[TGT_START_UNDO_DIRS];
	unsigned n;
};

/* Notes, before it is made, a folder the start is about to create
 * (with missing parents).  Nothing is noted when it already exists. */
void tgt_start_undo_dir(struct tgt_start_undo *u, const char *path);

/* Removes the noted folders that the start made, newest first, each up to
 * (not including) the ancestor that existed before. */
void tgt_start_undo_run(struct tgt_start_undo *u);

#endif /* RBLK_TARGET_START_UNDO_H */
