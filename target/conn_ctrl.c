// SPDX-License-Identifier: MIT
/*
 * Where every PDU from a client enters (tgt_conn_pdu, called by the
 * transports), and the control path: LOGIN (ACL, secret challenge,
 * limits), DISCOVER and KEEPALIVE.  Commands go on to the I/O path in
 * conn.c, as nvmet keeps its fabrics commands apart from I/O.  This file
 * calls conn.c; conn.c does not call it.
 */
#include "conn_int.h"
#include "clock.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hosts.h"
#include "limit_counts.h"
#include "log.h"
#include "server.h"

/* ---- LOGIN / DISCOVER ----------------------------------------------- */

/* export.c asks (on this reactor) to drop a session of a deleted volume. */
static void conn_kick(void *arg)
{
	tgt_conn_close(arg, true, "volume deleted by the administrator");
}

static int handle_login(struct tgt_conn *c, const void *buf, size_t len)
{
	struct rblk_login_rsp rsp = { .status = RBLK_S_OK };
	uint8_t pdu[sizeof(struct rblk_wire_login_rsp)];
	struct rblk_login l;
	struct tgt_volume *vol = NULL;
	unsigned depth;
	int st;

	if (c->state != TGT_CONN_NEW) {
		rblk_warn("reactor%u: %s: second LOGIN on a connection (%s): closing",
			  tgt_reactor_id(c->r), c->peer,
			  rblk_status_str(RBLK_S_INVALID_OPCODE));
		tgt_conn_close_login_told(c, RBLK_S_INVALID_OPCODE, NULL);
		return -ECONNABORTED;
	}
	memset(&l, 0, sizeof(l));
	st = rblk_decode_login(buf, len, &l);
	if (st == RBLK_S_OK) {
		snprintf(c->host, sizeof(c->host), "%s", l.host);
		/* Volume lookup, allow_hosts, secret challenge; takes a
		 * reference on the export for the session. */
		st = tgt_acl_login(&c->auth, &l, c->peer,
				   (const struct sockaddr *)&c->peer_sa, c->r,
				   tgt_reactor_id(c->r), &c->sess, rsp.auth);
		if (st == RBLK_S_OK)
			vol = c->sess->exp->vol;
	}
	if (st == RBLK_S_OK) {
		depth = l.queue_depth;
		if (depth > c->srv->cfg.max_queue_depth)
			depth = c->srv->cfg.max_queue_depth;
		if (depth > RBLK_MAX_QUEUE_DEPTH)
			depth = RBLK_MAX_QUEUE_DEPTH;
		c->reqs = calloc(depth, sizeof(*c->reqs));
		if (!c->reqs)
			st = RBLK_S_NO_RESOURCES;
		else if (c->ops->login && (st = c->ops->login(c, depth)))
			st = st == -EINVAL ? RBLK_S_INVALID_FIELD : RBLK_S_NO_RESOURCES;
		if (st != RBLK_S_OK) {
			free(c->reqs);
			c->reqs = NULL;
			memset(rsp.auth, 0, sizeof(rsp.auth));
			tgt_session_close(c->sess);
			c->sess = NULL;
		}
	}
	rsp.status = st;
	if (st == RBLK_S_OK) {
		c->vol = vol;
		c->vol_epoch = __atomic_load_n(&vol->epoch, __ATOMIC_ACQUIRE);
		c->login_gen = __atomic_add_fetch(&vol->login_gen, 1, __ATOMIC_ACQ_REL);
		c->depth = depth;
		c->queue_id = l.queue_id;
		c->session_id = c->sess->id;	/* what rblkctl shows */
		c->lim.queue_depth = depth;
		c->lim.max_io = RBLK_MAX_IO_SIZE;
		c->lim.inline_size = RBLK_DEFAULT_INLINE;
		c->lim.max_sge = RBLK_MAX_SGE;
		c->lim.tcp = !!(c->ops->flags & TGT_TP_F_INBAND_DATA);
		c->lim.max_discard = vol->flags & RBLK_VOL_F_DISCARD ?
			RBLK_DEFAULT_MAX_DISCARD : 0;
		c->lim.max_write_zeroes = vol->flags & RBLK_VOL_F_WRITE_ZEROES ?
			RBLK_DEFAULT_MAX_WRITE_ZEROES : 0;
		c->state = TGT_CONN_LIVE;
		tgt_conn_login_timer_cancel(c);
		tgt_host_prelogin_put(c->prelogin);
		c->prelogin = NULL;
		tgt_session_set_kick(c->sess, conn_kick, c);
		rsp.queue_depth = depth;
		rsp.vol_flags = vol->flags;
		rsp.size = c->sess->size;
		rsp.block_size = vol->block_size;
		rsp.max_io = RBLK_MAX_IO_SIZE;
		rsp.inline_size = RBLK_DEFAULT_INLINE;
		rsp.max_sge = RBLK_MAX_SGE;
		rsp.max_discard = c->lim.max_discard;
		rsp.max_write_zeroes = c->lim.max_write_zeroes;
		rsp.session_id = c->session_id;
		memcpy(rsp.vol_uuid, vol->uuid, RBLK_UUID_LEN);
		c->probe = l.queue_id == RBLK_PROBE_QUEUE_ID;
		if (c->probe)
			RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: host %s probed volume %s",
				 tgt_reactor_id(c->r), c->peer, l.host, vol->name);
		else
			rblk_info("reactor%u: %s: host %s logged in to volume %s, queue %u, depth %u (asked %u), session %" PRIx64,
				  tgt_reactor_id(c->r), c->peer, l.host, vol->name,
				  l.queue_id, depth, l.queue_depth, c->session_id);
	}
	if (c->ops->send_pdu(c, pdu, rblk_encode_login_rsp(pdu, &rsp)))
		return -ENOMEM;
	if (st != RBLK_S_OK && st != RBLK_S_AUTH_REQUIRED) {
		char why[160];

		snprintf(why, sizeof(why), "LOGIN refused (host %s, volume %s): %s",
			 st == RBLK_S_INVALID_FIELD || st == RBLK_S_BAD_VERSION ? "?" : l.host,
			 st == RBLK_S_INVALID_FIELD || st == RBLK_S_BAD_VERSION ? "?" : l.volume,
			 rblk_status_str(st));
		tgt_conn_close(c, false, why);
	}
	return 0;
}

static int handle_discover(struct tgt_conn *c, const void *buf, size_t len)
{
	struct rblk_discover_entry *ents;
	char host[RBLK_NAME_MAX];
	uint32_t flags = 0;
	uint8_t *pdu;
	unsigned n = 0;
	size_t off;
	int st, ret = 0;

	/* After a LOGIN, DISCOVER is how a client that proved a volume's
	 * secret gets to see that volume listed (docs/protocol.md); the
	 * connection then closes like any discovery connection. */
	if (c->state == TGT_CONN_LIVE && c->nbusy) {
		uint8_t pdu[sizeof(struct rblk_wire_discover_rsp)];

		rblk_warn("reactor%u: %s: DISCOVER with commands in flight (%s): closing",
			  tgt_reactor_id(c->r), c->peer,
			  rblk_status_str(RBLK_S_INVALID_OPCODE));
		tgt_conn_close_told(c, pdu, rblk_encode_discover_rsp(pdu, RBLK_S_INVALID_OPCODE,
							    0, 0), NULL);
		return -ECONNABORTED;
	}
	/* One more than an answer holds: to know whether the list is cut. */
	ents = calloc(RBLK_DISCOVER_MAX + 1, sizeof(*ents));
	pdu = malloc(sizeof(struct rblk_wire_discover_rsp) +
		     RBLK_DISCOVER_MAX * sizeof(struct rblk_wire_discover_entry));
	if (!ents || !pdu) {
		ret = -ENOMEM;
		goto out_free;
	}
	st = rblk_decode_discover(buf, len, host);
	if (st == RBLK_S_OK)
		n = tgt_acl_discover(host, (const struct sockaddr *)&c->peer_sa,
				     c->auth.proven ? c->auth.first.volume : NULL,
				     ents, RBLK_DISCOVER_MAX + 1);
	if (n > RBLK_DISCOVER_MAX) {
		n = RBLK_DISCOVER_MAX;
		flags |= RBLK_DISCOVER_F_CUT;
	}
	off = rblk_encode_discover_rsp(pdu, st, n, flags);
	for (unsigned i = 0; i < n; i++)
		off += rblk_encode_discover_entry(pdu + off, &ents[i]);
	if (c->ops->send_pdu(c, pdu, off)) {
		ret = -ENOMEM;
		goto out_free;
	}
	RBLK_DBG(RBLK_DBG_CONN, "reactor%u: %s: DISCOVER%s: %u volume(s)",
		 tgt_reactor_id(c->r), c->peer,
		 c->auth.proven ? " after authentication" : "", n);
	tgt_conn_close(c, false, NULL);
out_free:
	free(pdu);
	free(ents);
	return ret;
}

/* ---- KEEPALIVE and the volume's size ------------------------------- */

/*
 * The size a logged-in session may address: what LOGIN granted, or more
 * once the volume grew (volume.resize).  Growing it here, on the session's
 * reactor, is what lets the initiator use the new blocks: it learns the
 * size from a KEEPALIVE_RSP, and this target then takes commands up to
 * it.  Returns true when the volume is larger than the session says.
 */
static bool session_behind(const struct tgt_conn *c, uint64_t *now)
{
	*now = __atomic_load_n(&c->sess->exp->size, __ATOMIC_ACQUIRE);
	return *now > __atomic_load_n(&c->sess->size, __ATOMIC_RELAXED);
}

static void session_grow(struct tgt_conn *c, uint64_t size)
{
	rblk_info("reactor%u: %s: volume %s grew to %" PRIu64 " bytes: told the session",
		  tgt_reactor_id(c->r), c->peer, c->sess->exp->name, size);
	__atomic_store_n(&c->sess->size, size, __ATOMIC_RELAXED);
}

/*
 * Reactor tick (about 1 Hz): tells each live session of a volume that
 * grew, in an unsolicited KEEPALIVE_RSP (seq 0, OK), so that a busy
 * initiator, which sends no KEEPALIVE, learns it within a second too.
 * Then the I/O path's own timers (conn.c).
 */
void tgt_conns_ctrl_tick(struct tgt_reactor *r)
{
	uint8_t pdu[sizeof(struct rblk_wire_keepalive_rsp)];
	struct tgt_conn *c, *next;
	uint64_t size;

	for (c = *tgt_reactor_conn_list(r); c; c = next) {
		tgt_conn_get(c);
		/* Not sent (out of memory): the next tick tries again. */
		if (c->state == TGT_CONN_LIVE && c->sess && session_behind(c, &size) &&
		    !c->ops->send_pdu(c, pdu, rblk_encode_keepalive(pdu,
				RBLK_PDU_KEEPALIVE_RSP, RBLK_S_OK, 0, size)))
			session_grow(c, size);
		next = c->next;
		tgt_conn_put(c);
	}
	tgt_conns_tick(r);
}

/*
 * KEEPALIVE: answered at once, ahead of any disk I/O, so a busy volume
 * never looks dead.  A stopping target says SHUTTING_DOWN instead of OK.
 * The answer carries the session's size, grown first if the volume did.
 */
static int handle_keepalive(struct tgt_conn *c, const void *buf, size_t len)
{
	uint8_t pdu[sizeof(struct rblk_wire_keepalive_rsp)];
	uint16_t status;
	uint64_t seq, size;
	int st;

	if (c->state == TGT_CONN_NEW) {
		rblk_warn("reactor%u: %s: KEEPALIVE before LOGIN (%s): closing",
			  tgt_reactor_id(c->r), c->peer,
			  rblk_status_str(RBLK_S_NOT_LOGGED_IN));
		tgt_conn_fatal(c, RBLK_S_NOT_LOGGED_IN, RBLK_PDU_KEEPALIVE, NULL);
		return -ECONNABORTED;
	}
	st = rblk_decode_keepalive(buf, len, RBLK_PDU_KEEPALIVE, &status, &seq, NULL);
	if (st != RBLK_S_OK) {
		/* [V33]: told, like a framing error, then closed. */
		rblk_warn("reactor%u: %s: malformed KEEPALIVE (%s): closing",
			  tgt_reactor_id(c->r), c->peer, rblk_status_str(st));
		tgt_conn_fatal(c, st, RBLK_PDU_KEEPALIVE, NULL);
		return -ECONNABORTED;
	}
	status = c->state == TGT_CONN_CLOSING ? RBLK_S_SHUTTING_DOWN : RBLK_S_OK;
	size = 0;
	if (c->sess && !session_behind(c, &size))
		size = c->sess->size;
	if (c->ops->send_pdu(c, pdu, rblk_encode_keepalive(pdu, RBLK_PDU_KEEPALIVE_RSP,
							   status, seq, size)))
		return -ENOMEM;
	if (c->sess && size > c->sess->size)
		session_grow(c, size);
	return 0;
}

static int conn_pdu(struct tgt_conn *c, uint8_t type, const void *buf,
		    size_t have, uint32_t pdu_len)
{
	if (c->refused && c->state == TGT_CONN_NEW) {
		/* Over max_connections(_per_host): the client reads why. */
		tgt_conn_fatal(c, RBLK_S_NO_RESOURCES, type,
			       c->refused == -EMFILE ?
			       "refused: max_connections_per_host reached for this address" :
			       "refused: max_connections reached");
		return -ECONNABORTED;
	}
	switch (type) {
	case RBLK_PDU_CMD:
		return tgt_conn_cmd(c, buf, have, pdu_len);
	case RBLK_PDU_LOGIN:
		if (c->state == TGT_CONN_CLOSING)
			return -ECONNABORTED;
		return handle_login(c, buf, pdu_len);
	case RBLK_PDU_DISCOVER:
		if (c->state == TGT_CONN_CLOSING)
			return -ECONNABORTED;
		return handle_discover(c, buf, pdu_len);
	case RBLK_PDU_KEEPALIVE:
		return handle_keepalive(c, buf, pdu_len);
	default:
		rblk_warn("reactor%u: %s: unexpected PDU type %u for a target: closing",
			  tgt_reactor_id(c->r), c->peer, type);
		tgt_conn_fatal(c, RBLK_S_INVALID_OPCODE, type, NULL);
		return -ECONNABORTED;
	}
}

int tgt_conn_pdu(struct tgt_conn *c, const void *buf, size_t have,
		 uint32_t pdu_len)
{
	uint8_t type = rblk_pdu_type(buf);
	int ret;

	if (c->state == TGT_CONN_CLOSING && !c->draining)
		return -ECONNABORTED;
	ret = conn_pdu(c, type, buf, have, pdu_len);
	/* A chunk set aside for this PDU while it waited, that it did not
	 * take (refused, or answered SHUTTING_DOWN), goes back. */
	if (ret != -EAGAIN)
		tgt_share_drop_grant(c);
	/*
	 * A PDU left waiting for memory (-EAGAIN: back-pressure) is offered
	 * again each time a chunk is freed on this reactor; only a taken one
	 * is activity, or a client that never takes its answers would look
	 * busy for as long as others do I/O and never meet idle_timeout.
	 */
	if (ret != -EAGAIN)
		c->last_rx_ms = tgt_reactor_now_ms(c->r);
	return ret;
}
