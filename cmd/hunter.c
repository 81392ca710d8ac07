/*
 * hunter.c: the program entry.  Dispatches to the subcommands of the
 * command table, answers --version and --help, and runs the console
 * when no subcommand is named: `hunter`, `hunter JOB.yaml...`, or
 * `hunter --theme NAME ...`.
 */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>
#include <curses.h>
#include <jansson.h>
#include <libssh/libssh.h>
#include <microhttpd.h>
#include <yaml.h>
#include <zlib.h>

#include "build-id.h"
#include "lib/blas.h"
#include "lib/cuda-probe.h"
#include "lib/xmalloc.h"
#include "backend/proto/gloo-version.h"
#include "backend/worker/worker.h"
#include "backend/agent/agent.h"
#include "tui/console.h"
#include "cmd/cmd.h"

static const struct cmd_entry *cmd_table[] = {
	&cmd_run_entry,
	&cmd_validate_entry,
	&cmd_check_entry,
	&cmd_bench_entry,
	&cmd_agent_entry,
	&cmd_agents_entry,
	&cmd_ctl_entry,
	&cmd_report_entry,
	&cmd_sample_entry,
	&cmd_sched_entry,
	&cmd_sim_entry,
	&cmd_submit_entry,
	&cmd_jobs_entry,
	&cmd_worker_entry,
};
#define N_CMDS (sizeof cmd_table / sizeof cmd_table[0])

static void
print_version(void)
{
	struct blas_info bi;

	printf("hunter %s\n", PACKAGE_VERSION);
	printf("build: %s (%s)\n", HUNTER_GIT_DESCRIBE, HUNTER_FEATURES);
#ifdef HAVE_CUDA
	printf("cuda: yes (runtime %s, nccl %s)\n", cuda_runtime_version(),
	    cuda_nccl_version());
#else
	printf("cuda: no\n");
#endif
	printf("libraries:\n");
	printf("  %-9s %s\n", "ncurses", curses_version());
	printf("  %-9s %s\n", "libyaml", yaml_get_version_string());
	printf("  %-9s %s\n", "libssh", ssh_version(0));
	printf("  %-9s %s\n", "jansson", jansson_version_str());
	printf("  %-9s %s\n", "zlib", zlibVersion());
	printf("  %-9s %s\n", "openblas", openblas_get_config());
	blas_info(&bi);
	printf("  %-9s %s, %s; cpuid allows %s (%s)\n", "kernel", bi.kernel,
	    blas_by_words(bi.by), bi.best[0] != '\0' ? bi.best : "none known",
	    bi.cpu);
	printf("  %-9s %s\n", "gloo", HUNTER_GLOO_VERSION);
	printf("  %-9s %s\n", "microhttpd", MHD_get_version());
	printf("  %-9s %s\n", "libc", gnu_get_libc_version());
}

static void
print_help(FILE *f)
{
	cmd_print_usage(&console_entry, f);
	fprintf(f, "       hunter COMMAND [OPTION...] [ARGS]\n\n"
	    "hunter trains data-parallel models on a cluster and lets an\n"
	    "operator watch and steer them.\n\n"
	    "hunter [JOB.yaml...] is the console: it submits each job file on\n"
	    "the embedded 4-node local cluster (or --cluster FILE; inside a\n"
	    "Slurm allocation, the allocation); with no job it re-attaches to\n"
	    "the running one.  q detaches and leaves the jobs running; ? lists\n"
	    "the keys; NO_COLOR is honoured.\n\noptions:\n");
	cmd_print_options(&console_entry, f);
	fprintf(f, "\ncommands (hunter COMMAND --help lists a command's "
	    "options):\n\n");
	for (size_t i = 0; i < N_CMDS; i++) {
		cmd_print_forms(cmd_table[i], f, "  ", "  ");
		fprintf(f, "           %s\n", cmd_table[i]->summary);
	}
	fprintf(f, "\n  hunter --version  versions of hunter and its libraries\n"
	    "  hunter --help     this text; see also hunter(1)\n\n"
	    "State lives in $HUNTER_STATE_DIR, else $XDG_STATE_HOME/hunter,\n"
	    "else ~/.local/state/hunter.\n");
}

/* Whether argv[1] is for the console: nothing, one of its options, or
 * something that is not a command but looks like a job file. */
static bool
wants_console(int argc, char **argv)
{
	const char	*a = argv[1];
	size_t		 l;

	if (argc < 2)
		return true;
	if (a[0] == '-')
		return cmd_takes_option(&console_entry, a);
	for (size_t i = 0; i < N_CMDS; i++) {
		if (strcmp(a, cmd_table[i]->name) == 0)
			return false;
	}
	l = strlen(a);
	return access(a, F_OK) == 0 || (l > 5 && strcmp(a + l - 5, ".yaml") == 0) ||
	    (l > 4 && strcmp(a + l - 4, ".yml") == 0);
}

int
main(int argc, char **argv)
{
	/* jansson's allocations abort as ours do: a json_pack that fails is
	 * then always bad input (a NULL or non-UTF-8 string), which every
	 * caller checks (proto_pack). */
	json_set_alloc_funcs(xmalloc, free);
	/* Before anything else: this process may start again with the BLAS
	 * kernel its CPU allows (lib/blas.h); its children inherit it. */
	blas_reexec(argv);
	if (wants_console(argc, argv))
		return cmd_main(&console_entry, argc, argv);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		print_version();
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		print_help(stdout);
		return 0;
	}
	for (size_t i = 0; i < N_CMDS; i++) {
		if (strcmp(argv[1], cmd_table[i]->name) == 0)
			return cmd_main(cmd_table[i], argc - 1, argv + 1);
	}
	fprintf(stderr, "hunter: unknown command '%s' (hunter --help lists "
	    "them)\n", argv[1]);
	return 2;
}
