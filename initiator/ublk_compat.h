/* SPDX-License-Identifier: MIT */
/*
 * ublk constants newer than Debian 12's <linux/ublk_cmd.h> (the 6.1 header).
 * The VM runs 6.12; features are still probed at run time with
 * GET_FEATURES, so these only give names to numbers the kernel may or may
 * not understand.  Struct layouts did not change between 6.1 and 6.12.
 */
#ifndef RBLK_INITIATOR_UBLK_COMPAT_H
#define RBLK_INITIATOR_UBLK_COMPAT_H

#include <stddef.h>
#include <linux/io_uring.h>
#include <linux/ioctl.h>
#include <linux/ublk_cmd.h>

/* Control commands in the ioctl encoding (UBLK_F_CMD_IOCTL_ENCODE). */
#ifndef UBLK_U_CMD_GET_DEV_INFO
#define UBLK_U_CMD_GET_DEV_INFO	\
	((__u32)_IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_ADD_DEV	\
	((__u32)_IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_DEL_DEV	\
	((__u32)_IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_START_DEV	\
	((__u32)_IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_STOP_DEV	\
	((__u32)_IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_SET_PARAMS	\
	((__u32)_IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_GET_PARAMS	\
	((__u32)_IOR('u', UBLK_CMD_GET_PARAMS, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_START_USER_RECOVERY	\
	((__u32)_IOWR('u', UBLK_CMD_START_USER_RECOVERY, struct ublksrv_ctrl_cmd))
#define UBLK_U_CMD_END_USER_RECOVERY	\
	((__u32)_IOWR('u', UBLK_CMD_END_USER_RECOVERY, struct ublksrv_ctrl_cmd))
#endif
#ifndef UBLK_U_CMD_GET_QUEUE_AFFINITY
#define UBLK_U_CMD_GET_QUEUE_AFFINITY	\
	((__u32)_IOR('u', UBLK_CMD_GET_QUEUE_AFFINITY, struct ublksrv_ctrl_cmd))
#endif

#ifndef UBLK_CMD_GET_FEATURES
#define UBLK_CMD_GET_FEATURES	0x13
#endif
#ifndef UBLK_U_CMD_GET_FEATURES
#define UBLK_U_CMD_GET_FEATURES	\
	((__u32)_IOR('u', UBLK_CMD_GET_FEATURES, struct ublksrv_ctrl_cmd))
#endif

/* I/O commands in the ioctl encoding. */
#ifndef UBLK_U_IO_FETCH_REQ
#define UBLK_U_IO_FETCH_REQ	\
	((__u32)_IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd))
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ	\
	((__u32)_IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd))
#endif

/* Device flags added after 6.1. */
#ifndef UBLK_F_UNPRIVILEGED_DEV
#define UBLK_F_UNPRIVILEGED_DEV	(1ULL << 5)
#endif
#ifndef UBLK_F_CMD_IOCTL_ENCODE
#define UBLK_F_CMD_IOCTL_ENCODE	(1ULL << 6)
#endif
#ifndef UBLK_F_USER_COPY
#define UBLK_F_USER_COPY	(1ULL << 7)
#endif
#ifndef UBLK_F_ZONED
#define UBLK_F_ZONED		(1ULL << 8)
#endif

/* 6.13+: with no server, fail I/O instead of queueing it (not on 6.12). */
#ifndef UBLK_F_USER_RECOVERY_FAIL_IO
#define UBLK_F_USER_RECOVERY_FAIL_IO	(1ULL << 9)
#endif

/* 6.16+: a started device's size changes with UPDATE_SIZE (data[0]: the
 * new size in 512-byte sectors); GET_FEATURES says whether it exists. */
#ifndef UBLK_F_UPDATE_SIZE
#define UBLK_F_UPDATE_SIZE	(1ULL << 10)
#endif
#ifndef UBLK_CMD_UPDATE_SIZE
#define UBLK_CMD_UPDATE_SIZE	0x15
#endif
#ifndef UBLK_U_CMD_UPDATE_SIZE
#define UBLK_U_CMD_UPDATE_SIZE	\
	((__u32)_IOWR('u', UBLK_CMD_UPDATE_SIZE, struct ublksrv_ctrl_cmd))
#endif

/* 6.16+: QUIESCE_DEV (data[0]: how long to wait, ms) stops the kernel
 * from handing a device of a USER_RECOVERY server new requests and
 * aborts its idle fetches, so that the server can finish what it holds
 * and exit; the device then waits QUIESCED for the next server. */
#ifndef UBLK_F_QUIESCE
#define UBLK_F_QUIESCE		(1ULL << 12)
#endif
#ifndef UBLK_CMD_QUIESCE_DEV
#define UBLK_CMD_QUIESCE_DEV	0x16
#endif
#ifndef UBLK_U_CMD_QUIESCE_DEV
#define UBLK_U_CMD_QUIESCE_DEV	\
	((__u32)_IOWR('u', UBLK_CMD_QUIESCE_DEV, struct ublksrv_ctrl_cmd))
#endif

/* 7.0+: batch I/O.  One PREP_IO_CMDS hands the kernel every tag's buffer,
 * one multishot FETCH_IO_CMDS delivers new requests as arrays of 16-bit
 * tags in provided buffers, and one COMMIT_IO_CMDS answers many requests
 * and re-arms their tags.  The per-tag FETCH/COMMIT_AND_FETCH are refused
 * (-EOPNOTSUPP) on such a device.  The struct goes in the SQE's command
 * area like ublksrv_io_cmd; PREP and COMMIT point sqe->addr at nr_elem
 * elements of elem_bytes each. */
#ifndef UBLK_F_BATCH_IO
#define UBLK_F_BATCH_IO		(1ULL << 15)
#endif
#ifndef UBLK_U_IO_PREP_IO_CMDS
struct ublk_batch_io {
	__u16 q_id;
	__u16 flags;		/* UBLK_BATCH_F_* */
	__u16 nr_elem;
	__u8  elem_bytes;
	__u8  reserved;
	__u64 reserved2;
};
#define UBLK_BATCH_F_HAS_BUF_ADDR	(1 << 1)	/* elements carry buf_addr */
#define UBLK_U_IO_PREP_IO_CMDS	((__u32)_IOWR('u', 0x25, struct ublk_batch_io))
#define UBLK_U_IO_COMMIT_IO_CMDS	((__u32)_IOWR('u', 0x26, struct ublk_batch_io))
#define UBLK_U_IO_FETCH_IO_CMDS	((__u32)_IOWR('u', 0x27, struct ublk_batch_io))
#endif

/* One element of PREP/COMMIT with UBLK_BATCH_F_HAS_BUF_ADDR: the kernel's
 * struct ublk_elem_header followed by the buffer's address (16 bytes). */
struct ini_batch_elem {
	__u16 tag;
	__u16 buf_index;	/* only for AUTO_BUF_REG: 0 */
	__s32 result;		/* COMMIT: bytes done or -errno */
	__u64 buf_addr;		/* the tag's buffer, this request and the next */
};

/* io_uring 6.18+ (newer than Debian 12's liburing 2.3): a multishot
 * uring_cmd, in sqe->uring_cmd_flags, with IOSQE_BUFFER_SELECT. */
#ifndef IORING_URING_CMD_MULTISHOT
#define IORING_URING_CMD_MULTISHOT	(1U << 1)
#endif

#ifndef UBLK_PARAM_TYPE_DEVT
#define UBLK_PARAM_TYPE_DEVT	(1 << 2)
#endif

/* Where a uring_cmd SQE carries its command: from byte 48, 16 bytes of a
 * 64-byte SQE (the I/O commands), 80 of a 128-byte one (the control
 * commands). */
static inline void *ini_sqe_cmd(struct io_uring_sqe *sqe)
{
	return (char *)sqe + offsetof(struct io_uring_sqe, addr3);
}

/* Size of one queue's slot in the descriptor mmap area (max depth). */
#define INI_UBLK_DESC_AREA	\
	((((UBLK_MAX_QUEUE_DEPTH) * sizeof(struct ublksrv_io_desc)) + 4095) & ~4095UL)

#endif /* RBLK_INITIATOR_UBLK_COMPAT_H */
