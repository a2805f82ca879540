/* SPDX-License-Identifier: MIT */
/*
 * Runtime state of attached devices: one JSON file per device,
 * $RBLK_RUN_DIR (default /run/rblk)/ublkbN.json, written atomically by the
 * rblk-initiator that serves the device and read by `rblkctl list/detach`.
 */
#ifndef RBLK_INITIATOR_STATE_H
#define RBLK_INITIATOR_STATE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "rblk_client.h"
#include "rblk_proto.h"

#define INI_STATE_DIR_DEFAULT	"/run/rblk"

/*
 * The fault options, in this order in ini_state.tmo_s[]: seconds as the
 * user gave them (-1 never/off), INI_TMO_UNSET when not given (the
 * library default applies).  A new server started by `rblkctl recover`
 * gets the same values back.
 */
enum {
	INI_TMO_KEEP_ALIVE,
	INI_TMO_IO,
	INI_TMO_RECONNECT_DELAY,
	INI_TMO_CTRL_LOSS,
	INI_TMO_FAST_IO_FAIL,
	INI_TMO_COUNT,
};
#define INI_TMO_UNSET	INT_MIN
/* JSON keys ("keep_alive_tmo"...) and command-line options ("--keep-alive-tmo"...). */
extern const char *const ini_tmo_key[INI_TMO_COUNT];
extern const char *const ini_tmo_opt[INI_TMO_COUNT];

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
	/* What a new server needs to take the device over after a crash
	 * (ublk USER_RECOVERY, docs/ublk.md "Recovery"). */
	char     recovery[8];		/* "auto" | "manual" | "off" ("" = off) */
	pid_t    supervisor;		/* rblkctl's supervisor (auto), 0 = none */
	unsigned recoveries;		/* successful recoveries of this device */
	char     hostname[256];		/* as given, "" = this machine's */
	char     secret_file[1024];	/* "" = none */
	int      grace_ms;		/* --grace-ms, 0 = default */
	int      tmo_s[INI_TMO_COUNT];
	char     poll[12];		/* --poll: "event" | "busy" | "adaptive", "" = default */
	int      poll_us;		/* --poll-us, -1 = default */
	/* Multipath (docs/multipath.md): every --target as given, the
	 * first one first, and what queue 0 and the path monitor saw. */
	unsigned npaths;
	struct ini_path_state {
		char     spec[280];	/* [tcp:|rdma:]HOST[:PORT] as given */
		char     state[16];	/* live | connecting | failed | untried | other-volume */
		char     role[12];	/* optimized (in use) | reads (spread) | standby */
		char     probe[16];	/* standby: reachable | unreachable | "" */
		unsigned failures;
	} paths[RBLK_MAX_PATHS];
	int      failback_s;		/* --failback-delay, -1 = manual */
	int      read_spread;		/* --read-policy spread */
	unsigned failovers;		/* moves off a lost path, queue 0 */
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

/* 1 when pid exists and is not a zombie. */
int ini_pid_alive(pid_t pid);
/* 1 when s->pid is alive and still an rblk-initiator. */
int ini_state_alive(const struct ini_state *s);
/* 1 when s->supervisor is alive and still rblkctl's supervisor. */
int ini_state_supervised(const struct ini_state *s);

/* Process name of the supervisor (prctl PR_SET_NAME), for the check above. */
#define INI_SUPERVISOR_COMM	"rblk-supervise"

#endif /* RBLK_INITIATOR_STATE_H */
