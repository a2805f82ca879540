// SPDX-License-Identifier: MIT
/* ublk control commands over io_uring URING_CMD (see ublk_ctrl.h). */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "ublk_ctrl.h"

struct ini_ctrl {
	int fd;
	struct io_uring ring;
	uint64_t features;
	int ioctl_encode;	/* use UBLK_U_CMD_* opcodes */
};

struct ctrl_op {
	const char *name;
	uint32_t legacy;
	uint32_t encoded;
};

static const struct ctrl_op OP_GET_FEATURES = {
	"GET_FEATURES", UBLK_CMD_GET_FEATURES, UBLK_U_CMD_GET_FEATURES };
static const struct ctrl_op OP_ADD_DEV = {
	"ADD_DEV", UBLK_CMD_ADD_DEV, UBLK_U_CMD_ADD_DEV };
static const struct ctrl_op OP_DEL_DEV = {
	"DEL_DEV", UBLK_CMD_DEL_DEV, UBLK_U_CMD_DEL_DEV };
static const struct ctrl_op OP_START_DEV = {
	"START_DEV", UBLK_CMD_START_DEV, UBLK_U_CMD_START_DEV };
static const struct ctrl_op OP_STOP_DEV = {
	"STOP_DEV", UBLK_CMD_STOP_DEV, UBLK_U_CMD_STOP_DEV };
static const struct ctrl_op OP_SET_PARAMS = {
	"SET_PARAMS", UBLK_CMD_SET_PARAMS, UBLK_U_CMD_SET_PARAMS };
static const struct ctrl_op OP_GET_PARAMS = {
	"GET_PARAMS", UBLK_CMD_GET_PARAMS, UBLK_U_CMD_GET_PARAMS };
static const struct ctrl_op OP_GET_DEV_INFO = {
	"GET_DEV_INFO", UBLK_CMD_GET_DEV_INFO, UBLK_U_CMD_GET_DEV_INFO };
static const struct ctrl_op OP_START_USER_RECOVERY = {
	"START_USER_RECOVERY", UBLK_CMD_START_USER_RECOVERY,
	UBLK_U_CMD_START_USER_RECOVERY };
static const struct ctrl_op OP_END_USER_RECOVERY = {
	"END_USER_RECOVERY", UBLK_CMD_END_USER_RECOVERY,
	UBLK_U_CMD_END_USER_RECOVERY };
static const struct ctrl_op OP_UPDATE_SIZE = {
	"UPDATE_SIZE", UBLK_CMD_UPDATE_SIZE, UBLK_U_CMD_UPDATE_SIZE };
static const struct ctrl_op OP_GET_QUEUE_AFFINITY = {
	"GET_QUEUE_AFFINITY", UBLK_CMD_GET_QUEUE_AFFINITY,
	UBLK_U_CMD_GET_QUEUE_AFFINITY };
static const struct ctrl_op OP_QUIESCE_DEV = {
	"QUIESCE_DEV", UBLK_CMD_QUIESCE_DEV, UBLK_U_CMD_QUIESCE_DEV };

static int ctrl_cmd(struct ini_ctrl *c, const struct ctrl_op *op,
		    const struct ublksrv_ctrl_cmd *cmd)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	sqe = io_uring_get_sqe(&c->ring);
	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = c->fd;
	sqe->cmd_op = c->ioctl_encode ? op->encoded : op->legacy;
	sqe->user_data = 1;
	memcpy(ini_sqe_cmd(sqe), cmd, sizeof(*cmd));

	ret = io_uring_submit(&c->ring);
	if (ret < 0)
		return ret;
	do {
		ret = io_uring_wait_cqe(&c->ring, &cqe);
	} while (ret == -EINTR);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(&c->ring, cqe);
	RBLK_DBG(RBLK_DBG_UBLK, "ublk ctrl %s dev %u: %d", op->name,
		 cmd->dev_id, ret);
	return ret;
}

int ini_ctrl_open(struct ini_ctrl **cp)
{
	struct ublksrv_ctrl_cmd cmd = { .dev_id = (uint32_t)-1,
					.queue_id = (uint16_t)-1 };
	struct ini_ctrl *c;
	uint64_t feat = 0;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = open(INI_UBLK_CONTROL, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		ret = -errno;
		goto out_free;
	}
	/* Control commands are 32 bytes: they need the 128-byte SQEs. */
	ret = io_uring_queue_init(4, &c->ring, IORING_SETUP_SQE128);
	if (ret < 0)
		goto out_close;

	/* GET_FEATURES exists since 6.5 and answers to both encodings. */
	cmd.addr = (uintptr_t)&feat;
	cmd.len = sizeof(feat);
	c->ioctl_encode = 1;
	ret = ctrl_cmd(c, &OP_GET_FEATURES, &cmd);
	if (ret < 0) {
		c->ioctl_encode = 0;
		feat = 0;
	} else {
		c->ioctl_encode = !!(feat & UBLK_F_CMD_IOCTL_ENCODE);
	}
	c->features = feat;
	*cp = c;
	return 0;

out_close:
	close(c->fd);
out_free:
	free(c);
	return ret;
}

void ini_ctrl_close(struct ini_ctrl *c)
{
	if (!c)
		return;
	io_uring_queue_exit(&c->ring);
	close(c->fd);
	free(c);
}

uint64_t ini_ctrl_features(const struct ini_ctrl *c)
{
	return c->features;
}

static int dev_cmd(struct ini_ctrl *c, const struct ctrl_op *op,
		   uint32_t dev_id, void *buf, uint16_t len, uint64_t data0)
{
	struct ublksrv_ctrl_cmd cmd = {
		.dev_id = dev_id,
		.queue_id = (uint16_t)-1,
		.addr = (uintptr_t)buf,
		.len = len,
		.data = { data0 },
	};

	return ctrl_cmd(c, op, &cmd);
}

int ini_ctrl_add_dev(struct ini_ctrl *c, struct ublksrv_ctrl_dev_info *info)
{
	return dev_cmd(c, &OP_ADD_DEV, info->dev_id, info, sizeof(*info), 0);
}

int ini_ctrl_del_dev(struct ini_ctrl *c, uint32_t dev_id)
{
	return dev_cmd(c, &OP_DEL_DEV, dev_id, NULL, 0, 0);
}

int ini_ctrl_start_dev(struct ini_ctrl *c, uint32_t dev_id, pid_t pid)
{
	return dev_cmd(c, &OP_START_DEV, dev_id, NULL, 0, (uint64_t)pid);
}

int ini_ctrl_stop_dev(struct ini_ctrl *c, uint32_t dev_id)
{
	return dev_cmd(c, &OP_STOP_DEV, dev_id, NULL, 0, 0);
}

int ini_ctrl_set_params(struct ini_ctrl *c, uint32_t dev_id,
			const struct ublk_params *p)
{
	struct ublk_params copy = *p;	/* the kernel may write len back */

	return dev_cmd(c, &OP_SET_PARAMS, dev_id, &copy, sizeof(copy), 0);
}

int ini_ctrl_get_params(struct ini_ctrl *c, uint32_t dev_id,
			struct ublk_params *p)
{
	memset(p, 0, sizeof(*p));
	p->len = sizeof(*p);
	return dev_cmd(c, &OP_GET_PARAMS, dev_id, p, sizeof(*p), 0);
}

int ini_ctrl_get_dev_info(struct ini_ctrl *c, uint32_t dev_id,
			  struct ublksrv_ctrl_dev_info *info)
{
	memset(info, 0, sizeof(*info));
	return dev_cmd(c, &OP_GET_DEV_INFO, dev_id, info, sizeof(*info), 0);
}

int ini_ctrl_queue_affinity(struct ini_ctrl *c, uint32_t dev_id, uint16_t q_id,
			    cpu_set_t *set)
{
	CPU_ZERO(set);
	return dev_cmd(c, &OP_GET_QUEUE_AFFINITY, dev_id, set, sizeof(*set), q_id);
}

int ini_ctrl_start_recovery(struct ini_ctrl *c, uint32_t dev_id)
{
	return dev_cmd(c, &OP_START_USER_RECOVERY, dev_id, NULL, 0, 0);
}

int ini_ctrl_end_recovery(struct ini_ctrl *c, uint32_t dev_id, pid_t pid)
{
	return dev_cmd(c, &OP_END_USER_RECOVERY, dev_id, NULL, 0, (uint64_t)pid);
}

int ini_ctrl_update_size(struct ini_ctrl *c, uint32_t dev_id, uint64_t bytes)
{
	if (!(c->features & UBLK_F_UPDATE_SIZE))
		return -EOPNOTSUPP;
	return dev_cmd(c, &OP_UPDATE_SIZE, dev_id, NULL, 0, bytes >> 9);
}

int ini_ctrl_quiesce_dev(struct ini_ctrl *c, uint32_t dev_id, unsigned timeout_ms)
{
	if (!(c->features & UBLK_F_QUIESCE))
		return -EOPNOTSUPP;
	return dev_cmd(c, &OP_QUIESCE_DEV, dev_id, NULL, 0, timeout_ms);
}
