/* SPDX-License-Identifier: MIT */
/*
 * Storage backends.  A backend is a const struct tgt_backend_ops in the
 * registry (backend.c); volumes pick one by name.  I/O is asynchronous and
 * runs on the reactor thread that owns the request: submit() starts it and
 * io->complete() is called later on the same thread, never from inside
 * submit().
 */
#ifndef RBLK_TARGET_BACKEND_H
#define RBLK_TARGET_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "offload.h"
#include "reactor.h"
#include "volume.h"

#define TGT_BACKEND_MAX		8

enum tgt_io_op {
	TGT_IO_READ = 1,
	TGT_IO_WRITE,
	TGT_IO_FLUSH,
	TGT_IO_DISCARD,
	TGT_IO_WRITE_ZEROES,
};

struct tgt_io {
	struct tgt_event ev;		/* backend-private completion plumbing */
	struct tgt_reactor *r;
	struct tgt_volume *vol;
	uint8_t  op;			/* enum tgt_io_op */
	bool     fua;			/* WRITE/WRITE_ZEROES: durable first */
	uint64_t offset;
	uint32_t length;
	void    *buf;			/* READ/WRITE data */
	int      buf_index;		/* io_uring fixed buffer, -1 = none */
	uint32_t epoch;			/* the session's vol->epoch at LOGIN */
	uint32_t login_gen;		/* the session's vol->login_gen */
	/* Called once on the reactor thread: res is 0 or -errno. */
	void   (*complete)(struct tgt_io *io, int res);
	/*
	 * Set by the backend, read by the caller after complete(): the
	 * fdatasync calls / io_uring FSYNC ops and the RWF_DSYNC write
	 * submissions it issued for this command (durability counters).
	 */
	uint16_t syncs;
	uint16_t dsync_writes;
	/* backend-private progress */
	uint32_t done_bytes;
	uint8_t  stage;
	void    *be_priv;
	struct tgt_offload_job off;	/* block-device DISCARD/WRITE_ZEROES */
	/* backend accounting (be_stats.h), set by tgt_backend_submit */
	uint64_t be_start_ns;
	void   (*be_caller_complete)(struct tgt_io *io, int res);
};

/* Backend flags */
#define TGT_BE_F_NO_STORE	(1u << 0)	/* no path: null */
/* No path: open_store reaches the store the config names (rbd). */
#define TGT_BE_F_OWN_STORE	(1u << 1)
/* The store is across a network: a volume whose store cannot be reached
 * when the target starts is logged and left out; the others serve. */
#define TGT_BE_F_REMOTE		(1u << 2)

struct json_object;

struct tgt_backend_ops {
	const char *name;
	unsigned flags;			/* TGT_BE_F_* */
	/*
	 * Optional, main thread at startup, after volume.c opened vol->fd
	 * buffered: may reopen it (O_DIRECT) or set vol->be_priv.  0 or -errno.
	 */
	int  (*open)(struct tgt_volume *vol);
	/* Optional, main thread at exit: undoes open (volume.c closes fd). */
	void (*close)(struct tgt_volume *vol);
	/*
	 * Optional, reactor thread, on first use by that reactor: creates the
	 * reactor-local context stored in *ctx.  0 or -errno.
	 */
	int  (*reactor_init)(struct tgt_reactor *r, void **ctx);
	/* Optional, reactor destroy (thread joined): frees ctx. */
	void (*reactor_exit)(struct tgt_reactor *r, void *ctx);
	/*
	 * Required, reactor thread: starts io.  Returns 0 when io->complete
	 * will be called, or -errno (complete will NOT be called).
	 */
	int  (*submit)(struct tgt_io *io, void *ctx);
	/*
	 * Required with TGT_BE_F_OWN_STORE, main or admin thread: opens the
	 * store cfg names and sets vol->size, block_size and the
	 * RBLK_VOL_F_* it can do (close() undoes it).  0 or -errno with a
	 * one-line message in err.
	 */
	int  (*open_store)(struct tgt_volume *vol,
			   const struct tgt_volume_cfg *cfg,
			   char *err, size_t errlen);
	/*
	 * Optional, admin thread: makes the store cfg names, size bytes,
	 * unless it exists; *created tells which.  0 or -errno + message.
	 */
	int  (*create_store)(const struct tgt_volume_cfg *cfg, uint64_t size,
			     bool *created, char *err, size_t errlen);
	/*
	 * Optional, admin thread: removes the store cfg names, which no open
	 * volume uses any more.  0 or -errno + message.
	 */
	int  (*remove_store)(const struct tgt_volume_cfg *cfg, char *err,
			     size_t errlen);
	/* Optional, admin thread: grows vol's open store to size bytes.
	 * 0 or -errno + message. */
	int  (*grow_store)(struct tgt_volume *vol, uint64_t size, char *err,
			   size_t errlen);
	/* Optional, admin thread: adds what volume show tells of the store
	 * to o (a JSON object). */
	void (*describe)(struct tgt_volume *vol, struct json_object *o);
};

/* Registry lookups.  tgt_backend_find returns NULL for unknown names. */
const struct tgt_backend_ops *tgt_backend_find(const char *name);
int tgt_backend_index(const struct tgt_backend_ops *be);
/* "uring, aio, null" for messages (static string). */
const char *tgt_backend_names(void);
/* Why a known backend is missing from this build (static string), or
 * NULL: "rbd" without librbd-dev at build time. */
const char *tgt_backend_not_built(const char *name);

/*
 * Submits io with vol's backend, creating the reactor context on first
 * use.  Same contract as ops->submit.
 */
int tgt_backend_submit(struct tgt_io *io);

extern const struct tgt_backend_ops tgt_backend_uring;
extern const struct tgt_backend_ops tgt_backend_aio;
extern const struct tgt_backend_ops tgt_backend_null;
extern const struct tgt_backend_ops tgt_backend_fault;
#ifdef RBLK_HAVE_RBD
extern const struct tgt_backend_ops tgt_backend_rbd;
#endif

/*
 * Helpers shared by backends (backend.c), reactor thread:
 * FLUSH/DISCARD/WRITE_ZEROES through the reactor's io_uring (fsync,
 * fallocate) or, for block devices, BLKDISCARD/BLKZEROOUT on the
 * reactor's offload thread (offload.h).  Same contract as ops->submit.
 */
int tgt_be_submit_sync_class(struct tgt_io *io);

/*
 * Switches vol to O_DIRECT unless its config says direct = no: reopens the
 * path with O_DIRECT, proves it with a one-block read and swaps vol->fd.
 * Returns 0 when vol now runs O_DIRECT, 1 when it stays buffered by
 * config, -errno when the store refused O_DIRECT (vol stays buffered).
 */
int tgt_be_try_direct(struct tgt_volume *vol);

/*
 * Reads the first 512 bytes of fd into an aligned buffer with preadv2
 * flags rwf (0, or RWF_NOWAIT to ask whether the file offers nonblocking
 * I/O): the probe that cannot harm data.  0 or -errno.
 */
int tgt_be_probe_read(int fd, int rwf);

#endif /* RBLK_TARGET_BACKEND_H */
