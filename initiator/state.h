/* SPDX-License-Identifier: MIT */
/*
 * Runtime state of attached devices: one JSON file per device,
 * $RBLK_RUN_DIR (default /run/rblk)/ublkbN.json, written atomically by the
 * rblk-initiator that serves the device and read by `rblkctl list/detach`.
 */
#ifndef RBLK_INITIATOR_STATE_H
#define RBLK_INITIATOR_STATE_H

#include <stdint.h>
#include <sys/types.h>

#include "rblk_proto.h"

#define INI_STATE_DIR_DEFAULT	"/run/rblk"

struct ini_state {
	int      dev_id;		/* N of /dev/ublkbN */
	pid_t    pid;			/* the serving rblk-initiator */
	char     target[256];		/* host as given */
	char     port[16];
	char     volume[RBLK_NAME_MAX];
	char     transport[8];		/* "tcp" | "rdma" */
	unsigned queues;
	unsigned depth;
	uint64_t size;
	uint32_t block_size;
	char     state[16];		/* starting | live | connecting | failed | stopping */
	int64_t  state_since;		/* unix time the state was entered */
	unsigned reconnects;		/* successful reconnects, all queues */
	char     log[256];		/* daemon log file, "" if none */
	int64_t  started;		/* unix time */
};

/* The directory (RBLK_RUN_DIR overrides the default); created 0755 on write. */
const char *ini_state_dir(void);

/* Writes <dir>/ublkb<dev_id>.json via a temp file + rename.  0 or -errno. */
int ini_state_write(const struct ini_state *s);
/* Removes the file of dev_id; 0 or -errno (-ENOENT if there was none). */
int ini_state_remove(int dev_id);
/* Reads one file; 0, -ENOENT, or -EINVAL when it is not a state file. */
int ini_state_read(const char *path, struct ini_state *s);
int ini_state_get(int dev_id, struct ini_state *s);

/*
 * All state files, sorted by dev_id, in a malloc'ed array the caller frees.
 * Unreadable files are skipped.  Returns the count or -errno.
 */
int ini_state_list(struct ini_state **out);

/* 1 when s->pid is alive and still an rblk-initiator. */
int ini_state_alive(const struct ini_state *s);

#endif /* RBLK_INITIATOR_STATE_H */
