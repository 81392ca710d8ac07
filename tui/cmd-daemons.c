/*
 * cmd-daemons.c: the subcommands that hunter starts for itself: the
 * per-node agent and the training worker.  Their work lives in
 * backend/agent and backend/worker.
 */
#include "backend/agent/agent.h"
#include "backend/worker/worker.h"
#include "tui/cmd.h"

const struct cmd_entry cmd_agent_entry = {
	.name = "agent",
	.usage = "--node NAME --dir DIR [--foreground] [--idle-exit SECONDS] [--stdio]",
	.summary = "(started by hunter) the per-node daemon: metrics, workers, relay",
	.exec = agent_main,
};

const struct cmd_entry cmd_worker_entry = {
	.name = "worker",
	.usage = "--fd N",
	.summary = "(started by an agent) one training rank",
	.exec = worker_main,
};
