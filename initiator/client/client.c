// SPDX-License-Identifier: MIT
/*
 * rblk client queue core: transport selection, LOGIN (and the place where the
 * auth challenge is answered), tag allocation, completion list, and the
 * policy that anything malformed from the target fails the queue and every
 * outstanding I/O.  What happens when a connection is lost (holding,
 * reconnecting, timeouts) is reconnect.c's, and the public queue calls
 * are queue.c's: both call this file, which calls neither.  The bytes themselves move in
 * client_tcp.c / client_rdma.c behind struct rblk_client_transport_ops.
 */
#include "clock.h"
#include "rblk_client.h"
#include "auth.h"
#include "client_queue.h"
#include "helpers.h"
#include "log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_DEPTH		128
#define DEFAULT_TIMEOUT_MS	10000

/*
 * Transport registry.  client_rdma.c (built where librdmacm is) adds
 * &rblk_client_rdma_ops here.
 */
static const struct rblk_client_transport_ops *const transports[] = {
	&rblk_client_tcp_ops,
	&rblk_client_rdma_ops,
};

static const struct rblk_client_transport_ops *find_transport(const char *name)
{
	if (!name || !*name)
		name = "tcp";
	for (size_t i = 0; i < ARRAY_SIZE(transports); i++)
		if (!strcmp(transports[i]->name, name))
			return transports[i];
	return NULL;
}

/* The host name sent in LOGIN/DISCOVER: the option, else gethostname(). */
static int pick_hostname(const struct rblk_client_opts *opts,
			 char host[RBLK_NAME_MAX], char *errbuf, size_t errlen)
{
	char buf[256];

	if (opts->hostname && *opts->hostname) {
		if (strlen(opts->hostname) >= RBLK_NAME_MAX ||
		    rblk_name_valid(opts->hostname)) {
			rblk_client_set_err(errbuf, errlen, "invalid host name '%s'", opts->hostname);
			return -EINVAL;
		}
		strcpy(host, opts->hostname);
		return 0;
	}
	if (gethostname(buf, sizeof(buf)) < 0)
		strcpy(buf, "localhost");
	buf[sizeof(buf) - 1] = '\0';
	if (strlen(buf) >= RBLK_NAME_MAX || rblk_name_valid(buf)) {
		rblk_client_set_err(errbuf, errlen,
			"this machine's name '%s' is not a valid rblk host name; set hostname",
			buf);
		return -EINVAL;
	}
	strcpy(host, buf);
	return 0;
}

/* Connects with the transport named in opts; fills *opsp and *connp. */
static int open_conn(const struct rblk_client_opts *opts, unsigned depth,
		     int timeout_ms, int stall_ms,
		     const struct rblk_client_transport_ops **opsp,
		     struct rblk_client_conn **connp, char *errbuf, size_t errlen)
{
	const struct rblk_client_transport_ops *ops = find_transport(opts->transport);
	struct rblk_client_conn_params p;
	int ret;

	if (!ops) {
		rblk_client_set_err(errbuf, errlen, "unknown or unavailable transport '%s'",
			opts->transport);
		return -EPROTONOSUPPORT;
	}
	if (!opts->host || !*opts->host) {
		rblk_client_set_err(errbuf, errlen, "no target host given");
		return -EINVAL;
	}
	p = (struct rblk_client_conn_params) {
		.host = opts->host,
		.port = opts->port && *opts->port ? opts->port : ops->default_port,
		.source_addr = opts->source_addr,
		.queue_id = (uint16_t)opts->queue_id,
		.queue_depth = (uint16_t)depth,
		.timeout_ms = timeout_ms,
		.stall_ms = stall_ms,
		.stop = { opts->stop, opts->stop_arg },
	};
	ret = ops->connect(&p, connp, errbuf, errlen);
	if (ret)
		return ret;
	*opsp = ops;
	return 0;
}

/* Maps a LOGIN refusal to -errno, with a reason for the user. */
static int login_refused(const struct rblk_client_opts *opts, int status,
			 char *errbuf, size_t errlen)
{
	rblk_client_set_err(errbuf, errlen, "target refused login to volume '%s': %s",
		opts->volume, rblk_status_str(status));
	switch (status) {
	case RBLK_S_NO_SUCH_VOLUME:	return -ENOENT;
	case RBLK_S_ACCESS_DENIED:
	case RBLK_S_AUTH_FAILED:
	case RBLK_S_AUTH_REQUIRED:	return -EACCES;
	case RBLK_S_BAD_VERSION:	return -EPROTO;
	default: {
		int e = rblk_status_to_errno(status);
		return e ? e : -EIO;
	}
	}
}

/*
 * Answers an RBLK_S_AUTH_REQUIRED challenge (proto/auth.h): picks our own
 * nonce (the target must answer it) and fills login->auth_mac with MAC_I
 * over the target's nonce, ours and the name fields as they go on the wire.
 */
static int answer_challenge(const struct rblk_client_opts *opts,
			    const struct rblk_secret *secret,
			    struct rblk_login *login,
			    const uint8_t tgt_nonce[RBLK_NONCE_LEN],
			    char *errbuf, size_t errlen)
{
	int ret;

	ret = rblk_auth_nonce(login->ini_nonce);
	if (!ret)
		ret = rblk_auth_mac(secret, RBLK_AUTH_INITIATOR, tgt_nonce,
				    login->ini_nonce, login->volume, login->host,
				    login->auth_mac);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "volume '%s': computing the auth MAC failed",
			opts->volume);
		return ret;
	}
	login->has_mac = 1;
	return 0;
}

static int load_secret(const struct rblk_client_opts *opts,
		       struct rblk_secret *secret, char *errbuf, size_t errlen)
{
	char why[256];
	int ret;

	ret = rblk_auth_load_secret(opts->secret_file, secret, why, sizeof(why));
	if (ret)
		rblk_client_set_err(errbuf, errlen, "volume '%s': %s", opts->volume, why);
	return ret;
}

/* One LOGIN -> LOGIN_RSP round trip within deadline. */
static int login_round(const struct rblk_client_transport_ops *ops,
		       struct rblk_client_conn *conn, const struct rblk_login *l,
		       struct rblk_login_rsp *rsp, int64_t deadline,
		       char *errbuf, size_t errlen)
{
	uint8_t buf[sizeof(struct rblk_wire_login_rsp)];
	uint8_t out[sizeof(struct rblk_wire_login)];
	size_t len = rblk_encode_login(out, l);
	int ret, st;

	ret = ops->send_msg(conn, out, len, rblk_left_ms(deadline));
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "sending LOGIN: %s", strerror(-ret));
		return ret;
	}
	ret = ops->recv_msg(conn, buf, sizeof(buf), rblk_left_ms(deadline));
	if (ret < 0) {
		rblk_client_set_err(errbuf, errlen, "waiting for LOGIN_RSP: %s",
			ret == -ETIMEDOUT ? "timed out" : strerror(-ret));
		return ret;
	}
	st = rblk_decode_login_rsp(buf, (size_t)ret, rsp);
	if (st != RBLK_S_OK) {
		rblk_client_set_err(errbuf, errlen, "malformed LOGIN_RSP from target: %s",
			rblk_status_str(st));
		return -EPROTO;
	}
	return 0;
}

/*
 * The LOGIN exchange, with the mutual challenge when the volume has a
 * secret.  With a secret_file the target must prove it knows the secret
 * too: a target that answers OK without a challenge, or with a wrong
 * proof, is refused before the session is used (an impostor would
 * otherwise be handed our writes and could feed us its data).  Every
 * reconnect goes through it again.  *refused: the target's refusal
 * status (RBLK_S_*), 0 when it did not refuse.
 */
static int do_login(const struct rblk_client_opts *opts,
		    const struct rblk_client_transport_ops *ops,
		    struct rblk_client_conn *conn, const char *host,
		    unsigned want_depth, int64_t deadline,
		    struct rblk_volume_info *info, int *refused,
		    char *errbuf, size_t errlen)
{
	uint8_t tgt_nonce[RBLK_NONCE_LEN];
	struct rblk_secret secret;
	struct rblk_login_rsp rsp;
	struct rblk_login l;
	bool challenged = false;
	int ret;

	memset(&secret, 0, sizeof(secret));
	memset(&l, 0, sizeof(l));
	l.queue_id = (uint16_t)opts->queue_id;
	l.queue_depth = (uint16_t)want_depth;
	/* strcpy into zeroed fields: the same bytes the encoder sends, which
	 * is what the MACs cover. */
	strcpy(l.volume, opts->volume);
	strcpy(l.host, host);

	if (opts->secret_file) {
		ret = load_secret(opts, &secret, errbuf, errlen);
		if (ret)
			return ret;
	}
	ret = login_round(ops, conn, &l, &rsp, deadline, errbuf, errlen);
	if (ret)
		goto out_wipe;
	*refused = 0;
	if (rsp.status == RBLK_S_AUTH_REQUIRED) {
		if (!opts->secret_file) {
			rblk_client_set_err(errbuf, errlen,
				"volume '%s' requires authentication: give a secret_file",
				opts->volume);
			*refused = rsp.status;
			ret = -EACCES;
			goto out_wipe;
		}
		memcpy(tgt_nonce, rsp.auth, sizeof(tgt_nonce));
		ret = answer_challenge(opts, &secret, &l, tgt_nonce, errbuf, errlen);
		if (!ret)
			ret = login_round(ops, conn, &l, &rsp, deadline,
					  errbuf, errlen);
		if (ret)
			goto out_wipe;
		challenged = true;
	}
	if (rsp.status != RBLK_S_OK) {
		*refused = rsp.status;
		ret = login_refused(opts, rsp.status, errbuf, errlen);
		goto out_wipe;
	}
	if (opts->secret_file && !challenged) {
		rblk_client_set_err(errbuf, errlen,
			"target accepted volume '%s' without authenticating itself: a secret_file was given, so the target must prove it knows the secret (none set for this volume on the target, or not the real target)",
			opts->volume);
		ret = -EACCES;
		goto out_wipe;
	}
	if (challenged &&
	    rblk_auth_verify(&secret, RBLK_AUTH_TARGET, tgt_nonce, l.ini_nonce,
			     l.volume, l.host, rsp.auth)) {
		rblk_client_set_err(errbuf, errlen,
			"target's proof for volume '%s' is wrong: it does not know the secret (a different secret, or not the real target); session not used",
			opts->volume);
		ret = -EACCES;
		goto out_wipe;
	}
	if (rsp.queue_depth > want_depth) {
		rblk_client_set_err(errbuf, errlen, "target granted depth %u > asked %u",
			rsp.queue_depth, want_depth);
		ret = -EPROTO;
		goto out_wipe;
	}
	*info = (struct rblk_volume_info) {
		.size = rsp.size,
		.block_size = rsp.block_size,
		.max_io = rsp.max_io,
		.inline_size = rsp.inline_size,
		.vol_flags = rsp.vol_flags,
		.queue_depth = rsp.queue_depth,
		.max_sge = rsp.max_sge,
		.session_id = rsp.session_id,
		.max_discard = rsp.max_discard,
		.max_write_zeroes = rsp.max_write_zeroes,
	};
	memcpy(info->uuid, rsp.vol_uuid, RBLK_UUID_LEN);
	ret = 0;
out_wipe:
	rblk_auth_clear_secret(&secret);
	return ret;
}

static int alloc_tags(struct rblk_queue *q, unsigned depth)
{
	q->depth = depth;
	q->slot = calloc(depth, sizeof(*q->slot));
	q->tstate = calloc(depth, sizeof(*q->tstate));
	q->seq = calloc(depth, sizeof(*q->seq));
	q->deadline = calloc(depth, sizeof(*q->deadline));
	q->free_tags = calloc(depth, sizeof(*q->free_tags));
	q->done = calloc(depth, sizeof(*q->done));
	if (!q->slot || !q->tstate || !q->seq || !q->deadline || !q->free_tags ||
	    !q->done)
		return -ENOMEM;
	/* Hand out low tags first: easier to read in traces. */
	for (unsigned i = 0; i < depth; i++)
		q->free_tags[i] = depth - 1 - i;
	q->nfree = depth;
	return 0;
}

void rblk_client_free_queue(struct rblk_queue *q)
{
	free(q->slot);
	free(q->tstate);
	free(q->seq);
	free(q->deadline);
	free(q->free_tags);
	free(q->done);
	free(q->ubufs);
	for (unsigned i = 0; i < ARRAY_SIZE(q->strs); i++)
		free(q->strs[i]);
	rblk_paths_free(q);
	free(q);
}

/* A reconnect must find the volume as the caller knows it: tags, block
 * size and I/O sizes were handed out on the first LOGIN. */
static int geometry_kept(const struct rblk_queue *q, const struct rblk_volume_info *i,
			 char *errbuf, size_t errlen)
{
	if (i->queue_depth == q->depth && i->block_size == q->info.block_size &&
	    i->max_io >= q->info.max_io && i->size >= q->info.size &&
	    !((i->vol_flags ^ q->info.vol_flags) & RBLK_VOL_F_READ_ONLY))
		return 0;
	rblk_client_set_err(errbuf, errlen,
		"volume '%s' changed: depth %u block %u max_io %u size %llu%s (was %u %u %u %llu)",
		q->opts.volume, i->queue_depth, i->block_size, i->max_io,
		(unsigned long long)i->size,
		i->vol_flags & RBLK_VOL_F_READ_ONLY ? " read-only" : "",
		q->depth, q->info.block_size, q->info.max_io,
		(unsigned long long)q->info.size);
	return -ESTALE;
}

/*
 * Every path and every reconnect must reach the volume the queue started
 * with: two volumes behind one device would mix their data.  The first
 * LOGIN (or opts.expect_uuid) says which one it is.  A path that reaches
 * another is marked and never used again: -EMEDIUMTYPE.
 */
static int same_volume(struct rblk_queue *q, const struct rblk_volume_info *i,
		       char *errbuf, size_t errlen)
{
	const struct rblk_qpath *p = &q->paths[q->cur];
	char got[RBLK_UUID_STR_LEN], want[RBLK_UUID_STR_LEN];

	if (!q->have_uuid) {
		memcpy(q->uuid, i->uuid, RBLK_UUID_LEN);
		q->have_uuid = true;
		return 0;
	}
	if (!memcmp(q->uuid, i->uuid, RBLK_UUID_LEN))
		return 0;
	rblk_uuid_str(i->uuid, got);
	rblk_uuid_str(q->uuid, want);
	rblk_client_set_err(errbuf, errlen,
		"%s path to %s%s%s reaches another volume named '%s' (uuid %s, not %s): not used",
		p->transport, p->host, p->port ? ":" : "", p->port ? p->port : "",
		q->opts.volume, got, want);
	rblk_path_set(q, q->cur, RBLK_PATH_OTHER_VOLUME, errbuf);
	return -EMEDIUMTYPE;
}

int rblk_client_connect(struct rblk_queue *q, int timeout_ms, char *errbuf,
			size_t errlen)
{
	unsigned want = q->depth ? q->depth :
			q->opts.queue_depth ? q->opts.queue_depth : DEFAULT_DEPTH;
	int64_t deadline = rblk_now_ms() + timeout_ms;
	/* A target that takes nothing from us for this long is gone; the
	 * keep-alive period when there is one, else the I/O timeout. */
	int stall = q->ka_ms > 0 ? q->ka_ms : q->io_ms > 0 ? q->io_ms : 0;
	const struct rblk_client_transport_ops *ops;
	struct rblk_client_geometry g;
	struct rblk_client_conn *conn;
	struct rblk_volume_info info;
	const struct rblk_qpath *path = &q->paths[q->cur];
	struct rblk_client_opts o = q->opts;
	int ret;

	o.transport = path->transport;
	o.host = path->host;
	o.port = path->port;
	q->refused = 0;
	ret = open_conn(&o, want, timeout_ms, stall, &ops, &conn, errbuf, errlen);
	if (ret)
		return ret;
	ret = do_login(&o, ops, conn, q->host, want, deadline, &info,
		       &q->refused, errbuf, errlen);
	if (ret)
		goto out_close_conn;
	ret = same_volume(q, &info, errbuf, errlen);
	if (ret)
		goto out_close_conn;
	if (!q->depth) {
		q->info = info;
		ret = alloc_tags(q, info.queue_depth);
		if (ret) {
			rblk_client_set_err(errbuf, errlen, "out of memory");
			goto out_close_conn;
		}
	} else {
		ret = geometry_kept(q, &info, errbuf, errlen);
		if (ret)
			goto out_close_conn;
		q->info.session_id = info.session_id;
		q->info.size = info.size;
	}
	g = (struct rblk_client_geometry) {
		.queue_depth = (uint16_t)q->depth,
		.max_io = q->info.max_io,
		.inline_size = info.inline_size,
		.max_sge = info.max_sge,
	};
	ret = ops->start(conn, &g);
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "starting %s queue: %s", ops->name,
			strerror(-ret));
		goto out_close_conn;
	}
	/* RDMA: new PD, new MRs for the caller's buffers. */
	for (unsigned i = 0; ops->reg_buffer && i < q->n_ubufs; i++) {
		ret = ops->reg_buffer(conn, q->ubufs[i].buf, q->ubufs[i].len);
		if (ret) {
			rblk_client_set_err(errbuf, errlen, "registering %zu bytes again: %s",
				q->ubufs[i].len, strerror(-ret));
			goto out_close_conn;
		}
	}
	q->ops = ops;
	q->conn = conn;
	RBLK_DBG(RBLK_DBG_CONN, "queue %u: logged in to '%s' via %s, depth %u",
		 q->opts.queue_id, q->opts.volume, ops->name, q->depth);
	return 0;

out_close_conn:
	ops->close(conn);
	return ret;
}

/* opts names a volume the wire can carry.  0 or -EINVAL with a reason. */
static int check_volume_name(const struct rblk_client_opts *opts, char *errbuf,
			     size_t errlen)
{
	if (!opts->volume || strlen(opts->volume) >= RBLK_NAME_MAX ||
	    rblk_name_valid(opts->volume)) {
		rblk_client_set_err(errbuf, errlen, "invalid volume name '%s'",
			opts->volume ? opts->volume : "");
		return -EINVAL;
	}
	return 0;
}

/* Keeps the caller's strings: a reconnect needs them after open returned. */
static int copy_opts(struct rblk_queue *q, const struct rblk_client_opts *o)
{
	const char *src[] = { o->volume, o->hostname, o->secret_file, o->source_addr };
	const char **dst[] = { &q->opts.volume, &q->opts.hostname,
			       &q->opts.secret_file, &q->opts.source_addr };
	_Static_assert(ARRAY_SIZE(src) == ARRAY_SIZE(q->strs),
		       "one copy per string option");

	q->opts = *o;
	/* Where to connect is the paths' (rblk_paths_init keeps copies of
	 * host, port, transport and the caller's arrays): none of it is
	 * read from q->opts. */
	q->opts.host = q->opts.port = q->opts.transport = NULL;
	q->opts.alt_paths = NULL;
	q->opts.n_alt_paths = 0;
	q->opts.expect_uuid = NULL;
	for (unsigned i = 0; i < ARRAY_SIZE(src); i++) {
		if (!src[i])
			continue;
		q->strs[i] = strdup(src[i]);
		if (!q->strs[i])
			return -ENOMEM;
		*dst[i] = q->strs[i];
	}
	return 0;
}

int rblk_client_queue_new(const struct rblk_client_opts *opts,
			  struct rblk_queue **qp, char *errbuf, size_t errlen)
{
	unsigned want = opts->queue_depth ? opts->queue_depth : DEFAULT_DEPTH;
	struct rblk_queue *q;
	int ret;

	rblk_client_set_err(errbuf, errlen, "no error");
	ret = check_volume_name(opts, errbuf, errlen);
	if (ret)
		return ret;
	if (want > RBLK_MAX_QUEUE_DEPTH) {
		rblk_client_set_err(errbuf, errlen, "queue depth %u above the maximum %u",
			want, RBLK_MAX_QUEUE_DEPTH);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		rblk_client_set_err(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	q->epfd = q->tfd = q->conn_fd = -1;
	/* Every local mistake is reported before touching the network. */
	ret = pick_hostname(opts, q->host, errbuf, errlen);
	if (!ret) {
		ret = copy_opts(q, opts);
		if (ret)
			rblk_client_set_err(errbuf, errlen, "setting up the queue: %s",
					    strerror(-ret));
	}
	if (!ret)
		ret = rblk_paths_init(q, opts, errbuf, errlen);
	if (ret) {
		rblk_client_free_queue(q);
		return ret;
	}
	*qp = q;
	return 0;
}

int rblk_client_open_timeout_ms(const struct rblk_queue *q)
{
	return q->opts.timeout_ms > 0 ? q->opts.timeout_ms : DEFAULT_TIMEOUT_MS;
}

static void push_done(struct rblk_queue *q, uint32_t tag)
{
	q->tstate[tag] = TAG_DONE;
	q->done[(q->done_head + q->done_count) % q->depth] = q->slot[tag];
	q->done_count++;
}

void rblk_client_finish(struct rblk_queue *q, uint32_t tag, int status)
{
	struct rblk_io *io = q->slot[tag];

	if (q->tstate[tag] == TAG_SENT)
		q->nsent--;
	else
		q->nheld--;
	io->status = status;
	io->error = rblk_status_to_errno(status);
	push_done(q, tag);
}

void rblk_client_fail_tags(struct rblk_queue *q, enum tag_state which, int status)
{
	for (unsigned t = 0; t < q->depth; t++) {
		struct rblk_io *io = q->slot[t];

		if (io && q->tstate[t] == which)
			rblk_client_finish(q, t, status);
	}
}

int rblk_queue_reg_buffer(struct rblk_queue *q, void *buf, size_t len)
{
	struct user_buf *n;
	int ret;

	if (!q->ops->reg_buffer)
		return 0;
	if (q->conn) {
		ret = q->ops->reg_buffer(q->conn, buf, len);
		if (ret)
			return ret;
	}
	/* Remembered for the connections to come. */
	n = realloc(q->ubufs, (q->n_ubufs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	q->ubufs = n;
	q->ubufs[q->n_ubufs++] = (struct user_buf) { buf, len };
	return 0;
}

/* Checks what the target would refuse anyway, so the caller gets -EINVAL
 * for its own mistake instead of a remote status. */
int rblk_client_io_valid(const struct rblk_queue *q, const struct rblk_io *io)
{
	switch (io->opcode) {
	case RBLK_OP_READ:
	case RBLK_OP_WRITE:
		if (!io->buf || !io->length || io->length > q->info.max_io)
			return 0;
		break;
	case RBLK_OP_FLUSH:
		/* Offset is ignored (ublk sends ~0). */
		if (io->length)
			return 0;
		break;
	case RBLK_OP_DISCARD:
	case RBLK_OP_WRITE_ZEROES:
		/* No data moves, so max_io does not apply; the target's
		 * own limit for these does ([V34]). */
		if (!io->length || io->length > (io->opcode == RBLK_OP_DISCARD ?
						 q->info.max_discard :
						 q->info.max_write_zeroes))
			return 0;
		break;
	default:
		return 0;
	}
	if (io->flags & ~RBLK_CMD_F__ALL)
		return 0;
	if ((io->flags & RBLK_CMD_F_FUA) &&
	    io->opcode != RBLK_OP_WRITE && io->opcode != RBLK_OP_WRITE_ZEROES)
		return 0;
	return 1;
}

int rblk_client_send(struct rblk_queue *q, uint32_t tag)
{
	struct rblk_io *io = q->slot[tag];
	int ret;

	if (q->tstate[tag] == TAG_HELD)
		q->nheld--;
	q->tstate[tag] = TAG_SENT;
	q->nsent++;
	RBLK_DBG(RBLK_DBG_IO, "submit tag %u %s off %llu len %u", tag,
		 rblk_opcode_str(io->opcode), (unsigned long long)io->offset,
		 io->length);
	ret = q->ops->submit(q->conn, q, io);
	if (ret == -EINVAL) {
		/* Nothing was sent (e.g. buffer not registered). */
		q->tstate[tag] = TAG_HELD;
		q->nsent--;
		q->nheld++;
		return ret;
	}
	/* Else 0, or part of the command may be on the wire: the stream
	 * is lost (the caller's to handle; the tag stays SENT). */
	return ret;
}

int rblk_client_flush(struct rblk_queue *q)
{
	if (!q->ops->flush || !q->conn || q->state != RBLK_QUEUE_LIVE)
		return 0;
	return q->ops->flush(q->conn, q);
}



struct rblk_io *rblk_client_inflight_io(struct rblk_queue *q, uint32_t tag)
{
	if (tag >= q->depth || q->tstate[tag] != TAG_SENT)
		return NULL;
	return q->slot[tag];
}

int rblk_client_complete(struct rblk_queue *q, const struct rblk_rsp *rsp,
			 uint32_t data_len)
{
	struct rblk_io *io;

	if (rsp->tag == RBLK_TAG_NONE) {
		/* The target found this queue's stream broken and closes it;
		 * the queue dies with the errno of the reason it gave. */
		int err = rblk_status_to_errno(rsp->status);

		rblk_err("target is closing the connection: %s",
			 rblk_status_str(rsp->status));
		return err ? err : -EPROTO;
	}
	io = rblk_client_inflight_io(q, rsp->tag);
	if (!io) {
		rblk_err("target answered tag %u that is not in flight", rsp->tag);
		return -EPROTO;
	}
	if (rsp->status == RBLK_S_OK && io->opcode == RBLK_OP_READ) {
		/* Block devices have no short reads. */
		if (data_len != io->length || rsp->value != io->length) {
			rblk_err("tag %u: READ of %u bytes answered with %u bytes",
				 rsp->tag, io->length, data_len);
			return -EPROTO;
		}
	} else if (data_len) {
		rblk_err("tag %u: %s response carries %u data bytes", rsp->tag,
			 rblk_opcode_str(io->opcode), data_len);
		return -EPROTO;
	}
	q->last_rx = rblk_now_ms();
	q->nsent--;
	if (rsp->status == RBLK_S_SHUTTING_DOWN) {
		/* Not run: it goes again to the next target process. */
		q->tstate[rsp->tag] = TAG_HELD;
		q->nheld++;
		q->stop_seen = 1;
		return 0;
	}
	io->status = rsp->status;
	io->error = rblk_status_to_errno(rsp->status);
	RBLK_DBG(RBLK_DBG_IO, "complete tag %u: %s", rsp->tag,
		 rblk_status_str(rsp->status));
	push_done(q, rsp->tag);
	return 0;
}

int rblk_client_keepalive_rsp(struct rblk_queue *q, uint16_t status, uint64_t seq,
			      uint64_t size)
{
	q->last_rx = rblk_now_ms();
	if (q->ka_out && seq == q->ka_seq)
		q->ka_out = 0;
	if (status == RBLK_S_SHUTTING_DOWN)
		q->stop_seen = 1;
	/* The volume grew (volume.resize): the target takes commands up to
	 * the new size from now on.  It never shrinks a live session. */
	if (size > q->info.size)
		q->info.size = size;
	return 0;
}

/* Hands completed I/Os to the caller and frees their tags. */
static unsigned take_done(struct rblk_queue *q, struct rblk_io **out, unsigned max)
{
	unsigned n = 0;

	while (n < max && q->done_count) {
		struct rblk_io *io = q->done[q->done_head];

		q->done_head = (q->done_head + 1) % q->depth;
		q->done_count--;
		q->slot[io->tag] = NULL;
		q->tstate[io->tag] = TAG_FREE;
		q->free_tags[q->nfree++] = io->tag;
		out[n++] = io;
	}
	return n;
}

/* What reap and peek return: the completed I/Os, or once the queue has
 * FAILED and none is left, the -errno that failed it. */
int rblk_client_hand_back(struct rblk_queue *q, struct rblk_io **done, unsigned max)
{
	if (q->state == RBLK_QUEUE_FAILED && !q->done_count && q->depth == q->nfree)
		return q->err;
	return (int)take_done(q, done, max);
}

int rblk_queue_fd(struct rblk_queue *q)
{
	return q->epfd;
}

void rblk_queue_set_spin(struct rblk_queue *q, int spin)
{
	q->spin = !!spin;
	if (q->conn && q->ops->set_spin)
		q->ops->set_spin(q->conn, q->spin);
}

int rblk_queue_conn_fd(struct rblk_queue *q)
{
	return q->conn ? q->ops->get_fd(q->conn) : -1;
}

unsigned rblk_queue_inflight(const struct rblk_queue *q)
{
	return q->depth - q->nfree;
}

/* ---- DISCOVER ---------------------------------------------------------- */

int rblk_probe(const struct rblk_client_opts *opts, uint8_t uuid[RBLK_UUID_LEN],
	       char *errbuf, size_t errlen)
{
	int timeout = opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	int64_t deadline = rblk_now_ms() + timeout;
	const struct rblk_client_transport_ops *ops;
	struct rblk_client_conn *conn;
	struct rblk_volume_info info;
	struct rblk_client_opts o;
	char host[RBLK_NAME_MAX];
	int refused, ret;

	rblk_client_set_err(errbuf, errlen, "no error");
	ret = check_volume_name(opts, errbuf, errlen);
	if (ret)
		return ret;
	ret = pick_hostname(opts, host, errbuf, errlen);
	if (ret)
		return ret;
	o = *opts;
	o.queue_id = RBLK_PROBE_QUEUE_ID;	/* the target logs it quietly */
	ret = open_conn(&o, 1, timeout, 0, &ops, &conn, errbuf, errlen);
	if (ret)
		return ret;
	ret = do_login(&o, ops, conn, host, 1, deadline, &info, &refused,
		       errbuf, errlen);
	ops->close(conn);
	if (!ret)
		memcpy(uuid, info.uuid, RBLK_UUID_LEN);
	return ret;
}

int rblk_discover(const struct rblk_client_opts *opts,
		  struct rblk_discover_entry *entries, unsigned max,
		  char *errbuf, size_t errlen)
{
	const size_t cap = sizeof(struct rblk_wire_discover_rsp) +
			   RBLK_DISCOVER_MAX * sizeof(struct rblk_wire_discover_entry);
	int timeout = opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	int64_t deadline = rblk_now_ms() + timeout;
	uint8_t out[sizeof(struct rblk_wire_discover)];
	const struct rblk_client_transport_ops *ops;
	struct rblk_client_conn *conn;
	char host[RBLK_NAME_MAX];
	uint16_t status, count;
	uint32_t flags = 0;
	uint8_t *buf;
	int ret, st;

	rblk_client_set_err(errbuf, errlen, "no error");
	if (opts->volume && (strlen(opts->volume) >= RBLK_NAME_MAX ||
			     rblk_name_valid(opts->volume))) {
		rblk_client_set_err(errbuf, errlen, "invalid volume name '%s'", opts->volume);
		return -EINVAL;
	}
	ret = pick_hostname(opts, host, errbuf, errlen);
	if (ret)
		return ret;
	buf = malloc(cap);
	if (!buf) {
		rblk_client_set_err(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = open_conn(opts, 1, timeout, 0, &ops, &conn, errbuf, errlen);
	if (ret)
		goto out_free_buf;
	/* Proving a volume's secret first is what lists that volume. */
	if (opts->volume) {
		struct rblk_volume_info info;
		int refused;

		ret = do_login(opts, ops, conn, host, 1, deadline, &info,
			       &refused, errbuf, errlen);
		if (ret)
			goto out_close_conn;
	}
	ret = ops->send_msg(conn, out, rblk_encode_discover(out, host),
			    rblk_left_ms(deadline));
	if (ret) {
		rblk_client_set_err(errbuf, errlen, "sending DISCOVER: %s", strerror(-ret));
		goto out_close_conn;
	}
	ret = ops->recv_msg(conn, buf, cap, rblk_left_ms(deadline));
	if (ret < 0) {
		rblk_client_set_err(errbuf, errlen, "waiting for DISCOVER_RSP: %s",
			ret == -ETIMEDOUT ? "timed out" : strerror(-ret));
		goto out_close_conn;
	}
	st = rblk_decode_discover_rsp(buf, (size_t)ret, &status, &count, &flags);
	if (st == RBLK_S_OK && status != RBLK_S_OK) {
		rblk_client_set_err(errbuf, errlen, "target refused discovery: %s",
			rblk_status_str(status));
		ret = login_refused(opts, status, NULL, 0);
		goto out_close_conn;
	}
	if (st != RBLK_S_OK) {
		rblk_client_set_err(errbuf, errlen, "malformed DISCOVER_RSP: %s", rblk_status_str(st));
		ret = -EPROTO;
		goto out_close_conn;
	}
	for (unsigned i = 0; i < count && i < max; i++) {
		const uint8_t *e = buf + sizeof(struct rblk_wire_discover_rsp) +
				   i * sizeof(struct rblk_wire_discover_entry);

		if (rblk_decode_discover_entry(e, &entries[i]) != RBLK_S_OK) {
			rblk_client_set_err(errbuf, errlen, "malformed DISCOVER_RSP entry %u", i);
			ret = -EPROTO;
			goto out_close_conn;
		}
	}
	ret = count;
	if (flags & RBLK_DISCOVER_F_CUT)
		rblk_client_set_err(errbuf, errlen,
			"the target lists only the first %u volumes this host may use (one answer holds no more)",
			(unsigned)count);

out_close_conn:
	ops->close(conn);
out_free_buf:
	free(buf);
	return ret;
}
