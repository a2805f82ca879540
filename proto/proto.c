// SPDX-License-Identifier: MIT
/*
 * Encode, decode and validate rblk PDUs.  This is the only file that knows
 * the byte order of the wire: everything is little-endian, converted with
 * the htole and le-toh families from <endian.h>.  Decoders check every field they can without knowing the
 * volume; rblk_check_cmd_range() does the volume-dependent part.  The rules
 * here are the ones docs/protocol.md states, case by case.
 */
#include "rblk_proto.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void put_hdr(struct rblk_wire_hdr *h, uint8_t type, uint32_t length)
{
	h->type = type;
	h->version = RBLK_PROTO_VERSION;
	h->rsvd = 0;
	h->length = htole32(length);
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* Copies a host string into a fixed NUL-padded wire field (truncating). */
static void put_name(char *dst, const char *src)
{
	size_t n = src ? strnlen(src, RBLK_NAME_MAX - 1) : 0;

	memset(dst, 0, RBLK_NAME_MAX);
	memcpy(dst, src ? src : "", n);
}

/*
 * A wire name must be NUL-terminated inside its field, NUL-padded to its
 * end, and valid [V10, V32].  Refusing bytes after the NUL keeps one name
 * one byte string: the LOGIN MACs cover the raw 64-byte field, and a peer
 * must not smuggle data past what logs and ACLs show.
 */
static int get_name(char *dst, const char *src)
{
	const char *nul = memchr(src, '\0', RBLK_NAME_MAX);

	if (!nul || !all_zero(nul, RBLK_NAME_MAX - (size_t)(nul - src)))
		return RBLK_S_INVALID_FIELD;
	memcpy(dst, src, RBLK_NAME_MAX);
	return rblk_name_valid(dst) ? RBLK_S_INVALID_FIELD : RBLK_S_OK;
}

int rblk_name_valid(const char *name)
{
	size_t n = strnlen(name, RBLK_NAME_MAX);

	if (n == 0 || n >= RBLK_NAME_MAX || name[0] == '-' ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-' || c == ':'))
			return -EINVAL;
	}
	return 0;
}

/* ---- status / opcode names ------------------------------------------- */

static const char *const status_names[RBLK_S__MAX] = {
	[RBLK_S_OK]		= "ok",
	[RBLK_S_INVALID_OPCODE]	= "invalid opcode",
	[RBLK_S_INVALID_FIELD]	= "invalid field",
	[RBLK_S_OUT_OF_RANGE]	= "out of range",
	[RBLK_S_MISALIGNED]	= "misaligned offset or length",
	[RBLK_S_TOO_LARGE]	= "transfer too large",
	[RBLK_S_READ_ONLY]	= "volume is read-only",
	[RBLK_S_NOT_SUPPORTED]	= "not supported by this volume",
	[RBLK_S_IO_ERROR]	= "I/O error",
	[RBLK_S_NO_SUCH_VOLUME]	= "no such volume",
	[RBLK_S_ACCESS_DENIED]	= "access denied",
	[RBLK_S_AUTH_REQUIRED]	= "authentication required",
	[RBLK_S_AUTH_FAILED]	= "authentication failed",
	[RBLK_S_BAD_VERSION]	= "unsupported protocol version",
	[RBLK_S_BAD_TAG]	= "bad tag",
	[RBLK_S_REMOTE_ACCESS]	= "remote memory access failed",
	[RBLK_S_NO_RESOURCES]	= "target out of resources",
	[RBLK_S_SHUTTING_DOWN]	= "target shutting down",
	[RBLK_S_NOT_LOGGED_IN]	= "not logged in",
};

const char *rblk_vol_flags_str(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"READ_ONLY", "FLUSH", "FUA", "DISCARD", "WRITE_ZEROES",
	};
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 5; i++)
		if (flags & (1u << i))
			n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
				      n ? "," : "", names[i]);
	if (!n)
		snprintf(buf, len, "-");
	return buf;
}

const char *rblk_status_str(int status)
{
	if (status < 0 || status >= RBLK_S__MAX || !status_names[status])
		return "unknown status";
	return status_names[status];
}

int rblk_status_to_errno(int status)
{
	switch (status) {
	case RBLK_S_OK:			return 0;
	case RBLK_S_INVALID_OPCODE:
	case RBLK_S_NOT_SUPPORTED:	return -EOPNOTSUPP;
	case RBLK_S_INVALID_FIELD:
	case RBLK_S_MISALIGNED:
	case RBLK_S_BAD_TAG:		return -EINVAL;
	case RBLK_S_OUT_OF_RANGE:	return -ERANGE;
	case RBLK_S_TOO_LARGE:		return -E2BIG;
	case RBLK_S_READ_ONLY:		return -EROFS;
	case RBLK_S_NO_SUCH_VOLUME:	return -ENOENT;
	case RBLK_S_ACCESS_DENIED:
	case RBLK_S_AUTH_REQUIRED:
	case RBLK_S_AUTH_FAILED:	return -EACCES;
	case RBLK_S_BAD_VERSION:	return -EPROTO;
	case RBLK_S_NO_RESOURCES:	return -ENOMEM;
	case RBLK_S_SHUTTING_DOWN:	return -ESHUTDOWN;
	case RBLK_S_NOT_LOGGED_IN:	return -ENOTCONN;
	case RBLK_S_REMOTE_ACCESS:
	case RBLK_S_IO_ERROR:
	default:			return -EIO;
	}
}

const char *rblk_opcode_str(int opcode)
{
	switch (opcode) {
	case RBLK_OP_READ:		return "READ";
	case RBLK_OP_WRITE:		return "WRITE";
	case RBLK_OP_FLUSH:		return "FLUSH";
	case RBLK_OP_DISCARD:		return "DISCARD";
	case RBLK_OP_WRITE_ZEROES:	return "WRITE_ZEROES";
	default:			return "?";
	}
}

/* ---- header ------------------------------------------------------------ */

size_t rblk_pdu_fixed_size(uint8_t type)
{
	switch (type) {
	case RBLK_PDU_LOGIN:		return sizeof(struct rblk_wire_login);
	case RBLK_PDU_LOGIN_RSP:	return sizeof(struct rblk_wire_login_rsp);
	case RBLK_PDU_CMD:		return sizeof(struct rblk_wire_cmd);
	case RBLK_PDU_RSP:		return sizeof(struct rblk_wire_rsp);
	case RBLK_PDU_DISCOVER:		return sizeof(struct rblk_wire_discover);
	case RBLK_PDU_DISCOVER_RSP:	return sizeof(struct rblk_wire_discover_rsp);
	case RBLK_PDU_KEEPALIVE:
	case RBLK_PDU_KEEPALIVE_RSP:	return sizeof(struct rblk_wire_keepalive);
	default:			return 0;
	}
}

uint8_t rblk_pdu_type(const void *pdu)
{
	return ((const uint8_t *)pdu)[offsetof(struct rblk_wire_hdr, type)];
}

int rblk_decode_hdr(const void *buf, size_t avail, uint32_t max_len,
		    uint8_t *type, uint32_t *length)
{
	struct rblk_wire_hdr h;
	size_t fixed;

	if (avail < sizeof(h))
		return RBLK_S_INVALID_FIELD;
	memcpy(&h, buf, sizeof(h));
	*type = h.type;
	*length = le32toh(h.length);
	/* Version first: a future peer may have changed everything else. */
	if (h.version != RBLK_PROTO_VERSION)
		return RBLK_S_BAD_VERSION;
	fixed = rblk_pdu_fixed_size(h.type);
	if (!fixed)
		return RBLK_S_INVALID_OPCODE;
	if (h.rsvd)
		return RBLK_S_INVALID_FIELD;
	if (*length < fixed)
		return RBLK_S_INVALID_FIELD;
	if (*length > max_len)
		return RBLK_S_TOO_LARGE;
	return RBLK_S_OK;
}

/* Common part of every decoder: the header matches what the caller holds. */
static int check_pdu(const void *buf, size_t len, uint8_t want_type)
{
	uint8_t type;
	uint32_t length;
	int st = rblk_decode_hdr(buf, len, UINT32_MAX, &type, &length);

	if (st != RBLK_S_OK)
		return st;
	if (type != want_type)
		return RBLK_S_INVALID_OPCODE;
	if (length != len)
		return RBLK_S_INVALID_FIELD;
	return RBLK_S_OK;
}

/* ---- LOGIN ------------------------------------------------------------- */

size_t rblk_encode_login(void *buf, const struct rblk_login *l)
{
	struct rblk_wire_login w;

	memset(&w, 0, sizeof(w));
	put_hdr(&w.hdr, RBLK_PDU_LOGIN, sizeof(w));
	w.magic = htole32(RBLK_MAGIC);
	w.queue_id = htole16(l->queue_id);
	w.queue_depth = htole16(l->queue_depth);
	w.flags = htole32(l->flags);
	put_name(w.volume, l->volume);
	put_name(w.host, l->host);
	memcpy(w.auth_mac, l->auth_mac, RBLK_MAC_LEN);
	memcpy(w.ini_nonce, l->ini_nonce, RBLK_NONCE_LEN);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

int rblk_decode_login(const void *buf, size_t len, struct rblk_login *l)
{
	struct rblk_wire_login w;
	int st = check_pdu(buf, len, RBLK_PDU_LOGIN);

	if (st != RBLK_S_OK)
		return st;
	if (len != sizeof(w))
		return RBLK_S_INVALID_FIELD;
	memcpy(&w, buf, sizeof(w));
	if (le32toh(w.magic) != RBLK_MAGIC)
		return RBLK_S_INVALID_FIELD;
	/* An initiator nonce only makes sense with the MAC it rides with. */
	if (w.flags || w.rsvd ||
	    (all_zero(w.auth_mac, RBLK_MAC_LEN) &&
	     !all_zero(w.ini_nonce, RBLK_NONCE_LEN)))
		return RBLK_S_INVALID_FIELD;
	memset(l, 0, sizeof(*l));
	l->queue_id = le16toh(w.queue_id);
	l->queue_depth = le16toh(w.queue_depth);
	if (l->queue_depth == 0)
		return RBLK_S_INVALID_FIELD;
	st = get_name(l->volume, w.volume);
	if (st == RBLK_S_OK)
		st = get_name(l->host, w.host);
	if (st != RBLK_S_OK)
		return st;
	memcpy(l->auth_mac, w.auth_mac, RBLK_MAC_LEN);
	memcpy(l->ini_nonce, w.ini_nonce, RBLK_NONCE_LEN);
	l->has_mac = !all_zero(w.auth_mac, RBLK_MAC_LEN);
	return RBLK_S_OK;
}

size_t rblk_encode_login_rsp(void *buf, const struct rblk_login_rsp *r)
{
	struct rblk_wire_login_rsp w;

	memset(&w, 0, sizeof(w));
	put_hdr(&w.hdr, RBLK_PDU_LOGIN_RSP, sizeof(w));
	w.status = htole16(r->status);
	w.queue_depth = htole16(r->queue_depth);
	w.vol_flags = htole32(r->vol_flags);
	w.size = htole64(r->size);
	w.block_size = htole32(r->block_size);
	w.max_io = htole32(r->max_io);
	w.inline_size = htole32(r->inline_size);
	w.max_sge = htole16(r->max_sge);
	w.session_id = htole64(r->session_id);
	memcpy(w.auth, r->auth, RBLK_NONCE_LEN);
	w.max_discard = htole32(r->max_discard);
	w.max_write_zeroes = htole32(r->max_write_zeroes);
	memcpy(w.vol_uuid, r->vol_uuid, RBLK_UUID_LEN);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

/* A DISCARD / WRITE_ZEROES limit: a block multiple of at least one block
 * when the volume offers the command, else 0. */
static int range_limit_ok(uint32_t max, uint32_t block_size, uint32_t offered)
{
	if (!offered)
		return max == 0;
	return max >= block_size && max % block_size == 0;
}

int rblk_decode_login_rsp(const void *buf, size_t len, struct rblk_login_rsp *r)
{
	struct rblk_wire_login_rsp w;
	int st = check_pdu(buf, len, RBLK_PDU_LOGIN_RSP);

	if (st != RBLK_S_OK)
		return st;
	if (len != sizeof(w))
		return RBLK_S_INVALID_FIELD;
	memcpy(&w, buf, sizeof(w));
	memset(r, 0, sizeof(*r));
	r->status = le16toh(w.status);
	r->queue_depth = le16toh(w.queue_depth);
	r->vol_flags = le32toh(w.vol_flags);
	r->size = le64toh(w.size);
	r->block_size = le32toh(w.block_size);
	r->max_io = le32toh(w.max_io);
	r->inline_size = le32toh(w.inline_size);
	r->max_sge = le16toh(w.max_sge);
	r->session_id = le64toh(w.session_id);
	memcpy(r->auth, w.auth, RBLK_NONCE_LEN);
	r->max_discard = le32toh(w.max_discard);
	r->max_write_zeroes = le32toh(w.max_write_zeroes);
	memcpy(r->vol_uuid, w.vol_uuid, RBLK_UUID_LEN);
	if (r->status != RBLK_S_OK)
		return RBLK_S_OK;	/* a refusal carries no geometry */
	/* Geometry the initiator will build a block device from. */
	if ((r->block_size != 512 && r->block_size != 4096) ||
	    r->size % r->block_size || r->queue_depth == 0 ||
	    r->queue_depth > RBLK_MAX_QUEUE_DEPTH ||
	    r->max_io < r->block_size || r->max_io > RBLK_MAX_IO_SIZE ||
	    r->max_io % r->block_size || r->inline_size > RBLK_MAX_INLINE ||
	    r->max_sge == 0 || r->max_sge > RBLK_MAX_SGE ||
	    (r->vol_flags & ~RBLK_VOL_F__ALL))
		return RBLK_S_INVALID_FIELD;
	/* [V34] */
	if (!range_limit_ok(r->max_discard, r->block_size,
			    r->vol_flags & RBLK_VOL_F_DISCARD) ||
	    !range_limit_ok(r->max_write_zeroes, r->block_size,
			    r->vol_flags & RBLK_VOL_F_WRITE_ZEROES) ||
	    !all_zero(w.rsvd2, sizeof(w.rsvd2)))
		return RBLK_S_INVALID_FIELD;
	return RBLK_S_OK;
}

/* ---- CMD / RSP ----------------------------------------------------------- */

size_t rblk_encode_cmd(void *buf, const struct rblk_cmd *c, uint32_t total_len)
{
	struct rblk_wire_cmd w;

	memset(&w, 0, sizeof(w));
	put_hdr(&w.hdr, RBLK_PDU_CMD, total_len);
	w.opcode = c->opcode;
	w.flags = c->flags;
	w.nsge = htole16(c->nsge);
	w.tag = htole32(c->tag);
	w.offset = htole64(c->offset);
	w.length = htole32(c->length);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

size_t rblk_encode_sge(void *buf, const struct rblk_sge *s)
{
	struct rblk_wire_sge w = {
		.addr = htole64(s->addr),
		.rkey = htole32(s->rkey),
		.length = htole32(s->length),
	};

	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

/* Which flags each opcode may carry. */
static uint8_t allowed_flags(uint8_t opcode)
{
	switch (opcode) {
	case RBLK_OP_WRITE:
	case RBLK_OP_WRITE_ZEROES:
		return RBLK_CMD_F_FUA;
	default:
		return 0;
	}
}

int rblk_decode_cmd(const void *buf, size_t len,
		    const struct rblk_cmd_limits *lim,
		    struct rblk_cmd *c, struct rblk_sge *sgl)
{
	struct rblk_wire_cmd w;
	size_t sgl_bytes;
	uint64_t sgl_total = 0;
	uint32_t max;
	int st = check_pdu(buf, len, RBLK_PDU_CMD);

	if (st != RBLK_S_OK)
		return st;
	memcpy(&w, buf, sizeof(w));
	memset(c, 0, sizeof(*c));
	c->opcode = w.opcode;
	c->flags = w.flags;
	c->nsge = le16toh(w.nsge);
	c->tag = le32toh(w.tag);
	c->offset = le64toh(w.offset);
	c->length = le32toh(w.length);

	/* The tag first, so every later error can be answered on it. */
	if (c->tag >= lim->queue_depth)
		return RBLK_S_BAD_TAG;
	if (c->opcode < RBLK_OP_READ || c->opcode > RBLK_OP_WRITE_ZEROES)
		return RBLK_S_INVALID_OPCODE;
	if (c->flags & ~allowed_flags(c->opcode))
		return RBLK_S_INVALID_FIELD;
	if (w.rsvd0 || !all_zero(w.rsvd, sizeof(w.rsvd)))
		return RBLK_S_INVALID_FIELD;
	if (c->nsge > lim->max_sge || (lim->tcp && c->nsge))
		return RBLK_S_TOO_LARGE;
	sgl_bytes = (size_t)c->nsge * sizeof(struct rblk_wire_sge);
	if (len < sizeof(w) + sgl_bytes)
		return RBLK_S_INVALID_FIELD;
	c->inline_len = len - sizeof(w) - sgl_bytes;

	switch (c->opcode) {
	case RBLK_OP_FLUSH:
		if (c->length || c->nsge || c->inline_len)
			return RBLK_S_INVALID_FIELD;
		return RBLK_S_OK;
	case RBLK_OP_DISCARD:
	case RBLK_OP_WRITE_ZEROES:
		if (c->nsge || c->inline_len)
			return RBLK_S_INVALID_FIELD;
		if (c->length == 0)
			return RBLK_S_INVALID_FIELD;
		/* No data moves, so max_io does not bound these; their own
		 * limit does [V34]. */
		max = c->opcode == RBLK_OP_DISCARD ? lim->max_discard
						   : lim->max_write_zeroes;
		if (max && c->length > max)
			return RBLK_S_TOO_LARGE;
		return RBLK_S_OK;
	default:
		break;
	}

	/* READ / WRITE */
	if (c->length == 0)
		return RBLK_S_INVALID_FIELD;
	if (c->length > lim->max_io)
		return RBLK_S_TOO_LARGE;
	if (c->inline_len) {
		if (c->opcode != RBLK_OP_WRITE || c->nsge ||
		    c->inline_len != c->length)
			return RBLK_S_INVALID_FIELD;
		if (!lim->tcp && c->inline_len > lim->inline_size)
			return RBLK_S_TOO_LARGE;
		return RBLK_S_OK;
	}
	if (lim->tcp) {
		/* On TCP, WRITE data is in-band and READ needs no SGL. */
		return c->opcode == RBLK_OP_WRITE ? RBLK_S_INVALID_FIELD
						  : RBLK_S_OK;
	}
	if (c->nsge == 0)
		return RBLK_S_INVALID_FIELD;
	for (unsigned i = 0; i < c->nsge; i++) {
		struct rblk_wire_sge ws;

		memcpy(&ws, (const uint8_t *)buf + sizeof(w) + i * sizeof(ws),
		       sizeof(ws));
		sgl[i].addr = le64toh(ws.addr);
		sgl[i].rkey = le32toh(ws.rkey);
		sgl[i].length = le32toh(ws.length);
		if (sgl[i].length == 0)
			return RBLK_S_INVALID_FIELD;
		sgl_total += sgl[i].length;
	}
	if (sgl_total != c->length)
		return RBLK_S_INVALID_FIELD;
	return RBLK_S_OK;
}

int rblk_check_cmd_range(const struct rblk_cmd *c, uint64_t size,
			 uint32_t block_size, uint32_t vol_flags)
{
	int writes = c->opcode != RBLK_OP_READ;

	/* FLUSH has no range (ublk even sends it with offset ~0). */
	if (c->opcode == RBLK_OP_FLUSH)
		return RBLK_S_OK;
	if (writes && (vol_flags & RBLK_VOL_F_READ_ONLY))
		return RBLK_S_READ_ONLY;
	if (c->opcode == RBLK_OP_DISCARD && !(vol_flags & RBLK_VOL_F_DISCARD))
		return RBLK_S_NOT_SUPPORTED;
	if (c->opcode == RBLK_OP_WRITE_ZEROES &&
	    !(vol_flags & RBLK_VOL_F_WRITE_ZEROES))
		return RBLK_S_NOT_SUPPORTED;
	if ((c->flags & RBLK_CMD_F_FUA) && !(vol_flags & RBLK_VOL_F_FUA))
		return RBLK_S_NOT_SUPPORTED;
	if (c->offset % block_size || c->length % block_size)
		return RBLK_S_MISALIGNED;
	/* Written so that offset + length cannot overflow. */
	if (c->offset > size || c->length > size - c->offset)
		return RBLK_S_OUT_OF_RANGE;
	return RBLK_S_OK;
}

size_t rblk_encode_rsp(void *buf, const struct rblk_rsp *r, uint32_t data_len)
{
	struct rblk_wire_rsp w;

	memset(&w, 0, sizeof(w));
	put_hdr(&w.hdr, RBLK_PDU_RSP, sizeof(w) + data_len);
	w.tag = htole32(r->tag);
	w.status = htole16(r->status);
	w.value = htole64(r->value);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

int rblk_decode_rsp(const void *buf, size_t len, struct rblk_rsp *r)
{
	struct rblk_wire_rsp w;
	uint8_t type;
	uint32_t length;
	int st;

	/* len is the fixed part only: READ data may follow on TCP. */
	if (len < sizeof(w))
		return RBLK_S_INVALID_FIELD;
	st = rblk_decode_hdr(buf, len, UINT32_MAX, &type, &length);
	if (st != RBLK_S_OK)
		return st;
	if (type != RBLK_PDU_RSP)
		return RBLK_S_INVALID_OPCODE;
	memcpy(&w, buf, sizeof(w));
	if (w.rsvd)
		return RBLK_S_INVALID_FIELD;
	r->tag = le32toh(w.tag);
	r->status = le16toh(w.status);
	r->value = le64toh(w.value);
	if (r->status >= RBLK_S__MAX)
		return RBLK_S_INVALID_FIELD;
	/* Data follows only a successful READ, and then exactly value bytes. */
	if (length > sizeof(w) &&
	    (r->status != RBLK_S_OK || length - sizeof(w) != r->value))
		return RBLK_S_INVALID_FIELD;
	return RBLK_S_OK;
}

/* ---- KEEPALIVE --------------------------------------------------------- */

size_t rblk_encode_keepalive(void *buf, uint8_t type, uint16_t status,
			     uint64_t seq, uint64_t size)
{
	struct rblk_wire_keepalive_rsp w;
	size_t len = type == RBLK_PDU_KEEPALIVE_RSP ? sizeof(w) : sizeof(w.ka);

	memset(&w, 0, sizeof(w));
	put_hdr(&w.ka.hdr, type, (uint32_t)len);
	w.ka.status = htole16(status);
	w.ka.seq = htole64(seq);
	w.size = htole64(size);
	memcpy(buf, &w, len);
	return len;
}

int rblk_decode_keepalive(const void *buf, size_t len, uint8_t type,
			  uint16_t *status, uint64_t *seq, uint64_t *size)
{
	struct rblk_wire_keepalive_rsp w;
	int st = check_pdu(buf, len, type);

	if (st != RBLK_S_OK)
		return st;
	memset(&w, 0, sizeof(w));
	if (len != sizeof(w.ka) &&
	    (type != RBLK_PDU_KEEPALIVE_RSP || len != sizeof(w)))
		return RBLK_S_INVALID_FIELD;
	memcpy(&w, buf, len);
	if (w.ka.rsvd || w.ka.rsvd2)
		return RBLK_S_INVALID_FIELD;
	*status = le16toh(w.ka.status);
	*seq = le64toh(w.ka.seq);
	if (size)
		*size = le64toh(w.size);
	if (*status >= RBLK_S__MAX ||
	    (type == RBLK_PDU_KEEPALIVE && *status != RBLK_S_OK))
		return RBLK_S_INVALID_FIELD;
	return RBLK_S_OK;
}

/* ---- DISCOVER ---------------------------------------------------------- */

size_t rblk_encode_discover(void *buf, const char *host)
{
	struct rblk_wire_discover w;

	memset(&w, 0, sizeof(w));
	put_hdr(&w.hdr, RBLK_PDU_DISCOVER, sizeof(w));
	w.magic = htole32(RBLK_MAGIC);
	put_name(w.host, host);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

int rblk_decode_discover(const void *buf, size_t len, char *host)
{
	struct rblk_wire_discover w;
	int st = check_pdu(buf, len, RBLK_PDU_DISCOVER);

	if (st != RBLK_S_OK)
		return st;
	if (len != sizeof(w))
		return RBLK_S_INVALID_FIELD;
	memcpy(&w, buf, sizeof(w));
	if (le32toh(w.magic) != RBLK_MAGIC || w.rsvd)
		return RBLK_S_INVALID_FIELD;
	return get_name(host, w.host);
}

size_t rblk_encode_discover_rsp(void *buf, uint16_t status, uint16_t count,
				uint32_t flags)
{
	struct rblk_wire_discover_rsp w;

	memset(&w, 0, sizeof(w));
	put_hdr(&w.hdr, RBLK_PDU_DISCOVER_RSP,
		sizeof(w) + count * sizeof(struct rblk_wire_discover_entry));
	w.status = htole16(status);
	w.count = htole16(count);
	w.flags = htole32(flags);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

int rblk_decode_discover_rsp(const void *buf, size_t len, uint16_t *status,
			     uint16_t *count, uint32_t *flags)
{
	struct rblk_wire_discover_rsp w;
	uint8_t type;
	uint32_t length;
	int st;

	if (len < sizeof(w))
		return RBLK_S_INVALID_FIELD;
	st = rblk_decode_hdr(buf, len, UINT32_MAX, &type, &length);
	if (st != RBLK_S_OK)
		return st;
	if (type != RBLK_PDU_DISCOVER_RSP)
		return RBLK_S_INVALID_OPCODE;
	memcpy(&w, buf, sizeof(w));
	*status = le16toh(w.status);
	*count = le16toh(w.count);
	if (flags)
		*flags = le32toh(w.flags);
	if (*count > RBLK_DISCOVER_MAX || (le32toh(w.flags) & ~RBLK_DISCOVER_F_CUT) ||
	    length != sizeof(w) + *count * sizeof(struct rblk_wire_discover_entry))
		return RBLK_S_INVALID_FIELD;
	return RBLK_S_OK;
}

size_t rblk_encode_discover_entry(void *buf, const struct rblk_discover_entry *e)
{
	struct rblk_wire_discover_entry w;

	memset(&w, 0, sizeof(w));
	put_name(w.volume, e->volume);
	w.size = htole64(e->size);
	w.vol_flags = htole32(e->vol_flags);
	w.block_size = htole32(e->block_size);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

int rblk_decode_discover_entry(const void *buf, struct rblk_discover_entry *e)
{
	struct rblk_wire_discover_entry w;

	memcpy(&w, buf, sizeof(w));
	e->size = le64toh(w.size);
	e->vol_flags = le32toh(w.vol_flags);
	e->block_size = le32toh(w.block_size);
	return get_name(e->volume, w.volume);
}
