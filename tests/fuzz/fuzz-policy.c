/*
 * fuzz-policy.c: libFuzzer target for the scheduling protocol
 * (backend/sched/policy-json.c): the whole input is one request line of
 * `hunter sched decide`.  A request that parses is decided by every
 * member of the policy table and its reply encoded.  Beyond "no crash,
 * no leak", it checks the contract: a refused line comes with a reason,
 * and a request that policy_check passes is decided by every member
 * within the rules policy_verify checks (policy_decide fails only when a
 * member broke them, which traps here).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/target-util.h"
#include "backend/sched/policy-json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_doc doc;
	struct policy_reply rep;
	char	 err[1024] = "";
	char	*out;
	int	 rc;

	rc = policy_json_read(&doc, (const char *)data, size, err, sizeof err);
	if (rc != 0 && err[0] == '\0')
		__builtin_trap();
	if (rc == 0) {
		/* A request the check passes must be decided: the only other
		 * failure of policy_decide is a member breaking the rules. */
		rc = policy_check(&doc.req, err, sizeof err);
		for (int p = 0; policy_table[p] != NULL && rc == 0; p++) {
			if (policy_decide(policy_table[p], &doc.req, &rep, err,
			    sizeof err) != 0)
				__builtin_trap();
			out = policy_json_reply(&doc.req, &rep);
			free(out);
			policy_reply_free(&rep);
		}
		policy_json_free(&doc);
	}
	out = policy_json_error(err);
	free(out);
	fuzz_debug(rc == 0, err);
	return 0;
}
