// SPDX-License-Identifier: MIT
/*
 * fio external ioengine "rblk": speaks the rblk protocol through
 * librblkclient, one queue (connection) per fio job.  Built against the fio
 * source matching the installed fio (tools/fio/README.md); loaded with
 *   fio --ioengine=/abs/path/rblk-fio.so --target=H --volume=V ...
 *
 * Flow: setup() (fio's parent process) logs in once to learn the volume
 * size and sets the file size from it; init() (the job's own process or
 * thread) opens the job's queue; queue() stashes io_us, commit() sends them,
 * getevents() reaps.  Sending in commit() means fio stamps issue_time
 * before the bytes go out, so latency includes the send.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fio.h"
#include "optgroup.h"

#include "rblk_client.h"

struct rblk_fio_options {
	void *pad;			/* fio stores td here */
	char *target;			/* the target's address */
	char *host;			/* the old spelling of target */
	char *port;
	char *volume;
	char *transport;
	char *hostname;
	char *secret_file;
	unsigned int queue_depth;
	unsigned int fua;
	unsigned int timeout;		/* s, like every rblk timeout */
	/* faults, in seconds (docs: tools/fio/README.md) */
	int keep_alive_tmo;
	int io_timeout;
	int reconnect_delay;
	int ctrl_loss_tmo;
	int fast_io_fail_tmo;
	/* Not options: target= parsed into its paths (check_opts). */
	struct rblk_path_spec specs[RBLK_MAX_PATHS];
	struct rblk_client_path paths[RBLK_MAX_PATHS];
	unsigned npaths;
};

struct rblk_fio_data {
	struct rblk_queue *q;
	struct rblk_volume_info info;
	unsigned depth;			/* granted by the target */
	int busy_noted;

	struct io_u **pending;		/* queued, not yet sent (commit sends) */
	unsigned npending;
	struct io_u **events;		/* reaped, handed out by event() */
	unsigned nevents;
	struct rblk_io **reaped;	/* scratch for rblk_queue_reap */
	struct io_u **failed;		/* failed in commit, reported by getevents */
	unsigned nfailed;
	unsigned slots;			/* size of each array above */
	int failed_told;		/* the queue's failure was logged */
};

static struct fio_option options[] = {
	{
		.name = "target",
		.lname = "rblk target address",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rblk_fio_options, target),
		.help = "Target address or name (as rblkctl attach --target); several, comma-separated, for multipath: [tcp:|rdma:]HOST[:PORT],...",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		/* Read like the host name this initiator logs in as; kept
		 * for old job files, with a warning. */
		.name = "host",
		.lname = "rblk target address (deprecated: use target)",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rblk_fio_options, host),
		.help = "Deprecated spelling of target",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "port",
		.lname = "rblk target port",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rblk_fio_options, port),
		.help = "Target port (default: 4420 for tcp, 4421 for rdma)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "volume",
		.lname = "rblk volume",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rblk_fio_options, volume),
		.help = "Volume name on the target",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "transport",
		.lname = "rblk transport",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rblk_fio_options, transport),
		.help = "tcp (default) or rdma",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "hostname",
		.lname = "rblk host name",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rblk_fio_options, hostname),
		.help = "Name this initiator logs in as (default: gethostname)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "secret_file",
		.lname = "rblk secret file",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct rblk_fio_options, secret_file),
		.help = "File holding the volume's shared secret",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "queue_depth",
		.lname = "rblk queue depth",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rblk_fio_options, queue_depth),
		.minval = 0,
		.maxval = RBLK_MAX_QUEUE_DEPTH,
		.def = "0",
		.help = "Queue depth asked from the target (0: fio's iodepth)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "fua",
		.lname = "rblk FUA writes",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct rblk_fio_options, fua),
		.def = "0",
		.help = "Send writes with Force Unit Access",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		/* Seconds, as every other rblk timeout; at most an hour, so
		 * that a value in ms (what it was once) is refused, not an
		 * hour-long wait. */
		.name = "rblk_timeout",
		.lname = "rblk connect timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rblk_fio_options, timeout),
		.minval = 1,
		.maxval = 3600,
		.def = "10",
		.help = "Seconds to connect and log in (also bounds each reconnect attempt)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "keep_alive_tmo",
		.lname = "rblk keep-alive timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rblk_fio_options, keep_alive_tmo),
		.minval = -1,
		.def = "5",
		.help = "Seconds without any PDU from the target, a keep-alive (sent after a third of them) unanswered, before the connection counts as dead (0 or -1: no keep-alive)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "io_timeout",
		.lname = "rblk I/O timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rblk_fio_options, io_timeout),
		.minval = -1,
		.def = "30",
		.help = "Seconds a command may go unanswered before its connection is torn down and rebuilt (0 or -1: never)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "reconnect_delay",
		.lname = "rblk reconnect delay",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rblk_fio_options, reconnect_delay),
		.minval = 1,
		.def = "2",
		.help = "Seconds between reconnect attempts",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "ctrl_loss_tmo",
		.lname = "rblk controller loss timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rblk_fio_options, ctrl_loss_tmo),
		.minval = -1,
		.def = "600",
		.help = "Seconds to keep reconnecting before held and new I/O fail (-1: forever, 0: never reconnect)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "fast_io_fail_tmo",
		.lname = "rblk fast I/O fail timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct rblk_fio_options, fast_io_fail_tmo),
		.minval = -1,
		.def = "-1",
		.help = "Seconds disconnected before I/O fails while reconnecting goes on (-1: off)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = NULL,
	},
};

/*
 * fio's signal handler (SIGINT, SIGTERM, in whichever fio process got
 * it) marks the job to terminate, and so does the end of --runtime; the
 * client library asks this while it waits, so a job blocked on a lost
 * target ends within a second instead of at ctrl_loss_tmo.
 */
static int job_stopping(void *arg)
{
	struct thread_data *td = arg;

	return td->terminate;
}

static void fill_client_opts(struct thread_data *td, struct rblk_client_opts *co,
			     unsigned depth)
{
	struct rblk_fio_options *o = td->eo;

	*co = (struct rblk_client_opts) {
		.host = o->paths[0].host,
		.port = o->paths[0].port,
		.transport = o->paths[0].transport,
		.alt_paths = o->paths + 1,
		.n_alt_paths = o->npaths - 1,
		.volume = o->volume,
		.hostname = o->hostname,
		.secret_file = o->secret_file,
		.queue_id = (td->thread_number - 1) & 0xffff,
		.queue_depth = depth,
		.timeout_ms = rblk_tmo_from_sec(o->timeout),
		.keep_alive_tmo_ms = rblk_tmo_from_sec(o->keep_alive_tmo),
		.io_timeout_ms = rblk_tmo_from_sec(o->io_timeout),
		.reconnect_delay_ms = rblk_tmo_from_sec(o->reconnect_delay),
		.ctrl_loss_tmo_ms = rblk_tmo_from_sec(o->ctrl_loss_tmo),
		.fast_io_fail_tmo_ms = rblk_tmo_from_sec(o->fast_io_fail_tmo),
		.stop = job_stopping,
		.stop_arg = td,
	};
}

/* target=PATH[,PATH...] (multipath), each [tcp:|rdma:]HOST[:PORT]; a
 * path without a transport or port takes transport= and port=. */
static int parse_paths(struct rblk_fio_options *o)
{
	char list[1024], *save = NULL, *tok, err[256];

	snprintf(list, sizeof(list), "%s", o->target);
	o->npaths = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct rblk_path_spec *sp = &o->specs[o->npaths];

		if (o->npaths == RBLK_MAX_PATHS) {
			log_err("rblk: at most %d paths in target=\n", RBLK_MAX_PATHS);
			return 1;
		}
		if (rblk_path_parse(tok, sp, err, sizeof(err))) {
			log_err("rblk: %s\n", err);
			return 1;
		}
		o->paths[o->npaths++] = (struct rblk_client_path) {
			.transport = sp->transport[0] ? sp->transport : o->transport,
			.host = sp->host,
			.port = sp->port[0] ? sp->port : o->port,
		};
	}
	if (!o->npaths) {
		log_err("rblk: target= names no path\n");
		return 1;
	}
	return 0;
}

static int check_opts(struct thread_data *td)
{
	struct rblk_fio_options *o = td->eo;

	if (o->host && *o->host) {
		if (o->target && *o->target) {
			log_err("rblk: give target= only (host= is its old spelling)\n");
			return 1;
		}
		log_err("rblk: host= is deprecated: it names the target, use target=%s "
			"(hostname= is the name this host logs in as)\n", o->host);
		o->target = o->host;
		o->host = NULL;
	}
	if (!o->target || !*o->target) {
		log_err("rblk: the target option is required (--target=ADDRESS)\n");
		return 1;
	}
	if (!o->volume || !*o->volume) {
		log_err("rblk: the volume option is required (--volume=NAME)\n");
		return 1;
	}
	return parse_paths(o);
}

/*
 * librdmacm opens each RDMA device once per process and caches it; a forked
 * fio job cannot use a device context its parent opened (uverbs refuses a
 * file opened under other credentials: "changed security contexts").  So
 * over RDMA the parent learns the volume size from a short-lived child and
 * never touches librdmacm itself.
 */
static int open_info(struct rblk_client_opts *co, struct rblk_volume_info *info,
		     char *err, size_t errlen)
{
	struct {
		int ret;
		struct rblk_volume_info info;
		char err[256];
	} m;
	struct rblk_queue *q;
	int fds[2], status;
	pid_t pid;

	bool rdma = co->transport && !strcmp(co->transport, "rdma");

	for (unsigned i = 0; i < co->n_alt_paths; i++)
		rdma |= co->alt_paths[i].transport && !strcmp(co->alt_paths[i].transport, "rdma");
	if (!rdma) {
		int ret = rblk_queue_open(co, &q, info, err, errlen);

		if (!ret)
			rblk_queue_close(q);
		return ret;
	}
	if (pipe(fds) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		memset(&m, 0, sizeof(m));
		m.ret = rblk_queue_open(co, &q, &m.info, m.err, sizeof(m.err));
		if (!m.ret)
			rblk_queue_close(q);
		if (write(fds[1], &m, sizeof(m)) != (ssize_t)sizeof(m))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &m, sizeof(m)) != (ssize_t)sizeof(m)) {
		m.ret = -EIO;
		snprintf(m.err, sizeof(m.err), "volume probe process died");
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	snprintf(err, errlen, "%s", m.err);
	*info = m.info;
	return m.ret;
}

/* Parent process: learn the volume size so fio can size the job. */
static int rblk_fio_setup(struct thread_data *td)
{
	struct rblk_volume_info info;
	struct rblk_client_opts co;
	struct fio_file *f;
	char err[256];
	unsigned i;
	int ret;

	if (check_opts(td))
		return 1;
	fill_client_opts(td, &co, 1);
	ret = open_info(&co, &info, err, sizeof(err));
	if (ret) {
		log_err("rblk: %s\n", err);
		td_verror(td, -ret, "rblk login");
		return 1;
	}

	/* No local file stands behind the volume: name one after it. */
	if (!td->files_index) {
		if (add_file(td, co.volume, 0, 0) < 0)
			return 1;
		td->o.nr_files = td->o.nr_files ? : 1;
		td->o.open_files++;
	}
	for_each_file(td, f, i)
		f->real_file_size = info.size;
	return 0;
}

static void free_data(struct rblk_fio_data *d)
{
	free(d->pending);
	free(d->events);
	free(d->reaped);
	free(d->failed);
	free(d);
}

/* The job's process: its own connection. */
static int rblk_fio_init(struct thread_data *td)
{
	struct rblk_fio_options *o = td->eo;
	unsigned want = o->queue_depth ? o->queue_depth : td->o.iodepth;
	struct rblk_client_opts co;
	struct rblk_fio_data *d;
	char err[256];
	int ret;

	if (check_opts(td))
		return 1;
	d = calloc(1, sizeof(*d));
	if (!d)
		return 1;
	d->slots = td->o.iodepth;
	d->pending = calloc(d->slots, sizeof(*d->pending));
	d->events = calloc(d->slots, sizeof(*d->events));
	d->reaped = calloc(d->slots, sizeof(*d->reaped));
	d->failed = calloc(d->slots, sizeof(*d->failed));
	if (!d->pending || !d->events || !d->reaped || !d->failed) {
		log_err("rblk: out of memory\n");
		goto out_free_data;
	}
	if (want > RBLK_MAX_QUEUE_DEPTH)
		want = RBLK_MAX_QUEUE_DEPTH;
	fill_client_opts(td, &co, want);
	ret = rblk_queue_open(&co, &d->q, &d->info, err, sizeof(err));
	if (ret) {
		log_err("rblk: %s\n", err);
		td_verror(td, -ret, "rblk login");
		goto out_free_data;
	}
	d->depth = d->info.queue_depth;
	if (td_max_bs(td) > d->info.max_io) {
		log_err("rblk: block size %llu is above the target's max I/O %u\n",
			td_max_bs(td), d->info.max_io);
		goto out_close_queue;
	}
	/* Trims are at most the trim bs (itself at most max_io), so a limit
	 * check here is all the splitting fio needs. */
	if (td_trim(td) && td->o.max_bs[DDIR_TRIM] > d->info.max_discard) {
		log_err("rblk: trim size %llu is above the target's max DISCARD %u%s\n",
			td->o.max_bs[DDIR_TRIM], d->info.max_discard,
			d->info.max_discard ? "" : " (the volume has no DISCARD)");
		goto out_close_queue;
	}
	if (td_min_bs(td) % d->info.block_size) {
		log_err("rblk: block size %llu is not a multiple of the volume's %u-byte blocks\n",
			td_min_bs(td), d->info.block_size);
		goto out_close_queue;
	}
	td->io_ops_data = d;
	return 0;

out_close_queue:
	rblk_queue_close(d->q);
out_free_data:
	free_data(d);
	return 1;
}

/* RDMA needs the I/O buffers registered; fio allocates them after init. */
static int rblk_fio_post_init(struct thread_data *td)
{
	struct rblk_fio_data *d = td->io_ops_data;
	int ret;

	if (!td->orig_buffer || !td->orig_buffer_size)
		return 0;
	ret = rblk_queue_reg_buffer(d->q, td->orig_buffer, td->orig_buffer_size);
	if (ret) {
		log_err("rblk: registering %zu bytes of I/O buffers: %s\n",
			td->orig_buffer_size, strerror(-ret));
		return 1;
	}
	return 0;
}

static void rblk_fio_cleanup(struct thread_data *td)
{
	struct rblk_fio_data *d = td->io_ops_data;

	if (!d)
		return;
	rblk_queue_close(d->q);
	free_data(d);
	td->io_ops_data = NULL;
}

static int rblk_fio_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct rblk_io *io = calloc(1, sizeof(*io));

	if (!io)
		return 1;
	io->priv = io_u;
	io_u->engine_data = io;
	return 0;
}

static void rblk_fio_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	free(io_u->engine_data);
	io_u->engine_data = NULL;
}

static enum fio_q_status rblk_fio_queue(struct thread_data *td, struct io_u *io_u)
{
	struct rblk_fio_options *o = td->eo;
	struct rblk_fio_data *d = td->io_ops_data;
	struct rblk_io *io = io_u->engine_data;

	fio_ro_check(td, io_u);

	if (d->npending + rblk_queue_inflight(d->q) >= d->depth) {
		if (!d->busy_noted) {
			log_info("rblk: iodepth %u is above the depth %u the target granted; extra I/O waits\n",
				 td->o.iodepth, d->depth);
			d->busy_noted = 1;
		}
		return FIO_Q_BUSY;
	}
	io->flags = 0;
	io->buf = NULL;
	io->offset = io_u->offset;
	io->length = (uint32_t)io_u->xfer_buflen;
	switch (io_u->ddir) {
	case DDIR_READ:
		io->opcode = RBLK_OP_READ;
		io->buf = io_u->xfer_buf;
		break;
	case DDIR_WRITE:
		io->opcode = RBLK_OP_WRITE;
		io->buf = io_u->xfer_buf;
		if (o->fua)
			io->flags = RBLK_CMD_F_FUA;
		break;
	case DDIR_TRIM:
		io->opcode = RBLK_OP_DISCARD;
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
	case DDIR_SYNC_FILE_RANGE:
		/* The volume has one cache: any sync flushes all of it. */
		io->opcode = RBLK_OP_FLUSH;
		io->offset = 0;
		io->length = 0;
		break;
	default:
		io_u->error = EINVAL;
		return FIO_Q_COMPLETED;
	}
	if (io_u->xfer_buflen > UINT32_MAX) {
		io_u->error = EINVAL;
		return FIO_Q_COMPLETED;
	}
	d->pending[d->npending++] = io_u;
	return FIO_Q_QUEUED;
}

static int rblk_fio_commit(struct thread_data *td)
{
	struct rblk_fio_data *d = td->io_ops_data;

	for (unsigned i = 0; i < d->npending; i++) {
		struct io_u *io_u = d->pending[i];
		int ret = rblk_queue_submit_more(d->q, io_u->engine_data);

		if (ret) {
			/* Already QUEUED as far as fio knows: report through
			 * getevents like any completion. */
			io_u->error = -ret == ENOTCONN ? EIO : -ret;
			d->failed[d->nfailed++] = io_u;
		}
	}
	d->npending = 0;
	rblk_queue_flush(d->q);	/* one doorbell for the batch */
	return 0;
}

static int to_ms(const struct timespec *t)
{
	if (!t)
		return -1;
	return (int)(t->tv_sec * 1000 + (t->tv_nsec + 999999) / 1000000);
}

/* Says once, in fio's own log, why the job's queue gave up. */
static void note_failed(struct rblk_fio_data *d)
{
	struct rblk_queue_status st;

	if (d->failed_told)
		return;
	rblk_queue_status(d->q, &st);
	if (st.state != RBLK_QUEUE_FAILED)
		return;
	d->failed_told = 1;
	log_err("rblk: the connection to the target failed for good: %s; failing the job's I/O\n",
		st.reason);
}

static int rblk_fio_getevents(struct thread_data *td, unsigned int min,
			      unsigned int max, const struct timespec *t)
{
	struct rblk_fio_data *d = td->io_ops_data;
	unsigned want_min;
	int n;

	d->nevents = 0;
	while (d->nfailed && d->nevents < max)
		d->events[d->nevents++] = d->failed[--d->nfailed];
	if (d->nevents >= max || !rblk_queue_inflight(d->q))
		return (int)d->nevents;

	want_min = min > d->nevents ? min - d->nevents : 0;
	n = rblk_queue_reap(d->q, d->reaped, want_min, max - d->nevents, to_ms(t));
	note_failed(d);
	if (n < 0) {
		if (d->nevents)
			return (int)d->nevents;
		td_verror(td, -n, "rblk reap");
		return n;
	}
	for (int i = 0; i < n; i++) {
		struct rblk_io *io = d->reaped[i];
		struct io_u *io_u = io->priv;

		if (io->status == RBLK_S_OK) {
			io_u->error = 0;
			io_u->resid = 0;
		} else {
			io_u->error = io->error ? -io->error : EIO;
			io_u->resid = io_u->xfer_buflen;
		}
		d->events[d->nevents++] = io_u;
	}
	return (int)d->nevents;
}

static struct io_u *rblk_fio_event(struct thread_data *td, int event)
{
	struct rblk_fio_data *d = td->io_ops_data;

	return d->events[event];
}

/* Called again for the verify phase: nothing to (re)open, the queue lives
 * from init to cleanup. */
static int rblk_fio_open_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int rblk_fio_close_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

/* Never delete a local file that happens to share the volume's name. */
static int rblk_fio_unlink_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int rblk_fio_invalidate(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

struct ioengine_ops ioengine = {
	.name = "rblk",
	.version = FIO_IOOPS_VERSION,
	.flags = FIO_DISKLESSIO | FIO_NOEXTEND | FIO_NODISKUTIL,
	.setup = rblk_fio_setup,
	.init = rblk_fio_init,
	.post_init = rblk_fio_post_init,
	.cleanup = rblk_fio_cleanup,
	.queue = rblk_fio_queue,
	.commit = rblk_fio_commit,
	.getevents = rblk_fio_getevents,
	.event = rblk_fio_event,
	.io_u_init = rblk_fio_io_u_init,
	.io_u_free = rblk_fio_io_u_free,
	.open_file = rblk_fio_open_file,
	.close_file = rblk_fio_close_file,
	.unlink_file = rblk_fio_unlink_file,
	.invalidate = rblk_fio_invalidate,
	.options = options,
	.option_struct_size = sizeof(struct rblk_fio_options),
};
