/* SPDX-License-Identifier: MIT */
/*
 * rblk wire format.  Every multi-byte field is little-endian on the wire.
 * The structs below are the *wire* layout (packed by construction, checked
 * with _Static_assert); code outside proto/ never touches them directly but
 * goes through the host-order views and encode/decode/validate functions at
 * the bottom of this file.  docs/protocol.md is the normative description.
 */
#ifndef RBLK_PROTO_RBLK_PROTO_H
#define RBLK_PROTO_RBLK_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* 2: mutual authentication (LOGIN ini_nonce, LOGIN_RSP target proof). */
#define RBLK_PROTO_VERSION	2
#define RBLK_DEFAULT_TCP_PORT	4420	/* same well-known number as NVMe-oF */
#define RBLK_DEFAULT_RDMA_PORT	4421

#define RBLK_NAME_MAX		64	/* volume and host names, incl. NUL */
#define RBLK_NONCE_LEN		32
#define RBLK_MAC_LEN		32	/* HMAC-SHA-256 */

/* Limits the target enforces; a peer that asks for more is refused. */
#define RBLK_MAX_QUEUE_DEPTH	1024
#define RBLK_MAX_IO_SIZE	(1u << 20)	/* 1 MiB per command */
#define RBLK_MAX_SGE		16		/* keyed descriptors per command */
#define RBLK_MAX_INLINE		(64u << 10)
#define RBLK_DEFAULT_INLINE	4096
/*
 * Largest DISCARD / WRITE_ZEROES the target accepts (LOGIN_RSP, [V34]).
 * No data moves, but on a block device the kernel turns a zero-out the
 * device cannot offload into writes of zero pages: 128 MiB is about a
 * second on a slow disk, so one command cannot hold the backend's worker
 * for long.  Discard is only a hint and usually offloaded: 1 GiB.
 */
#define RBLK_DEFAULT_MAX_DISCARD	(1u << 30)
#define RBLK_DEFAULT_MAX_WRITE_ZEROES	(128u << 20)

/* ---- PDU header: first 8 bytes of every message ------------------------ */

enum rblk_pdu_type {
	RBLK_PDU_LOGIN		= 1,	/* initiator -> target */
	RBLK_PDU_LOGIN_RSP	= 2,	/* target -> initiator */
	RBLK_PDU_CMD		= 3,	/* initiator -> target */
	RBLK_PDU_RSP		= 4,	/* target -> initiator */
	RBLK_PDU_DISCOVER	= 5,	/* initiator -> target */
	RBLK_PDU_DISCOVER_RSP	= 6,	/* target -> initiator */
	RBLK_PDU_KEEPALIVE	= 7,	/* initiator -> target, after LOGIN */
	RBLK_PDU_KEEPALIVE_RSP	= 8,	/* target -> initiator: answer or notice */
};

struct rblk_wire_hdr {
	uint8_t  type;		/* enum rblk_pdu_type */
	uint8_t  version;	/* RBLK_PROTO_VERSION */
	uint16_t rsvd;		/* must be 0 */
	uint32_t length;	/* whole PDU in bytes, header included */
};
_Static_assert(sizeof(struct rblk_wire_hdr) == 8, "wire hdr size");

/* ---- status codes (16 bit on the wire) -------------------------------- */

enum rblk_status {
	RBLK_S_OK		= 0,
	RBLK_S_INVALID_OPCODE	= 1,	/* unknown opcode or PDU type */
	RBLK_S_INVALID_FIELD	= 2,	/* reserved bit set, bad flags, bad sizes */
	RBLK_S_OUT_OF_RANGE	= 3,	/* offset+length beyond the volume */
	RBLK_S_MISALIGNED	= 4,	/* offset/length not block multiples */
	RBLK_S_TOO_LARGE	= 5,	/* length above max I/O or SGL above limits */
	RBLK_S_READ_ONLY	= 6,	/* write-class command on a read-only volume */
	RBLK_S_NOT_SUPPORTED	= 7,	/* volume cannot do this command */
	RBLK_S_IO_ERROR		= 8,	/* backing store failed */
	RBLK_S_NO_SUCH_VOLUME	= 9,
	RBLK_S_ACCESS_DENIED	= 10,	/* host not allowed on this volume */
	RBLK_S_AUTH_REQUIRED	= 11,	/* LOGIN_RSP carries a nonce; retry with MAC */
	RBLK_S_AUTH_FAILED	= 12,
	RBLK_S_BAD_VERSION	= 13,
	RBLK_S_BAD_TAG		= 14,	/* tag out of range or already in flight */
	RBLK_S_REMOTE_ACCESS	= 15,	/* RDMA transfer to/from initiator failed */
	RBLK_S_NO_RESOURCES	= 16,	/* target out of memory/buffers */
	RBLK_S_SHUTTING_DOWN	= 17,	/* target is stopping; command not run */
	RBLK_S_NOT_LOGGED_IN	= 18,	/* command before a successful LOGIN */
	RBLK_S__MAX
};

/* Returns a static, human-readable name for a status ("out of range"). */
const char *rblk_status_str(int status);
/* RBLK_VOL_F_* as "FLUSH,FUA,..." ("-" for none), the same in every
 * program's output.  Returns buf. */
const char *rblk_vol_flags_str(uint32_t flags, char *buf, size_t len);
/* Maps a status to the closest -errno for block-layer users (0 for OK). */
int rblk_status_to_errno(int status);

/* ---- LOGIN / LOGIN_RSP ------------------------------------------------- */

/* LOGIN flags */
#define RBLK_LOGIN_F_DATA_DIGEST	(1u << 0)	/* reserved for crc32c digests */

struct rblk_wire_login {
	struct rblk_wire_hdr hdr;
	uint32_t magic;			/* RBLK_MAGIC */
	uint16_t queue_id;		/* 0..n-1, informational */
	uint16_t queue_depth;		/* wanted; target may lower it */
	uint32_t flags;			/* must be 0 in version 2 */
	uint32_t rsvd;
	char     volume[RBLK_NAME_MAX];	/* NUL-terminated, NUL-padded */
	char     host[RBLK_NAME_MAX];	/* NUL-terminated, NUL-padded */
	uint8_t  auth_mac[RBLK_MAC_LEN];	/* zero unless answering a challenge */
	uint8_t  ini_nonce[RBLK_NONCE_LEN];	/* with auth_mac: the initiator's
						 * challenge to the target; else 0 */
};
_Static_assert(sizeof(struct rblk_wire_login) == 216, "login size");

#define RBLK_MAGIC	0x6b6c6272u	/* "rblk" in little-endian bytes */
#define RBLK_UUID_LEN	16	/* LOGIN_RSP vol_uuid */
/* LOGIN queue_id of a path probe (a multipath client checking a standby
 * path: it logs in and closes); targets log those quietly. */
#define RBLK_PROBE_QUEUE_ID	0xffffu

/* Volume capability flags in LOGIN_RSP. */
#define RBLK_VOL_F_READ_ONLY	(1u << 0)
#define RBLK_VOL_F_FLUSH	(1u << 1)	/* FLUSH is meaningful (volatile cache) */
#define RBLK_VOL_F_FUA		(1u << 2)
#define RBLK_VOL_F_DISCARD	(1u << 3)
#define RBLK_VOL_F_WRITE_ZEROES	(1u << 4)
#define RBLK_VOL_F__ALL		0x1fu

struct rblk_wire_login_rsp {
	struct rblk_wire_hdr hdr;
	uint16_t status;		/* enum rblk_status */
	uint16_t queue_depth;		/* granted depth (<= asked) */
	uint32_t vol_flags;		/* RBLK_VOL_F_* */
	uint64_t size;			/* volume size in bytes */
	uint32_t block_size;		/* logical block size: 512 or 4096 */
	uint32_t max_io;		/* bytes per command */
	uint32_t inline_size;		/* max WRITE bytes carried in the capsule */
	uint16_t max_sge;		/* keyed descriptors per command */
	uint16_t rsvd;
	uint64_t session_id;
	/* AUTH_REQUIRED: the target's challenge nonce.  OK after a
	 * challenge: the target's proof (see auth.h).  Otherwise 0. */
	uint8_t  auth[RBLK_NONCE_LEN];
	uint32_t max_discard;		/* bytes per DISCARD; 0 without F_DISCARD */
	uint32_t max_write_zeroes;	/* bytes per WRITE_ZEROES; 0 without it */
	uint8_t  rsvd2[8];
	/* The volume's identity: the same on every target that serves it
	 * (an RBD image: from the cluster fsid, pool id and image id).  A
	 * client with several paths checks that they reach one volume. */
	uint8_t  vol_uuid[RBLK_UUID_LEN];
};
_Static_assert(sizeof(struct rblk_wire_login_rsp) == 112, "login rsp size");

/* ---- command capsule -------------------------------------------------- */

enum rblk_opcode {
	RBLK_OP_READ		= 1,
	RBLK_OP_WRITE		= 2,
	RBLK_OP_FLUSH		= 3,
	RBLK_OP_DISCARD		= 4,
	RBLK_OP_WRITE_ZEROES	= 5,
};

#define RBLK_CMD_F_FUA		(1u << 0)	/* WRITE/WRITE_ZEROES: durable before reply */
#define RBLK_CMD_F__ALL		0x1u

/*
 * A command is this fixed 64-byte capsule, followed by nsge keyed
 * descriptors, followed by inline WRITE data (hdr.length tells how much).
 */
struct rblk_wire_cmd {
	struct rblk_wire_hdr hdr;
	uint8_t  opcode;		/* enum rblk_opcode */
	uint8_t  flags;			/* RBLK_CMD_F_* */
	uint16_t nsge;			/* descriptors following the capsule */
	uint32_t tag;			/* < negotiated queue depth */
	uint64_t offset;		/* bytes, block aligned */
	uint32_t length;		/* bytes, block aligned; 0 for FLUSH */
	uint32_t rsvd0;
	uint64_t rsvd[4];		/* must be 0 */
};
_Static_assert(sizeof(struct rblk_wire_cmd) == 64, "cmd size");

/* Keyed descriptor: a piece of initiator memory the target may RDMA. */
struct rblk_wire_sge {
	uint64_t addr;
	uint32_t rkey;
	uint32_t length;
};
_Static_assert(sizeof(struct rblk_wire_sge) == 16, "sge size");

/*
 * Largest PDU a target accepts [V5]: a capsule with max_sge descriptors
 * and max_io bytes of inline data, for the limits it grants at LOGIN (the
 * maxima above: 1 MiB + 320 bytes).  Larger is refused before the body.
 */
#define RBLK_MAX_PDU	(sizeof(struct rblk_wire_cmd) + \
			 RBLK_MAX_SGE * sizeof(struct rblk_wire_sge) + RBLK_MAX_IO_SIZE)

/*
 * Tag of a RSP that answers no command: the target reports a connection
 * error (bad header, PDU not allowed now) and closes.  Never a valid tag
 * (depth <= RBLK_MAX_QUEUE_DEPTH).
 */
#define RBLK_TAG_NONE	0xffffffffu

/* Response; on TCP the data of a successful READ follows it. */
struct rblk_wire_rsp {
	struct rblk_wire_hdr hdr;
	uint32_t tag;
	uint16_t status;		/* enum rblk_status */
	uint16_t rsvd;
	uint64_t value;			/* bytes transferred, 0 for no-data ops */
};
_Static_assert(sizeof(struct rblk_wire_rsp) == 24, "rsp size");

/* ---- KEEPALIVE / KEEPALIVE_RSP --------------------------------------- */

/*
 * KEEPALIVE: status 0, seq chosen by the initiator.  KEEPALIVE_RSP: the
 * same seq echoed with status OK, or SHUTTING_DOWN when the target is
 * stopping, and the volume's size now.  A target also sends one
 * unsolicited (seq 0): SHUTTING_DOWN when it starts to drain, OK with
 * the new size after the volume grew (docs/protocol.md).
 */
struct rblk_wire_keepalive {
	struct rblk_wire_hdr hdr;
	uint16_t status;		/* enum rblk_status; 0 in a KEEPALIVE */
	uint16_t rsvd;
	uint32_t rsvd2;
	uint64_t seq;
};
_Static_assert(sizeof(struct rblk_wire_keepalive) == 24, "keepalive size");

struct rblk_wire_keepalive_rsp {
	struct rblk_wire_keepalive ka;
	/* Bytes the session may address now; grows when the volume does.
	 * A 24-byte KEEPALIVE_RSP (a target before this field) says none. */
	uint64_t size;
};
_Static_assert(sizeof(struct rblk_wire_keepalive_rsp) == 32, "keepalive rsp size");

/* ---- DISCOVER / DISCOVER_RSP ----------------------------------------- */

struct rblk_wire_discover {
	struct rblk_wire_hdr hdr;
	uint32_t magic;
	uint32_t rsvd;
	char     host[RBLK_NAME_MAX];
};
_Static_assert(sizeof(struct rblk_wire_discover) == 80, "discover size");

struct rblk_wire_discover_entry {
	char     volume[RBLK_NAME_MAX];
	uint64_t size;
	uint32_t vol_flags;
	uint32_t block_size;
};
_Static_assert(sizeof(struct rblk_wire_discover_entry) == 80, "disc entry");

struct rblk_wire_discover_rsp {
	struct rblk_wire_hdr hdr;
	uint16_t status;
	uint16_t count;			/* entries following */
	uint32_t flags;			/* RBLK_DISCOVER_F_* */
};
_Static_assert(sizeof(struct rblk_wire_discover_rsp) == 16, "disc rsp");

#define RBLK_DISCOVER_MAX	256
/* The host may use more volumes than one answer lists (RBLK_DISCOVER_MAX):
 * these are the first ones, in the target's order. */
#define RBLK_DISCOVER_F_CUT	(1u << 0)

/* ---- host-order views -------------------------------------------------- */

/*
 * volume and host are the whole 64-byte wire fields, copied verbatim by
 * the decoder and zero-padded by whoever fills them for the encoder: the
 * authentication MACs cover these exact bytes (proto/auth.h).
 */
struct rblk_login {
	uint16_t queue_id;
	uint16_t queue_depth;
	uint32_t flags;
	char     volume[RBLK_NAME_MAX];
	char     host[RBLK_NAME_MAX];
	uint8_t  auth_mac[RBLK_MAC_LEN];
	uint8_t  ini_nonce[RBLK_NONCE_LEN];
	int      has_mac;		/* decode: auth_mac is not all zero */
};

struct rblk_login_rsp {
	uint16_t status;
	uint16_t queue_depth;
	uint32_t vol_flags;
	uint64_t size;
	uint32_t block_size;
	uint32_t max_io;
	uint32_t inline_size;
	uint16_t max_sge;
	uint64_t session_id;
	uint8_t  auth[RBLK_NONCE_LEN];	/* nonce or target proof, by status */
	uint32_t max_discard;
	uint32_t max_write_zeroes;
	uint8_t  vol_uuid[RBLK_UUID_LEN];
};

struct rblk_sge {
	uint64_t addr;
	uint32_t rkey;
	uint32_t length;
};

struct rblk_cmd {
	uint8_t  opcode;
	uint8_t  flags;
	uint16_t nsge;
	uint32_t tag;
	uint64_t offset;
	uint32_t length;
	uint32_t inline_len;		/* decode: bytes of inline data present */
};

struct rblk_rsp {
	uint32_t tag;
	uint16_t status;
	uint64_t value;
};

struct rblk_discover_entry {
	char     volume[RBLK_NAME_MAX];
	uint64_t size;
	uint32_t vol_flags;
	uint32_t block_size;
};

/* ---- encode / decode / validate -------------------------------------- */

/*
 * Encoders write the wire form into buf (which must hold the fixed struct)
 * and return the number of bytes written.  They never fail: the caller
 * passes sane values, and validation happens on the receiving side.
 */
size_t rblk_encode_login(void *buf, const struct rblk_login *l);
size_t rblk_encode_login_rsp(void *buf, const struct rblk_login_rsp *r);
/* total_len = capsule + nsge descriptors + inline bytes that will follow. */
size_t rblk_encode_cmd(void *buf, const struct rblk_cmd *c, uint32_t total_len);
size_t rblk_encode_sge(void *buf, const struct rblk_sge *s);
/* data_len = READ data that follows the response (TCP), else 0. */
size_t rblk_encode_rsp(void *buf, const struct rblk_rsp *r, uint32_t data_len);
size_t rblk_encode_discover(void *buf, const char *host);
size_t rblk_encode_discover_rsp(void *buf, uint16_t status, uint16_t count,
				uint32_t flags);
size_t rblk_encode_discover_entry(void *buf, const struct rblk_discover_entry *e);
/* type is RBLK_PDU_KEEPALIVE (status and size must be 0; 24 bytes) or
 * RBLK_PDU_KEEPALIVE_RSP (32 bytes: buf holds a rblk_wire_keepalive_rsp). */
size_t rblk_encode_keepalive(void *buf, uint8_t type, uint16_t status,
			     uint64_t seq, uint64_t size);

/*
 * Header check: type known, version supported, reserved zero, length within
 * [fixed size of that type, max_len].  Returns RBLK_S_OK or the status to
 * report; *type and *length are filled whenever the 8 bytes were readable.
 */
int rblk_decode_hdr(const void *buf, size_t avail, uint32_t max_len,
		    uint8_t *type, uint32_t *length);

/* Fixed size of a PDU type's leading struct, 0 for an unknown type. */
size_t rblk_pdu_fixed_size(uint8_t type);

/*
 * Type of a PDU whose header passed rblk_decode_hdr.  PDUs sit at any
 * offset of a receive buffer, so this (like every decoder) never reads a
 * wire struct in place.
 */
uint8_t rblk_pdu_type(const void *pdu);

/*
 * Decoders take a whole PDU (len = hdr.length bytes) that passed
 * rblk_decode_hdr, check every field that can be checked without knowing
 * the volume, and return RBLK_S_OK or the status to report.
 */
int rblk_decode_login(const void *buf, size_t len, struct rblk_login *l);
int rblk_decode_login_rsp(const void *buf, size_t len, struct rblk_login_rsp *r);
int rblk_decode_rsp(const void *buf, size_t len, struct rblk_rsp *r);
int rblk_decode_discover(const void *buf, size_t len, char *host);
/* flags (RBLK_DISCOVER_F_*) may be NULL; unknown bits are INVALID_FIELD. */
int rblk_decode_discover_rsp(const void *buf, size_t len, uint16_t *status,
			     uint16_t *count, uint32_t *flags);
int rblk_decode_discover_entry(const void *buf, struct rblk_discover_entry *e);
/* A KEEPALIVE or KEEPALIVE_RSP of type `type`: a KEEPALIVE exactly 24
 * bytes, a KEEPALIVE_RSP 32 (or 24 from an older target: *size 0),
 * reserved zero, status 0 in a KEEPALIVE and a known status in a
 * KEEPALIVE_RSP.  size may be NULL. */
int rblk_decode_keepalive(const void *buf, size_t len, uint8_t type,
			  uint16_t *status, uint64_t *seq, uint64_t *size);

/*
 * Command decode: fixed fields, opcode, flags valid for the opcode, reserved
 * zero, nsge <= limits->max_sge, tag < limits->queue_depth, inline data only
 * on WRITE and only up to limits->inline_size and exactly == length when
 * present, length <= max_io.  Descriptors are decoded into sgl (array of
 * limits->max_sge); their lengths must add up to cmd->length for READ/WRITE
 * without inline data.  On TCP (limits->tcp), WRITE data is always inline
 * (any size up to max_io) and nsge must be 0.  DISCARD / WRITE_ZEROES
 * longer than max_discard / max_write_zeroes are TOO_LARGE; 0 there means
 * unbounded (test clients only: the target always sets both).
 */
struct rblk_cmd_limits {
	uint32_t queue_depth;
	uint32_t max_io;
	uint32_t inline_size;
	uint16_t max_sge;
	int      tcp;
	uint32_t max_discard;
	uint32_t max_write_zeroes;
};
int rblk_decode_cmd(const void *buf, size_t len,
		    const struct rblk_cmd_limits *limits,
		    struct rblk_cmd *c, struct rblk_sge *sgl);

/*
 * Volume-level check of a decoded command: alignment to block_size,
 * offset+length inside size (no overflow), write-class commands on a
 * read-only volume, commands the volume cannot do.  FLUSH is never range
 * checked.  Returns RBLK_S_OK or the status to report.
 */
int rblk_check_cmd_range(const struct rblk_cmd *c, uint64_t size,
			 uint32_t block_size, uint32_t vol_flags);

/* Name of an opcode ("READ"), "?" when unknown. */
const char *rblk_opcode_str(int opcode);

/* Returns 0 when name is a valid volume/host name: 1..63 bytes of
 * [A-Za-z0-9._:-], not "." or "..", not starting with '-'; else -EINVAL. */
int rblk_name_valid(const char *name);

/* ---- RDMA CM private data (proto/rdma_wire.c) ------------------------ */

/*
 * Carried in rdma_connect (initiator: queue id, wanted depth), rdma_accept
 * (target: granted depth, status 0) and rdma_reject (target: status says
 * why).  An RC connect request has room for 56 bytes only; the CM may pad
 * what arrives, so decoders accept len >= sizeof and ignore the tail.
 */
struct rblk_wire_rdma_cm {
	uint32_t magic;			/* RBLK_MAGIC */
	uint8_t  version;		/* RBLK_PROTO_VERSION */
	uint8_t  rsvd0;
	uint16_t queue_id;
	uint16_t queue_depth;		/* 1..RBLK_MAX_QUEUE_DEPTH */
	uint16_t status;		/* enum rblk_status; 0 unless rejecting */
	uint32_t rsvd[2];		/* must be 0 */
};
_Static_assert(sizeof(struct rblk_wire_rdma_cm) == 20, "rdma cm size");
_Static_assert(sizeof(struct rblk_wire_rdma_cm) <= 56, "fits RC connect");

struct rblk_rdma_cm {
	uint16_t queue_id;
	uint16_t queue_depth;
	uint16_t status;
};

/* Writes the wire form into buf (sizeof(struct rblk_wire_rdma_cm) bytes). */
size_t rblk_encode_rdma_cm(void *buf, const struct rblk_rdma_cm *p);
/*
 * Checks magic (RBLK_S_INVALID_FIELD), version (RBLK_S_BAD_VERSION),
 * reserved zero, status known; queue_depth in 1..RBLK_MAX_QUEUE_DEPTH unless
 * status is non-zero (a reject carries no depth).  Returns RBLK_S_OK or the
 * status to report.
 */
int rblk_decode_rdma_cm(const void *buf, size_t len, struct rblk_rdma_cm *p);

#endif /* RBLK_PROTO_RBLK_PROTO_H */
