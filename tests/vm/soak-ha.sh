#!/bin/bash
# SPDX-License-Identifier: MIT
# Several-node VM suite: a client node, two target nodes (a, b) and a
# Ceph node on one switch (tests/vm/vswitch); one RBD volume through both
# targets, failover with fencing under power cuts and link cuts
# (docs/multipath.md).  Four guests on the host's cores take long: make
# soak runs it (tests/run takes soak-*.sh with RBLK_SOAK=1), make test
# does not.  Cases: tests/vm/guest/suite-ha.guest.sh.
. "$(dirname "$0")/host-lib.sh"
vm_require_build rblk-target rblk-initiator rblkctl rblk-fio.so
vm_cluster_suite ha ceph=10.88.0.10/1/2G a=10.88.0.1/2/1536M b=10.88.0.2/2/1536M -- -c 2 -m 2G
