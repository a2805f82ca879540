// SPDX-License-Identifier: MIT
/*
 * rblk-initiator: serves one remote volume as /dev/ublkbN.
 *
 * Start-up order matters (docs/ublk.md, "Start-up order", has why):
 *   connect every queue first (a bad volume or target changes nothing),
 *   ADD_DEV, SET_PARAMS, open /dev/ublkcN, build the queues, start their
 *   threads (they FETCH every tag), then START_DEV, which blocks until all
 *   tags were fetched.  Shutdown (SIGTERM/SIGINT): the queues get a grace
 *   period for in-flight I/O, STOP_DEV, join, close /dev/ublkcN, DEL_DEV
 *   (which waits for that close).
 *
 * --recover N takes over device N after its server died (USER_RECOVERY):
 * the same connect-first order, then START_USER_RECOVERY instead of
 * ADD_DEV + SET_PARAMS, and END_USER_RECOVERY instead of START_DEV.
 *
 * SIGUSR2 (rblkctl restart) hands the device over to the next server
 * instead of removing it: hand_over.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "disk_sched.h"
#include "log.h"
#include "opts.h"
#include "path_monitor.h"
#include "queue_cpus.h"
#include "rblk_client.h"
#include "recover.h"
#include "state.h"
#include "ublk_ctrl.h"
#include "ublk_params.h"
#include "ublk_queue.h"

#define INI_JOIN_MS		15000
#define INI_QUIESCE_WAIT_MS	10000	/* a killed server's device quiesces in ~60 ms */
#define INI_RECOVER_START_MS	30000	/* START_USER_RECOVERY -EBUSY retries */

struct ini_dev {
	struct ini_opts o;
	struct ini_ctrl *ctrl;
	struct ublksrv_ctrl_dev_info info;
	struct rblk_volume_info vi;
	struct rblk_queue *conns[INI_MAX_QUEUES];
	struct rblk_queue *readers[INI_MAX_QUEUES];	/* --read-policy spread */
	struct ini_queue *queues[INI_MAX_QUEUES];
	unsigned nq;
	int added;
	int cdev_fd;
	int exit_efd;
	struct ini_state st;
	unsigned reconnects_written;
	struct ini_state old;		/* --recover: the dead server's state */
	/* Multipath: every path (the first from host/port), the monitor of
	 * the standby ones, the path queue 0 was on at the last look. */
	struct rblk_client_path paths[RBLK_MAX_PATHS];
	unsigned npaths;
	struct ini_monitor *mon;
	int active_path;
	int64_t failback_asked;		/* ms, when failback was last asked */
	int64_t reader_moved[INI_MAX_QUEUES];	/* ms, a reader's last move */
	int64_t reader_shared[INI_MAX_QUEUES];	/* ms, since a reader is on the
						 * writers' path (0: it is not) */
	uint64_t size_not_followed;	/* a growth the kernel could not take */
};

/* One line to whoever started us (rblkctl), then the pipe is closed. */
static void report(struct ini_dev *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void report(struct ini_dev *d, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	if (strncmp(line, "ERR ", 4) == 0)
		rblk_err("%s", line + 4);
	if (d->o.ready_fd < 0)
		return;
	line[n++] = '\n';
	if (write(d->o.ready_fd, line, n) < 0)
		rblk_warn("ready fd: %s", strerror(errno));
	close(d->o.ready_fd);
	d->o.ready_fd = -1;
}


/*
 * A server killed with SIGKILL leaves its ublk device behind (stopped by
 * the kernel, but still holding its id and /dev/ublkcN): remove it, unless
 * a live process still serves it.
 */
static int cleanup_dev(int id)
{
	struct ublksrv_ctrl_dev_info info;
	struct ini_ctrl *c;
	int ret;

	ret = ini_ctrl_open(&c);
	if (ret) {
		fprintf(stderr, "rblk-initiator: %s: %s\n", INI_UBLK_CONTROL, strerror(-ret));
		return 1;
	}
	ret = ini_ctrl_get_dev_info(c, id, &info);
	if (ret == -ENODEV || ret == -ENOENT) {
		ini_ctrl_close(c);
		return 0;	/* already gone */
	}
	if (ret) {
		fprintf(stderr, "rblk-initiator: ublk device %d: %s\n", id, strerror(-ret));
		goto out_close;
	}
	if (info.ublksrv_pid > 0 && kill(info.ublksrv_pid, 0) == 0 &&
	    info.state == UBLK_S_DEV_LIVE) {
		fprintf(stderr, "rblk-initiator: ublk device %d is served by pid %d\n",
			id, info.ublksrv_pid);
		ret = -EBUSY;
		goto out_close;
	}
	ini_ctrl_stop_dev(c, id);
	ret = ini_ctrl_del_dev(c, id);
	if (ret)
		fprintf(stderr, "rblk-initiator: removing ublk device %d: %s\n", id, strerror(-ret));
out_close:
	ini_ctrl_close(c);
	return ret ? 1 : 0;
}

/* ---- start-up --------------------------------------------------------- */

/* The paths of every --target: a prefix names the transport, else
 * --transport applies. */
static void build_paths(struct ini_dev *d)
{
	d->npaths = d->o.ntargets ? d->o.ntargets : 1;
	for (unsigned i = 0; i < d->o.ntargets; i++) {
		const struct rblk_path_spec *t = &d->o.targets[i];

		d->paths[i] = (struct rblk_client_path) {
			.transport = t->transport[0] ? t->transport : d->o.transport,
			.host = t->host,
			.port = t->port[0] ? t->port : NULL,
		};
	}
}

static struct rblk_client_opts client_opts(struct ini_dev *d)
{
	return (struct rblk_client_opts) {
		.host = d->o.host,
		.port = d->o.port,
		.volume = d->o.volume,
		.hostname = d->o.hostname,
		.secret_file = d->o.secret_file,
		.queue_depth = d->o.depth,
		.keep_alive_tmo_ms = d->o.ka_ms,
		.io_timeout_ms = d->o.io_ms,
		.reconnect_delay_ms = d->o.delay_ms,
		.ctrl_loss_tmo_ms = d->o.loss_ms,
		.fast_io_fail_tmo_ms = d->o.fail_ms,
		.transport = d->paths[0].transport,
		.alt_paths = d->paths + 1,
		.n_alt_paths = d->npaths - 1,
	};
}

/* The path queue i's reader starts on: spread over the paths but the
 * first, which the writers use. */
static unsigned reader_home(const struct ini_dev *d, unsigned i)
{
	return 1 + i % (d->npaths - 1);
}

/* A connection after queue 0's: the volume must still have its geometry,
 * and the device's depth is the least any connection was granted. */
static int add_connection_geometry(struct ini_dev *d, const struct rblk_volume_info *vi)
{
	if (vi->size != d->vi.size || vi->block_size != d->vi.block_size)
		return report(d, "ERR volume changed while connecting"), -EIO;
	if (vi->queue_depth < d->vi.queue_depth)
		d->vi.queue_depth = vi->queue_depth;
	return 0;
}

/*
 * --read-policy spread: a second connection per queue, on another path
 * first, to the volume queue 0 found (docs/multipath.md, "Active/active
 * reads").  It may end on the writers' path when the others are down.
 */
static int connect_readers(struct ini_dev *d)
{
	struct rblk_client_opts co = client_opts(d);
	struct rblk_volume_info vi;
	char why[256];
	int ret;

	if (!d->o.read_spread)
		return 0;
	if (d->npaths < 2) {
		rblk_warn("--read-policy spread with one path: every read goes to it");
		return 0;
	}
	co.expect_uuid = d->vi.uuid;
	for (unsigned i = 0; i < d->nq; i++) {
		co.queue_id = i;
		co.first_path = reader_home(d, i);
		why[0] = 0;
		ret = rblk_queue_open(&co, &d->readers[i], &vi, why, sizeof(why));
		if (ret) {
			report(d, "ERR reader of queue %u: %s (volume %s)", i,
			       why[0] ? why : strerror(-ret), d->o.volume);
			return ret;
		}
		ret = add_connection_geometry(d, &vi);
		if (ret)
			return ret;
	}
	return 0;
}

static int connect_queues(struct ini_dev *d)
{
	struct rblk_client_opts co = client_opts(d);
	struct rblk_volume_info vi;
	char why[256];
	unsigned i;
	int ret;

	for (i = 0; i < d->nq; i++) {
		co.queue_id = i;
		why[0] = 0;
		ret = rblk_queue_open(&co, &d->conns[i], &vi, why, sizeof(why));
		if (ret) {
			/* The library's reason names the errno, and the last
			 * path tried: with several, every one failed. */
			report(d, "ERR %s (volume %s at %s, %s%s)",
			       why[0] ? why : strerror(-ret), d->o.volume,
			       d->paths[0].host, d->paths[0].transport,
			       d->npaths > 1 ? "; the other paths failed too" : "");
			return ret;
		}
		if (i == 0) {
			d->vi = vi;
			/* Every other queue, on any path, must find this one. */
			co.expect_uuid = d->vi.uuid;
			continue;
		}
		ret = add_connection_geometry(d, &vi);
		if (ret)
			return ret;
	}
	ret = connect_readers(d);
	if (ret)
		return ret;
	if (ini_ublk_check_volume(&d->vi, why, sizeof(why))) {
		report(d, "ERR volume %s cannot be a ublk device: %s", d->o.volume, why);
		return -EINVAL;
	}
	return 0;
}

static int add_device(struct ini_dev *d)
{
	struct ublksrv_ctrl_dev_info *info = &d->info;
	struct ublk_params p;
	unsigned depth = d->o.depth < d->vi.queue_depth ? d->o.depth : d->vi.queue_depth;
	int recovery = strcmp(d->o.recovery, "off") != 0;
	int ret;

	memset(info, 0, sizeof(*info));
	info->nr_hw_queues = d->nq;
	info->queue_depth = depth;
	info->max_io_buf_bytes = ini_ublk_io_buf_bytes(&d->vi);
	info->dev_id = d->o.dev_id < 0 ? (uint32_t)-1 : (uint32_t)d->o.dev_id;
	info->ublksrv_pid = getpid();
	info->flags = ini_ctrl_features(d->ctrl) & UBLK_F_CMD_IOCTL_ENCODE;
	if (recovery) {
		/* In 6.1+; a kernel that cannot tell (no GET_FEATURES) gets them
		 * anyway and drops what it does not know. */
		uint64_t want = UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE;
		uint64_t feat = ini_ctrl_features(d->ctrl);

		info->flags |= feat ? feat & want : want;
	}
	/* 7.0+: batch commands where the kernel says it has them; a kernel
	 * without them drops the flag, and info says which it is. */
	if (!d->o.batch_io_off)
		info->flags |= ini_ctrl_features(d->ctrl) & UBLK_F_BATCH_IO;
	/* 6.16+: rblkctl restart hands the device over gracefully
	 * (hand_over), where the kernel has it.  Not with batch I/O: on
	 * 7.3.4 QUIESCE_DEV leaves a batch device failing every request
	 * the next server is sent (EIO; suite-ublk restart-in-place), while
	 * a hand-over without it passes there. */
	if (recovery && !(info->flags & UBLK_F_BATCH_IO))
		info->flags |= ini_ctrl_features(d->ctrl) & UBLK_F_QUIESCE;
	ret = ini_ctrl_add_dev(d->ctrl, info);
	if (ret) {
		report(d, "ERR ublk ADD_DEV: %s", strerror(-ret));
		return ret;
	}
	d->added = 1;
	if (recovery && !(info->flags & UBLK_F_USER_RECOVERY)) {
		rblk_warn("this kernel has no ublk USER_RECOVERY: the device will not survive a crash of this process");
		d->o.recovery = "off";
	}
	/* The kernel rewrote info: queues and buffer size are what it says. */
	if (info->nr_hw_queues < d->nq) {
		for (unsigned i = info->nr_hw_queues; i < d->nq; i++) {
			rblk_queue_close(d->conns[i]);
			d->conns[i] = NULL;
			rblk_queue_close(d->readers[i]);
			d->readers[i] = NULL;
		}
		d->nq = info->nr_hw_queues;
	}
	ret = ini_ublk_build_params(&d->vi, info->max_io_buf_bytes, &p);
	if (ret) {
		report(d, "ERR cannot describe volume to ublk (buffer %u bytes)",
		       info->max_io_buf_bytes);
		return ret;
	}
	ret = ini_ctrl_set_params(d->ctrl, info->dev_id, &p);
	if (ret) {
		report(d, "ERR ublk SET_PARAMS: %s", strerror(-ret));
		return ret;
	}
	rblk_info("ublk device %u: %u queues x %u tags, %u-byte buffers, %llu bytes, block %u, flags 0x%x, %s commands",
		  info->dev_id, info->nr_hw_queues, info->queue_depth,
		  info->max_io_buf_bytes, (unsigned long long)d->vi.size,
		  d->vi.block_size, d->vi.vol_flags,
		  info->flags & UBLK_F_BATCH_IO ? "batch" : "per-tag");
	return 0;
}

static int open_cdev(struct ini_dev *d)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/dev/ublkc%u", d->info.dev_id);
	/* devtmpfs creates it at once; udev may still be adjusting it. */
	for (i = 0; i < 100; i++) {
		d->cdev_fd = open(path, O_RDWR | O_CLOEXEC);
		if (d->cdev_fd >= 0)
			return 0;
		if (errno != ENOENT && errno != EACCES)
			break;
		usleep(20000);
	}
	report(d, "ERR open %s: %s", path, strerror(errno));
	return -errno;
}

/*
 * Where queue q_id's thread runs (--pin-queues on): the CPUs whose
 * requests the kernel sends it, of those the process may use.  1 with
 * *cpus set, 0 to leave the thread to the scheduler.
 */
static int queue_cpus(struct ini_dev *d, unsigned q_id, const cpu_set_t *allowed,
		      cpu_set_t *cpus)
{
	cpu_set_t queue_set;
	char list[128];
	int ret;

	ret = ini_ctrl_queue_affinity(d->ctrl, d->info.dev_id, (uint16_t)q_id, &queue_set);
	if (ret) {
		rblk_warn("queue %u: ublk GET_QUEUE_AFFINITY: %s: its thread runs on any CPU",
			  q_id, strerror(-ret));
		return 0;
	}
	if (!ini_queue_cpus(&queue_set, allowed, cpus))
		return 0;
	ini_cpus_format(cpus, list, sizeof(list));
	rblk_info("queue %u: its thread runs on CPUs %s, where its requests come from",
		  q_id, list);
	return 1;
}

static int create_queues(struct ini_dev *d)
{
	struct ini_queue_cfg cfg = {
		.dev_id = d->info.dev_id,
		.depth = d->info.queue_depth,
		.buf_bytes = d->info.max_io_buf_bytes,
		.cdev_fd = d->cdev_fd,
		.ioctl_encode = !!(d->info.flags & UBLK_F_CMD_IOCTL_ENCODE),
		.batch = !!(d->info.flags & UBLK_F_BATCH_IO),
		.exit_efd = d->exit_efd,
		.poll = d->o.poll,
		.poll_us = d->o.poll_us,
	};
	cpu_set_t allowed;
	unsigned i;
	int ret;

	if (!d->o.pin_queues || sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);	/* no pinning */
	for (i = 0; i < d->nq; i++) {
		cfg.q_id = i;
		cfg.pin = d->o.pin_queues && queue_cpus(d, i, &allowed, &cfg.cpus);
		cfg.conn = d->conns[i];
		cfg.read_conn = d->readers[i];
		d->conns[i] = d->readers[i] = NULL;	/* the queue owns them now */
		ret = ini_queue_create(&cfg, &d->queues[i]);
		if (ret) {
			report(d, "ERR setting up queue %u: %s", i, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static void fill_state(struct ini_dev *d, const char *state)
{
	struct ini_state *s = &d->st;

	memset(s, 0, sizeof(*s));
	s->dev_id = d->info.dev_id;
	s->pid = getpid();
	snprintf(s->target, sizeof(s->target), "%s", d->o.host);
	snprintf(s->port, sizeof(s->port), "%s", d->o.port ? d->o.port : "");
	snprintf(s->volume, sizeof(s->volume), "%s", d->o.volume);
	snprintf(s->transport, sizeof(s->transport), "%s", d->paths[0].transport);
	s->queues = d->nq;
	s->depth = d->info.queue_depth;
	s->size = d->vi.size;
	s->block_size = d->vi.block_size;
	snprintf(s->state, sizeof(s->state), "%s", state);
	snprintf(s->log, sizeof(s->log), "%s", d->o.log_path ? d->o.log_path : "");
	s->started = time(NULL);
	snprintf(s->recovery, sizeof(s->recovery), "%s", d->o.recovery);
	s->supervisor = d->o.supervisor;
	snprintf(s->hostname, sizeof(s->hostname), "%s", d->o.hostname ? d->o.hostname : "");
	snprintf(s->secret_file, sizeof(s->secret_file), "%s",
		 d->o.secret_file ? d->o.secret_file : "");
	s->grace_ms = d->o.grace_ms;
	memcpy(s->tmo_s, d->o.tmo_s, sizeof(s->tmo_s));
	snprintf(s->poll, sizeof(s->poll), "%s", rblk_poll_mode_str(d->o.poll));
	s->poll_us = (int)d->o.poll_us;
	/* Each path with its transport spelled out: a server started by
	 * rblkctl recover gets the same paths whatever --transport says. */
	s->npaths = d->o.ntargets;
	for (unsigned i = 0; i < d->o.ntargets; i++) {
		const struct rblk_client_path *p = &d->paths[i];
		bool v6 = strchr(p->host, ':') != NULL;

		snprintf(s->paths[i].spec, sizeof(s->paths[i].spec), "%s:%s%s%s%s%s",
			 p->transport, v6 ? "[" : "", p->host, v6 ? "]" : "",
			 p->port ? ":" : "", p->port ? p->port : "");
	}
	s->failback_s = d->o.failback_s;
	s->read_spread = d->o.read_spread;
	if (d->o.recover_dev >= 0 && d->old.dev_id == (int)d->info.dev_id) {
		/* the same attachment, served by a new process */
		s->started = d->old.started;
		s->recoveries = d->old.recoveries;
	}
}

/* A new disk's I/O scheduler to none (disk_sched.c says why); a disk
 * that cannot is slower, not broken. */
static void no_scheduler(unsigned dev_id)
{
	char path[64], was[32];
	int ret;

	snprintf(path, sizeof(path), "/sys/block/ublkb%u/queue/scheduler", dev_id);
	ret = ini_disk_sched_none(path, was, sizeof(was));
	if (ret < 0)
		rblk_warn("%s: cannot set it to none: %s; the kernel's choice stays",
			  path, strerror(-ret));
	else if (ret > 0)
		rblk_info("/dev/ublkb%u: I/O scheduler none (the kernel gave it %s)",
			  dev_id, was);
}

static void set_state(struct ini_dev *d, const char *state)
{
	int ret;

	if (!strcmp(d->st.state, state) && d->st.reconnects == d->reconnects_written)
		return;
	if (strcmp(d->st.state, state)) {
		snprintf(d->st.state, sizeof(d->st.state), "%s", state);
		d->st.state_since = time(NULL);
	}
	d->reconnects_written = d->st.reconnects;
	ret = ini_state_write(&d->st);
	if (ret)
		rblk_warn("state file in %s: %s", ini_state_dir(), strerror(-ret));
}

/*
 * --recover N: device N exists and is quiesced (its server died).  Connect
 * first, so a target that is down changes nothing; the volume must still
 * fit the device (SET_PARAMS is refused during recovery); then
 * START_USER_RECOVERY.  The caller continues as at start-up and ends with
 * END_USER_RECOVERY.
 */
static int recover_device(struct ini_dev *d, int *nothing)
{
	struct ublksrv_ctrl_dev_info *info = &d->info;
	uint32_t id = (uint32_t)d->o.recover_dev;
	struct ublk_params kp, p;
	char why[256];
	int ret;

	ret = ini_recover_check(d->ctrl, id, INI_QUIESCE_WAIT_MS, info, why, sizeof(why));
	if (ret) {
		*nothing = ret == -ENODEV || ret == -EOPNOTSUPP || ret == -EBUSY;
		report(d, "ERR %s", why);
		return ret;
	}
	if (ini_state_get((int)id, &d->old))
		d->old.dev_id = -1;
	if (!d->o.recovery)
		d->o.recovery = d->old.dev_id >= 0 && d->old.recovery[0] ?
				d->old.recovery : "manual";
	/* Queues and depth are the device's: they cannot change now. */
	d->nq = info->nr_hw_queues;
	d->o.depth = info->queue_depth;
	ret = connect_queues(d);
	if (ret)
		return ret;
	if (d->vi.queue_depth < info->queue_depth) {
		report(d, "ERR target grants depth %u, /dev/ublkb%u has %u tags per queue",
		       d->vi.queue_depth, id, info->queue_depth);
		return -EINVAL;
	}
	ret = ini_ctrl_get_params(d->ctrl, id, &kp);
	if (ret) {
		report(d, "ERR ublk GET_PARAMS %u: %s", id, strerror(-ret));
		return ret;
	}
	ret = ini_ublk_build_params(&d->vi, info->max_io_buf_bytes, &p);
	if (ret || p.basic.dev_sectors < kp.basic.dev_sectors ||
	    p.basic.logical_bs_shift != kp.basic.logical_bs_shift) {
		report(d, "ERR volume %s is now %llu bytes, block %u: /dev/ublkb%u was made for %llu bytes, block %u (detach and attach again)",
		       d->o.volume, (unsigned long long)d->vi.size, d->vi.block_size, id,
		       (unsigned long long)kp.basic.dev_sectors << 9,
		       1u << kp.basic.logical_bs_shift);
		return -EINVAL;
	}
	/*
	 * A volume that grew meanwhile still holds every sector the device
	 * addresses: recover at the device's size, and let follow_size grow
	 * it once serving, as for a resize while attached.
	 */
	d->vi.size = kp.basic.dev_sectors << 9;
	fill_state(d, "recovering");
	ini_state_write(&d->st);
	ret = ini_recover_start(d->ctrl, id, INI_RECOVER_START_MS);
	if (ret) {
		report(d, "ERR ublk START_USER_RECOVERY %u: %s", id, strerror(-ret));
		return ret;
	}
	rblk_info("ublk device %u: recovering with %u queues x %u tags, %s commands (the server before was pid %d)",
		  id, d->nq, info->queue_depth,
		  info->flags & UBLK_F_BATCH_IO ? "batch" : "per-tag",
		  (int)info->ublksrv_pid);
	return 0;
}

/* ---- shutdown --------------------------------------------------------- */

static void teardown(struct ini_dev *d, int started)
{
	unsigned i;
	int ret, stuck = 0;

	ini_monitor_stop(d->mon);
	d->mon = NULL;
	if (started) {
		set_state(d, "stopping");
		for (i = 0; i < d->nq; i++)
			ini_queue_stop(d->queues[i], d->o.grace_ms);
		ret = ini_ctrl_stop_dev(d->ctrl, d->info.dev_id);
		if (ret)
			rblk_warn("ublk STOP_DEV: %s", strerror(-ret));
		for (i = 0; i < d->nq; i++) {
			if (ini_queue_join(d->queues[i], INI_JOIN_MS)) {
				rblk_err("queue %u did not finish; leaving the rest to the kernel", i);
				stuck = 1;
			}
		}
		if (stuck) {
			/* Our exit closes the rings and /dev/ublkcN; the kernel
			 * then removes the device on its own. */
			ini_state_remove(d->info.dev_id);
			_exit(1);
		}
	}
	for (i = 0; i < INI_MAX_QUEUES; i++) {
		ini_queue_destroy(d->queues[i]);
		d->queues[i] = NULL;
		rblk_queue_close(d->conns[i]);
		d->conns[i] = NULL;
		rblk_queue_close(d->readers[i]);
		d->readers[i] = NULL;
	}
	if (d->cdev_fd >= 0) {
		close(d->cdev_fd);	/* DEL_DEV waits for this close */
		d->cdev_fd = -1;
	}
	if (d->added) {
		ret = ini_ctrl_del_dev(d->ctrl, d->info.dev_id);
		if (ret)
			rblk_warn("ublk DEL_DEV %u: %s", d->info.dev_id, strerror(-ret));
		ini_state_remove(d->info.dev_id);
		d->added = 0;
	}
}

/*
 * rblkctl restart (SIGUSR2), for an upgrade in place: the device goes to
 * the next server with no I/O error, and is neither stopped nor deleted.
 * With QUIESCE (6.16+) the kernel first stops handing us requests; then
 * each queue answers what is at the target, for up to the grace period,
 * and leaves the rest uncommitted.  Closing the rings and /dev/ublkcN
 * makes the device QUIESCED, and the kernel gives what we left to the
 * next server (REISSUE), as after a crash.  Without QUIESCE (6.12) the
 * kernel keeps handing requests meanwhile: the queues hold them, and
 * they go the same way.
 */
static void hand_over(struct ini_dev *d)
{
	unsigned i;
	int ret;

	set_state(d, "restarting");
	if (d->info.flags & UBLK_F_QUIESCE) {
		/* Its wait is bounded by the grace too (0 would be for ever). */
		ret = ini_ctrl_quiesce_dev(d->ctrl, d->info.dev_id,
					   d->o.grace_ms > 0 ? (unsigned)d->o.grace_ms : 1);
		if (ret)
			rblk_warn("ublk QUIESCE_DEV: %s; handing over anyway (the next server gets what is held)",
				  strerror(-ret));
		else
			rblk_info("/dev/ublkb%u quiesced: the kernel holds new requests for the next server",
				  d->info.dev_id);
	} else {
		rblk_info("this device has no ublk QUIESCE (Linux 6.16+, not with batch I/O): requests that arrive while handing over go to the next server");
	}
	for (i = 0; i < d->nq; i++)
		ini_queue_hand_over(d->queues[i], d->o.grace_ms);
	for (i = 0; i < d->nq; i++) {
		if (ini_queue_join(d->queues[i], INI_JOIN_MS)) {
			/* Our exit closes everything: the same hand-over. */
			rblk_err("queue %u did not finish handing over; exiting", i);
			_exit(INI_EXIT_HANDED_OVER);
		}
	}
	d->added = 0;		/* the device stays, for the next server */
	teardown(d, 0);
}

/* Moves every queue back to the first path (failback). */
static void fail_back(struct ini_dev *d, const char *why)
{
	if (d->npaths < 2 || d->active_path == 0) {
		rblk_info("failback %s: already on path 1", why);
		return;
	}
	rblk_warn("failback %s: moving every queue from path %d back to path 1 (%s %s)",
		  why, d->active_path + 1, d->paths[0].transport, d->paths[0].host);
	for (unsigned i = 0; i < d->nq; i++)
		ini_queue_prefer_path(d->queues[i], 0);
	d->failback_asked = rblk_now_ms();
}

/*
 * Spread reads: a reader that shares its writer's path (its own was down)
 * goes to another once that one has answered the monitor's probes for
 * INI_READER_MOVE_MS, every probe since after the reader came over (the
 * monitor may not have seen the loss yet: its last answer then predates
 * it); or, should the monitor never have seen the path fail, once the
 * reader has shared the writers' path for INI_READER_SHARED_MS and the
 * path still answers.  It moves at most every INI_READER_MOVE_MS, so a
 * flapping path is never chosen.  Returns the paths some reader is LIVE
 * on, as bits.
 */
#define INI_READER_MOVE_MS	5000
#define INI_READER_SHARED_MS	30000
static bool reader_may_go(const struct ini_dev *d, unsigned q, unsigned j,
			  int64_t now)
{
	int64_t ok_since;

	if (ini_monitor_get(d->mon, j, &ok_since) != INI_PROBE_OK || !ok_since)
		return false;
	if (ok_since > d->reader_shared[q] && now - ok_since >= INI_READER_MOVE_MS)
		return true;
	return now - d->reader_shared[q] >= INI_READER_SHARED_MS;
}

static unsigned spread_readers(struct ini_dev *d, int64_t now)
{
	unsigned on = 0;

	for (unsigned q = 0; q < d->nq; q++) {
		struct ini_queue_conn c;

		ini_queue_conn_status(d->queues[q], &c);
		if (c.read_path < 0)
			continue;
		if (c.read_state == RBLK_QUEUE_LIVE)
			on |= 1u << c.read_path;
		if (c.read_path != c.active_path || c.read_state != RBLK_QUEUE_LIVE) {
			d->reader_shared[q] = 0;
			continue;
		}
		if (!d->reader_shared[q])
			d->reader_shared[q] = now;
		if (now - d->reader_moved[q] < INI_READER_MOVE_MS)
			continue;
		for (unsigned k = 0; k < d->npaths; k++) {
			unsigned j = (reader_home(d, q) + k) % d->npaths;

			if ((int)j == c.active_path || !reader_may_go(d, q, j, now))
				continue;
			rblk_info("queue %u: reads spread again: the reader moves from path %d to path %u",
				  q, c.read_path + 1, j + 1);
			ini_queue_prefer_read_path(d->queues[q], (int)j);
			d->reader_moved[q] = now;
			break;
		}
	}
	return on;
}

/*
 * The paths as queue 0 and the monitor see them, into the state file;
 * and automatic failback: the first path has answered every probe for
 * --failback-delay seconds (a flapping path never has), and the last ask
 * is as old as that too.
 */
static void note_paths(struct ini_dev *d)
{
	struct ini_queue_conn c;
	struct ini_state *s = &d->st;
	int64_t now = rblk_now_ms(), ok_since;
	bool changed = false;
	unsigned reads_on;

	if (d->npaths < 2)
		return;
	reads_on = spread_readers(d, now);
	ini_queue_conn_status(d->queues[0], &c);
	if (c.active_path != d->active_path) {
		if (c.active_path != 0 || d->active_path != 0)
			s->failovers++;
		d->active_path = c.active_path;
		ini_monitor_set_active(d->mon, c.active_path);
		changed = true;
	}
	for (unsigned i = 0; i < d->npaths; i++) {
		struct ini_path_state *p = &s->paths[i];
		enum ini_probe pr = ini_monitor_get(d->mon, i, &ok_since);
		struct ini_path_state was = *p;

		bool reads = (int)i != c.active_path && (reads_on & (1u << i));

		/* A readers' path is live for them, whatever queue 0's
		 * writer last found there. */
		snprintf(p->state, sizeof(p->state), "%s",
			 rblk_path_state_str(reads ? RBLK_PATH_LIVE : c.path_state[i]));
		snprintf(p->role, sizeof(p->role), "%s",
			 (int)i == c.active_path ? "optimized" : reads ? "reads" : "standby");
		snprintf(p->probe, sizeof(p->probe), "%s",
			 (int)i == c.active_path ? "" : ini_probe_str(pr));
		p->failures = c.path_failures[i];
		changed |= memcmp(&was, p, sizeof(was)) != 0;
		if (i == 0 && d->o.failback_s > 0 && c.active_path != 0 &&
		    pr == INI_PROBE_OK && ok_since &&
		    now - ok_since >= (int64_t)d->o.failback_s * 1000 &&
		    now - d->failback_asked >= (int64_t)d->o.failback_s * 1000)
			fail_back(d, "automatic (path 1 answered for --failback-delay)");
	}
	if (changed)
		d->reconnects_written = UINT_MAX;	/* written by set_state */
}

/*
 * The volume grew (rblkctl volume resize).  told is the size every live
 * connection of every queue was told, so the target takes commands up to
 * it on each of them: only then may the device grow, live, where the
 * kernel can (UPDATE_SIZE, 6.16+).  An older kernel keeps the device's
 * size until it is attached again; that is said once per growth.
 */
static void follow_size(struct ini_dev *d, uint64_t told)
{
	uint64_t size;
	int ret;

	if (told == UINT64_MAX)
		return;
	size = told - told % d->vi.block_size;
	if (size <= d->vi.size || size == d->size_not_followed)
		return;
	ret = ini_ctrl_update_size(d->ctrl, d->info.dev_id, size);
	if (ret) {
		d->size_not_followed = size;
		if (ret == -EOPNOTSUPP)
			rblk_warn("volume %s grew to %llu bytes; /dev/ublkb%u stays at %llu: this kernel's ublk cannot resize a live device (UBLK_F_UPDATE_SIZE, Linux 6.16+); detach and attach again to use the new size",
				  d->o.volume, (unsigned long long)size, d->info.dev_id,
				  (unsigned long long)d->vi.size);
		else
			rblk_err("volume %s grew to %llu bytes; UPDATE_SIZE of /dev/ublkb%u failed: %s",
				 d->o.volume, (unsigned long long)size, d->info.dev_id,
				 strerror(-ret));
		return;
	}
	rblk_info("volume %s grew from %llu to %llu bytes: so did /dev/ublkb%u",
		  d->o.volume, (unsigned long long)d->vi.size,
		  (unsigned long long)size, d->info.dev_id);
	d->vi.size = size;
	d->st.size = size;
	d->reconnects_written = UINT_MAX;	/* written by set_state */
}

/* Waits for SIGTERM/SIGINT/SIGUSR2 or a queue thread ending; keeps the
 * state file's live/connecting/failed view and reconnect count current.
 * True when the device is to be handed over (SIGUSR2) rather than
 * removed. */
static bool serve(struct ini_dev *d, int sfd)
{
	struct pollfd pfd[2] = {
		{ .fd = sfd, .events = POLLIN },
		{ .fd = d->exit_efd, .events = POLLIN },
	};
	struct signalfd_siginfo si;
	unsigned i, nconn, nfailed, reconnects;
	uint64_t told;

	for (;;) {
		if (poll(pfd, 2, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGUSR1) {
				fail_back(d, "asked (rblkctl failback)");
				continue;
			}
			if (si.ssi_signo == SIGUSR2 &&
			    (d->info.flags & UBLK_F_USER_RECOVERY)) {
				rblk_info("signal %u: handing /dev/ublkb%u over to the next server (rblkctl restart)",
					  si.ssi_signo, d->info.dev_id);
				return true;
			}
			if (si.ssi_signo == SIGUSR2) {
				rblk_warn("rblkctl restart: /dev/ublkb%u has no recovery (--recovery off): it would go with this server; ignored",
					  d->info.dev_id);
				continue;
			}
			rblk_info("signal %u: detaching /dev/ublkb%u",
				  si.ssi_signo, d->info.dev_id);
			return false;
		}
		if (pfd[1].revents & POLLIN) {
			rblk_err("a queue thread ended on its own; stopping the device");
			return false;
		}
		nconn = nfailed = reconnects = 0;
		told = UINT64_MAX;
		for (i = 0; i < d->nq; i++) {
			struct ini_queue_conn c;

			ini_queue_conn_status(d->queues[i], &c);
			nconn += c.state == RBLK_QUEUE_CONNECTING;
			nfailed += c.state == RBLK_QUEUE_FAILED;
			reconnects += c.reconnects;
			if (c.size < told)
				told = c.size;
		}
		follow_size(d, told);
		/* The device is as bad as its worst queue. */
		d->st.reconnects = reconnects;
		note_paths(d);
		set_state(d, nfailed ? "failed" : nconn ? "connecting" : "live");
	}
	return false;
}

int main(int argc, char **argv)
{
	struct ini_dev dev = {
		.o = { .transport = "tcp", .depth = INI_DEFAULT_DEPTH, .dev_id = -1,
		       .grace_ms = INI_DEFAULT_GRACE_MS, .ready_fd = -1,
		       .poll_us = RBLK_POLL_US_DEFAULT,
		       .cleanup_dev = -1, .recover_dev = -1, .failback_s = -1 },
		.cdev_fd = -1, .exit_efd = -1,
	};
	struct ini_dev *d = &dev;
	sigset_t mask;
	long ncpu;
	int sfd, ret, i, recovering, nothing = 0;

	rblk_log_init("rblk-initiator");
	for (i = 0; i < INI_TMO_COUNT; i++)
		d->o.tmo_s[i] = INI_TMO_UNSET;
	if (ini_opts_parse(argc, argv, &d->o))
		return 2;
	recovering = d->o.recover_dev >= 0;
	if (!recovering && !d->o.recovery)
		d->o.recovery = "off";
	if (d->o.cleanup_dev >= 0)
		return cleanup_dev(d->o.cleanup_dev);
	build_paths(d);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	d->nq = d->o.queues ? d->o.queues : (ncpu > 4 ? 4 : ncpu > 0 ? (unsigned)ncpu : 1);

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);	/* rblkctl failback */
	sigaddset(&mask, SIGUSR2);	/* rblkctl restart */
	/* Blocked before any thread exists, so only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	d->exit_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sfd < 0 || d->exit_efd < 0) {
		report(d, "ERR signalfd/eventfd: %s", strerror(errno));
		return 1;
	}

	ret = ini_ctrl_open(&d->ctrl);
	if (ret) {
		if (ret == -ENOENT || ret == -ENODEV)
			report(d, "ERR no ublk support: %s missing (modprobe ublk_drv)",
			       INI_UBLK_CONTROL);
		else
			report(d, "ERR %s: %s", INI_UBLK_CONTROL, strerror(-ret));
		return 1;
	}
	rblk_info("ublk features 0x%llx%s",
		  (unsigned long long)ini_ctrl_features(d->ctrl),
		  ini_ctrl_features(d->ctrl) & UBLK_F_USER_RECOVERY_FAIL_IO ?
		  " (USER_RECOVERY_FAIL_IO available, not used)" : "");

	if (recovering) {
		ret = recover_device(d, &nothing);
		if (ret)
			goto out_teardown;
	} else {
		ret = connect_queues(d);
		if (ret)
			goto out_teardown;
		ret = add_device(d);
		if (ret)
			goto out_teardown;
	}
	ret = open_cdev(d);
	if (ret)
		goto out_teardown;
	ret = create_queues(d);
	if (ret)
		goto out_teardown;
	if (!recovering) {
		fill_state(d, "starting");
		ini_state_write(&d->st);
	}

	/* A failed recovery leaves the state file: the device is still
	 * there, quiesced, for the next attempt. */
	for (i = 0; i < (int)d->nq; i++) {
		ret = ini_queue_start(d->queues[i]);
		if (ret) {
			/* Tags are half fetched: only process exit undoes that. */
			report(d, "ERR starting queue %d: %s", i, strerror(-ret));
			if (!recovering)
				ini_state_remove(d->info.dev_id);
			_exit(1);
		}
	}
	if (recovering) {
		ret = ini_ctrl_end_recovery(d->ctrl, d->info.dev_id, getpid());
		if (ret) {
			report(d, "ERR ublk END_USER_RECOVERY: %s", strerror(-ret));
			_exit(1);
		}
		d->added = 1;	/* ours to DEL_DEV from now on */
		d->st.recoveries++;
		rblk_info("/dev/ublkb%u recovered (recovery %u of this device)",
			  d->info.dev_id, d->st.recoveries);
	} else {
		ret = ini_ctrl_start_dev(d->ctrl, d->info.dev_id, getpid());
		if (ret) {
			report(d, "ERR ublk START_DEV: %s", strerror(-ret));
			ini_state_remove(d->info.dev_id);
			_exit(1);
		}
		no_scheduler(d->info.dev_id);
	}
	set_state(d, "live");
	if (d->npaths > 1) {
		struct rblk_client_opts co = client_opts(d);

		ret = ini_monitor_start(&d->mon, &co, d->paths, d->npaths, d->vi.uuid);
		if (ret)
			rblk_warn("path monitor: %s: standby paths are not probed", strerror(-ret));
	}
	/* The first path's transport: a "rdma:" prefix is there, not in
	 * --transport. */
	rblk_info("/dev/ublkb%u: volume %s on %s (%s), %u queues x %u%s",
		  d->info.dev_id, d->o.volume, d->paths[0].host, d->paths[0].transport,
		  d->nq, d->info.queue_depth, d->npaths > 1 ? ", more paths standing by" : "");
	report(d, "OK ublkb%u", d->info.dev_id);

	if (serve(d, sfd)) {
		hand_over(d);
		ini_ctrl_close(d->ctrl);
		rblk_info("handed over");
		return INI_EXIT_HANDED_OVER;
	}
	teardown(d, 1);
	ini_ctrl_close(d->ctrl);
	rblk_info("detached");
	return 0;

out_teardown:
	teardown(d, 0);
	ini_ctrl_close(d->ctrl);
	return nothing ? INI_EXIT_NOTHING_TO_RECOVER : 1;
}
