/*
 * test-proto-kind.c: the table of message types (kind.c: a known type
 * with a field missing or of the wrong type is refused, with a message
 * that names both) and the metric tables (metrics.c: what goes on the
 * wire comes back with the same validity, and unknown stays unknown).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/proto/metrics.h"
#include "backend/proto/proto.h"

int	test_proto_kind(void);

#define RANK_WORDS	"a rank (an integer 0..2147483647)"

/* The kind of the JSON text s, and its message in err. */
static enum proto_kind
kind_of(const char *s, char *err, size_t errlen)
{
	json_t		*m = json_loads(s, 0, NULL);
	enum proto_kind	 k;

	assert_non_null(m);
	err[0] = '\0';
	k = proto_kind(m, err, errlen);
	json_decref(m);
	return k;
}

static void
t_kind_table(void **state)
{
	(void)state;
	assert_null(proto_kind_name(PK_UNKNOWN));
	assert_null(proto_kind_name(PK_INVALID));
	assert_null(proto_kind_name(PK_COUNT));
	for (int k = PK_HELLO; k < PK_COUNT; k++) {
		assert_non_null(proto_kind_name(k));
		for (int o = PK_HELLO; o < k; o++)
			assert_string_not_equal(proto_kind_name(k),
			    proto_kind_name(o));
	}
	assert_string_equal(proto_kind_name(PK_STORE), MSG_STORE);
	assert_string_equal(proto_kind_name(PK_JOB_END), MSG_JOB_END);
}

static void
t_kind_good(void **state)
{
	static const struct {
		const char	*json;
		enum proto_kind	 kind;
	} good[] = {
		{ "{\"t\":\"store\",\"op\":\"get\",\"key\":\"k\",\"req\":1}",
		    PK_STORE },
		{ "{\"t\":\"store\",\"op\":\"value\",\"value\":\"QQ==\"}",
		    PK_STORE },
		{ "{\"t\":\"store\",\"op\":\"error\"}", PK_STORE },
		{ "{\"t\":\"cmd\",\"cmd\":\"pause\",\"job\":\"j\"}", PK_CMD },
		{ "{\"t\":\"cmd\",\"cmd\":\"detach\"}", PK_CMD },
		{ "{\"t\":\"cmd\",\"cmd\":\"someday\"}", PK_CMD },
		{ "{\"t\":\"cmd\",\"cmd\":\"migrate\",\"job\":\"j\","
		    "\"rank\":2147483647,\"node\":\"n\"}", PK_CMD },
		/* A launch is the whole order (launch.h). */
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\",\"rank\":0,\"world\":1,"
		    "\"generation\":0,\"run\":1,\"node\":\"n\",\"addr\":\"\",\"local_rank\":0,\"host_slots\":2,"
		    "\"spec_file\":\"j.yaml\",\"spec_yaml\":\"\",\"checkpoint_dir\":\"\","
		    "\"resume\":false,\"timeout_ms\":1,\"stop_after_epochs\":0,"
		    "\"trace_steps\":0,\"slow_data_ms\":0,\"slow_sample_us\":0,\"slow_ms\":0,\"log_flood\":0,"
		    "\"leak_bytes\":0,\"crash_at\":0}",
		    PK_CMD },
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\",\"rank\":0,\"world\":1,"
		    "\"generation\":0,\"run\":1,\"node\":\"n\",\"addr\":\"\",\"local_rank\":0,\"host_slots\":2,"
		    "\"spec_file\":\"j.yaml\",\"spec_yaml\":\"\",\"checkpoint_dir\":\"\","
		    "\"resume\":false,\"timeout_ms\":1,\"stop_after_epochs\":0,"
		    "\"trace_steps\":0,\"slow_data_ms\":0,\"slow_sample_us\":0,\"slow_ms\":0,\"log_flood\":0,"
		    "\"leak_bytes\":0,\"crash_at\":0,"
		    "\"program\":{\"argv\":[\"x\"]}}", PK_CMD },
		{ "{\"t\":\"metrics\",\"scope\":\"node\",\"nodes\":4}",
		    PK_METRICS },
		{ "{\"t\":\"metrics\",\"scope\":\"node\",\"cpu_util\":null,"
		    "\"mem_used\":5,\"time\":1.5}", PK_METRICS },
		{ "{\"t\":\"metrics\",\"scope\":\"rank\",\"job\":\"j\","
		    "\"rank\":1,\"step\":7,\"loss\":2,\"beat\":true}",
		    PK_METRICS },
		{ "{\"t\":\"event\",\"kind\":\"failed\"}", PK_EVENT },
		{ "{\"t\":\"ok\"}", PK_OK },
		{ "{\"t\":\"job_end\",\"job\":\"j\"}", PK_JOB_END },
		{ "{\"t\":\"nonsense\"}", PK_UNKNOWN },
		{ "{\"t\":\"\"}", PK_UNKNOWN },
	};
	char		 err[256];
	json_t		*h;

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		enum proto_kind k = kind_of(good[i].json, err, sizeof err);

		if (k != good[i].kind)
			fail_msg("%s: kind %d, not %d (%s)", good[i].json, k,
			    good[i].kind, err);
	}
	h = proto_hello("backend", NULL);
	assert_int_equal(proto_kind(h, NULL, 0), PK_HELLO);
	json_decref(h);
}

static void
t_kind_refused(void **state)
{
	static const struct {
		const char	*json, *err;
	} bad[] = {
		{ "{\"t\":\"store\",\"req\":3}", "'store' frame: no \"op\"" },
		{ "{\"t\":\"store\",\"op\":5}",
		    "'store' frame: \"op\" is not a string" },
		{ "{\"t\":\"store\",\"op\":\"value\",\"req\":3}",
		    "'store' frame: no \"value\"" },
		{ "{\"t\":\"cmd\"}", "'cmd' frame: no \"cmd\"" },
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\"}",
		    "'cmd' frame: no \"rank\"" },
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\",\"rank\":\"0\"}",
		    "'cmd' frame: \"rank\" is not an integer" },
		/* Every field of the order is required but program. */
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\",\"rank\":0}",
		    "'cmd' frame: no \"world\"" },
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\",\"rank\":0,\"world\":2147483648,"
		    "\"generation\":0,\"run\":1,\"node\":\"n\",\"addr\":\"\",\"local_rank\":0,\"host_slots\":2,"
		    "\"spec_file\":\"j.yaml\",\"spec_yaml\":\"\",\"checkpoint_dir\":\"\","
		    "\"resume\":false,\"timeout_ms\":1,\"stop_after_epochs\":0,"
		    "\"trace_steps\":0,\"slow_data_ms\":0,\"slow_sample_us\":0,\"slow_ms\":0,\"log_flood\":0,"
		    "\"leak_bytes\":0,\"crash_at\":0}",
		    "'cmd' frame: \"world\" is out of range" },
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\",\"rank\":0,\"world\":1,"
		    "\"generation\":0,\"run\":1,\"node\":\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\",\"addr\":\"\",\"local_rank\":0,\"host_slots\":2,"
		    "\"spec_file\":\"j.yaml\",\"spec_yaml\":\"\",\"checkpoint_dir\":\"\","
		    "\"resume\":false,\"timeout_ms\":1,\"stop_after_epochs\":0,"
		    "\"trace_steps\":0,\"slow_data_ms\":0,\"slow_sample_us\":0,\"slow_ms\":0,\"log_flood\":0,"
		    "\"leak_bytes\":0,\"crash_at\":0}",
		    "'cmd' frame: \"node\" is longer than 63 bytes" },
		{ "{\"t\":\"cmd\",\"cmd\":\"launch\",\"job\":\"j\",\"rank\":0,\"world\":1,"
		    "\"generation\":0,\"run\":1,\"node\":\"n\",\"addr\":\"\",\"local_rank\":0,\"host_slots\":2,"
		    "\"spec_file\":\"j.yaml\",\"spec_yaml\":\"\",\"checkpoint_dir\":\"\","
		    "\"resume\":0,\"timeout_ms\":1,\"stop_after_epochs\":0,"
		    "\"trace_steps\":0,\"slow_data_ms\":0,\"slow_sample_us\":0,\"slow_ms\":0,\"log_flood\":0,"
		    "\"leak_bytes\":0,\"crash_at\":0}",
		    "'cmd' frame: \"resume\" is not true or false" },
		/* A summary has the types of its list (summary.h). */
		{ "{\"t\":\"summary\",\"job\":\"j\",\"state\":\"finished\"}",
		    "'summary' frame: no \"steps\"" },
		{ "{\"t\":\"summary\",\"job\":\"j\",\"state\":\"finished\","
		    "\"steps\":3,\"test_acc\":\"high\"}",
		    "'summary' frame: \"test_acc\" is not a number" },
		/* An event names the fields its kind must carry (event.h). */
		{ "{\"t\":\"event\",\"kind\":\"phase\",\"to\":\"running\"}",
		    "'event' frame: a phase event needs \"from\"" },
		{ "{\"t\":\"event\",\"kind\":\"resized\",\"from\":1,\"to\":2,"
		    "\"global_batch\":64}",
		    "'event' frame: a resized event needs \"lr\"" },
		/* Issue 27: console.sock's commands were taken as they came:
		 * 2^62 became rank 0 and 2^32 + 5 rank 5; no job (or a job
		 * that is a number) paused the only job. */
		{ "{\"t\":\"cmd\",\"cmd\":\"migrate\",\"job\":\"j\","
		    "\"rank\":4611686018427387904,\"node\":\"n\"}",
		    "'cmd' frame: migrate: \"rank\" is not " RANK_WORDS },
		{ "{\"t\":\"cmd\",\"cmd\":\"migrate\",\"job\":\"j\","
		    "\"rank\":4294967301,\"node\":\"n\"}",
		    "'cmd' frame: migrate: \"rank\" is not " RANK_WORDS },
		{ "{\"t\":\"cmd\",\"cmd\":\"migrate\",\"job\":\"j\","
		    "\"rank\":-1,\"node\":\"n\"}",
		    "'cmd' frame: migrate: \"rank\" is not " RANK_WORDS },
		{ "{\"t\":\"cmd\",\"cmd\":\"migrate\",\"job\":\"j\","
		    "\"rank\":1}", "'cmd' frame: migrate: no \"node\"" },
		{ "{\"t\":\"cmd\",\"cmd\":\"pause\"}",
		    "'cmd' frame: pause: no \"job\"" },
		{ "{\"t\":\"cmd\",\"cmd\":\"stop\",\"job\":12}",
		    "'cmd' frame: stop: \"job\" is not a string" },
		{ "{\"t\":\"cmd\",\"cmd\":\"kill\"}",
		    "'cmd' frame: kill: no \"job\"" },
		{ "{\"t\":\"cmd\",\"cmd\":\"submit\",\"file\":[]}",
		    "'cmd' frame: submit: \"file\" is not a string" },
		{ "{\"t\":\"hello\",\"role\":\"backend\"}",
		    "'hello' frame: no \"proto\"" },
		{ "{\"t\":\"error\"}", "'error' frame: no \"reason\"" },
		{ "{\"t\":\"exit\",\"job\":\"j\",\"rank\":1.5}",
		    "'exit' frame: \"rank\" is not " RANK_WORDS },
		{ "{\"t\":\"step\",\"job\":\"j\",\"step\":1,\"loss\":\"x\"}",
		    "'step' frame: \"loss\" is not a number" },
		{ "{\"t\":\"metrics\"}", "'metrics' frame: no \"scope\"" },
		{ "{\"t\":\"metrics\",\"scope\":\"gpu\"}",
		    "'metrics' frame: scope \"gpu\" is neither node nor rank" },
		{ "{\"t\":\"metrics\",\"scope\":\"rank\",\"rank\":0}",
		    "'metrics' frame: no \"job\"" },
		{ "{\"t\":\"metrics\",\"scope\":\"rank\",\"job\":\"j\","
		    "\"rank\":0,\"step\":1.5}",
		    "'metrics' frame: \"step\" is not an integer" },
		{ "{\"t\":\"metrics\",\"scope\":\"rank\",\"job\":\"j\","
		    "\"rank\":0,\"loss\":\"low\"}",
		    "'metrics' frame: \"loss\" is not a number" },
		{ "{\"t\":\"metrics\",\"scope\":\"node\",\"cpu_util\":\"x\"}",
		    "'metrics' frame: \"cpu_util\" is not a number" },
		{ "{\"t\":\"metrics\",\"scope\":\"node\",\"time\":\"now\"}",
		    "'metrics' frame: \"time\" is not a number" },
	};
	char		 err[256];

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		enum proto_kind k = kind_of(bad[i].json, err, sizeof err);

		if (k != PK_INVALID)
			fail_msg("%s: kind %d, not refused", bad[i].json, k);
		assert_string_equal(err, bad[i].err);
	}
	/* No room for the message: still refused. */
	assert_int_equal(kind_of("{\"t\":\"store\"}", err, 1), PK_INVALID);
}

/* A command a front end posts has no "t": its fields are checked the
 * same way (backend_command runs this before it acts). */
static void
t_cmd_check(void **state)
{
	char	 err[256];
	json_t	*c;

	(void)state;
	c = json_pack("{s:s, s:s}", "cmd", "pause", "job", "j");
	assert_int_equal(proto_cmd_check(c, err, sizeof err), 0);
	json_decref(c);
	c = json_pack("{s:s, s:s, s:I, s:s}", "cmd", "migrate", "job", "j",
	    "rank", (json_int_t)1 << 32, "node", "n");
	assert_int_equal(proto_cmd_check(c, err, sizeof err), -1);
	assert_string_equal(err, "'cmd' frame: migrate: \"rank\" is not "
	    RANK_WORDS);
	json_decref(c);
	c = json_pack("{s:i}", "cmd", 3);
	assert_int_equal(proto_cmd_check(c, err, sizeof err), -1);
	assert_string_equal(err, "'cmd' frame: \"cmd\" is not a string");
	json_decref(c);
	c = json_string("pause");
	assert_int_equal(proto_cmd_check(c, err, sizeof err), -1);
	json_decref(c);
}

/* Every row is complete, and no two name the same field or value. */
static void
t_metric_tables(void **state)
{
	static const struct {
		const struct metric_field	*f;
		int				 n;
	} tables[] = {
		{ node_metrics, NM_COUNT }, { gpu_metrics, GM_COUNT },
		{ rank_metrics, RM_COUNT },
	};

	(void)state;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		const struct metric_field *f = tables[t].f;

		for (int i = 0; i < tables[t].n; i++) {
			assert_non_null(f[i].name);
			assert_non_null(f[i].unit);
			assert_true(f[i].help != NULL && f[i].help[0] != '\0');
			for (int o = 0; o < i; o++) {
				assert_string_not_equal(f[i].name, f[o].name);
				assert_int_not_equal(f[i].at, f[o].at);
			}
		}
	}
	assert_string_equal(node_metric_name(NM_MEM_USED), "mem_used");
	assert_null(node_metric_name(NM_COUNT));
	assert_string_equal(gpu_metric_name(GM_SM_CLOCK), "sm_clock");
	assert_null(gpu_metric_name(GM_COUNT));
	assert_string_equal(rank_metrics[RM_DATA_WAIT_MS].name, "data_wait_ms");
	assert_int_equal(rank_metrics[RM_STEP].type, METRIC_INT);
	assert_int_equal(rank_metrics[RM_STEP].kind, METRIC_GAUGE);
	assert_int_equal(rank_metrics[RM_BYTES_SENT_TOTAL].kind, METRIC_COUNTER);
	assert_int_equal(rank_metrics[RM_LOSS].type, METRIC_REAL);
}

/* A rank's report through a frame: integers stay integers, reals reals,
 * and what was unknown is absent and comes back unknown. */
static void
t_rank_report(void **state)
{
	struct rank_report	 in = { .step = 1234567890123L, .epoch = 3,
	    .loss = 0.25, .rss = 240L << 20, .noise_scale = 99,
	    .valid = RM_BIT(STEP) | RM_BIT(EPOCH) | RM_BIT(LOSS) | RM_BIT(RSS) },
				 out;
	json_t			*m = json_pack("{s:s, s:s, s:s, s:i}", "t",
	    MSG_METRICS, "scope", "rank", "job", "j", "rank", 0);
	char			 err[128], *s;

	(void)state;
	rank_report_put(&in, m);
	assert_true(json_is_integer(json_object_get(m, "step")));
	assert_true(json_is_real(json_object_get(m, "loss")));
	assert_null(json_object_get(m, "noise_scale"));	/* not 0 */
	assert_null(json_object_get(m, "samples_per_s"));
	assert_int_equal(json_object_size(m), 4 + 4);
	s = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(strstr(s, "\"t\":\"metrics\",\"scope\":\"rank\""));
	free(s);
	assert_int_equal(proto_kind(m, err, sizeof err), PK_METRICS);
	assert_int_equal(rank_report_read(m, &out, err, sizeof err), 0);
	assert_int_equal(out.valid, in.valid);
	assert_true(out.step == in.step && out.epoch == 3 && out.loss == 0.25);
	assert_true(out.rss == in.rss && out.noise_scale == 0);
	/* A non-finite real is unknown, not NaN on the wire. */
	in.lr = NAN;
	in.valid |= RM_BIT(LR);
	json_object_clear(m);
	rank_report_put(&in, m);
	assert_null(json_object_get(m, "lr"));
	json_decref(m);
}

/*
 * A node's sample keeps its time through the agent's frame: the agent
 * puts the sample into a frame whose "t" is the type, so the time may
 * not live there (it did, and every sample the backend read had time 0).
 */
static void
t_node_time(void **state)
{
	struct node_sample	 ns = { .time = 1700000000.25 }, back;
	json_t			*m;
	char			 err[128];

	(void)state;
	ns.v[NM_LOAD1] = 0.5;
	ns.v[NM_TEMP] = 71;	/* not valid: must not come back */
	ns.valid = UINT32_C(1) << NM_LOAD1;
	m = json_pack("{s:s, s:s, s:s}", "t", MSG_METRICS, "scope", "node",
	    "node", "n1");
	json_object_update_new(m, node_sample_json(&ns));
	assert_string_equal(proto_type(m), MSG_METRICS);
	assert_int_equal(proto_kind(m, err, sizeof err), PK_METRICS);
	assert_int_equal(node_sample_read(m, &back, err, sizeof err), 0);
	assert_true(back.time == ns.time);
	assert_int_equal(back.valid, ns.valid);
	assert_true(back.v[NM_LOAD1] == 0.5 && back.v[NM_TEMP] == 0);
	json_decref(m);
}

int
test_proto_kind(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_kind_table),
		cmocka_unit_test(t_kind_good),
		cmocka_unit_test(t_kind_refused),
		cmocka_unit_test(t_cmd_check),
		cmocka_unit_test(t_metric_tables),
		cmocka_unit_test(t_rank_report),
		cmocka_unit_test(t_node_time),
	};

	return cmocka_run_group_tests_name("proto kinds and metrics", tests,
	    NULL, NULL);
}
