/*
 * cmd-submit.c: `hunter submit FILE.yaml...`: hand job files to the
 * backend that runs the state directory (the console's, or a hunter
 * run's, which then stays until they end too), over console.sock.  Each
 * file is checked here first, as hunter validate does; for each, where
 * its job is now (placed, or its queue position and why it waits) or
 * why the backend refused it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/proto/proto.h"
#include "backend/spec/spec.h"
#include "cmd/cmd.h"

static int
cmd_submit(const struct cmd_args *a)
{
	int	 rc = 0;

	for (int i = 0; i < a->argc; i++) {
		struct spec_errors errs = { 0 };
		struct job_spec	 job;
		char		 full[PATH_MAX];
		json_t		*ans;

		if (spec_load_job(a->argv[i], &job, &errs) != 0) {
			spec_errors_print(stderr, &errs);
			spec_errors_free(&errs);
			rc = 1;
			continue;
		}
		/* The backend reads it, from wherever it runs. */
		if (realpath(a->argv[i], full) == NULL) {
			perror(a->argv[i]);
			rc = 1;
			continue;
		}
		if (console_request("submit", json_pack("{s:s, s:s, s:s}", "t",
		    MSG_CMD, "cmd", "submit", "file", full), &ans) == 0)
			printf("%s: %s\n", a->argv[i], json_string_value(
			    json_object_get(ans, "reason")));
		else
			rc = 1;
		json_decref(ans);
	}
	return rc;
}

const struct cmd_entry cmd_submit_entry = {
	.name = "submit",
	.usage = "FILE.yaml...",
	.summary = "hand job files to the running backend; say where each "
	    "job is (placed, or its place in the queue)",
	.args_min = 1,
	.args_max = -1,
	.exec = cmd_submit,
};
