/*
 * cmd-validate.c: `hunter validate FILE...` checks job and cluster files
 * and prints every error as file:line:col: message; a gpt job's token
 * shards or text are checked too, and a program job's argv[0] is looked
 * up here, on this node.
 */
#include <stdio.h>

#include "backend/spec/spec.h"
#include "backend/worker/data.h"
#include "cmd/cmd.h"

static int
cmd_validate(const struct cmd_args *a)
{
	char	**argv = a->argv;
	int	 bad = 0;

	for (int i = 0; i < a->argc; i++) {
		struct spec_errors errs = { 0 };
		int	 rc;

		if (spec_is_cluster_file(argv[i])) {
			struct cluster_spec c;

			rc = spec_load_cluster(argv[i], &c, &errs);
			if (rc == 0)
				spec_cluster_free(&c);
		} else {
			struct job_spec j;
			char	 err[1024];

			rc = spec_check_job_here(argv[i], &j, &errs);
			if (rc == 0 && job_data_check(&j, err, sizeof err) != 0) {
				spec_error_add(&errs, argv[i], 0, 0, "data: %s",
				    err);
				rc = -1;
			}
		}
		if (rc != 0) {
			spec_errors_print(stdout, &errs);
			bad = 1;
		} else
			printf("%s: ok\n", argv[i]);
		spec_errors_free(&errs);
	}
	return bad;
}

const struct cmd_entry cmd_validate_entry = {
	.name = "validate",
	.usage = "FILE...",
	.summary = "check job and cluster files; print file:line:col: "
	    "message for each error",
	.args_min = 1,
	.args_max = -1,
	.exec = cmd_validate,
};
