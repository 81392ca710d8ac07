/*
 * test-slurm.c: the cluster of a Slurm allocation (backend/spec/
 * spec-slurm.c) from what Slurm 22.05's scontrol printed on the test
 * bed (tests/slurm/slurm-up.sh with 3 nodes, two leaf switches and
 * Gres=gpu:2), host lists as Slurm writes them, and the command runner
 * it stands on (lib/run.c).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/run.h"
#include "backend/spec/spec.h"
#include "backend/spec/spec-slurm.h"

/* scontrol -o show node 'n[1-3]', as captured (lines cut before the
 * fields nothing reads, OS= with its spaces kept). */
static const char nodes_out[] =
    "NodeName=n1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 "
    "CPUTot=2 CPULoad=5.28 AvailableFeatures=(null) ActiveFeatures=(null) "
    "Gres=gpu:2 NodeAddr=10.199.250.11 NodeHostName=n1 Version=22.05.8 "
    "OS=Linux 6.18.44-fc-v857 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 "
    "AllocMem=0 FreeMem=21485 Sockets=2 Boards=1 State=IDLE\n"
    "NodeName=n2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 "
    "CPUTot=2 CPULoad=5.28 AvailableFeatures=(null) ActiveFeatures=(null) "
    "Gres=gpu:2 NodeAddr=10.199.250.12 NodeHostName=n2 Version=22.05.8 "
    "OS=Linux 6.18.44-fc-v857 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 "
    "AllocMem=0 FreeMem=21485 Sockets=2 Boards=1 State=IDLE\n"
    "NodeName=n3 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 "
    "CPUTot=2 CPULoad=5.28 AvailableFeatures=(null) ActiveFeatures=(null) "
    "Gres=gpu:2 NodeAddr=10.199.250.13 NodeHostName=n3 Version=22.05.8 "
    "OS=Linux 6.18.44-fc-v857 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 "
    "AllocMem=0 FreeMem=21485 Sockets=2 Boards=1 State=IDLE\n";

/* A node without GPUs, as the first test bed (no Gres configured). */
static const char node_plain[] =
    "NodeName=n1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 "
    "CPUTot=2 CPULoad=4.07 AvailableFeatures=(null) ActiveFeatures=(null) "
    "Gres=(null) NodeAddr=10.197.0.11 NodeHostName=n1 Version=22.05.8 "
    "OS=Linux 6.18.44-fc-v857 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 "
    "State=IDLE ThreadsPerCore=1";

/* scontrol show topology with topology/tree. */
static const char topo_out[] =
    "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=n[1-2]\n"
    "SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=n3\n"
    "SwitchName=spine Level=1 LinkSpeed=1 Nodes=n[1-3] Switches=leaf[1-2]\n";

static const char hosts_out[] = "n1\nn2\nn3\n";

static void
expand_is(const char *list, const char *want)
{
	char	**names, got[512] = "", err[256];
	int	 n;

	assert_int_equal(spec_slurm_expand(list, &names, &n, err, sizeof err), 0);
	for (int i = 0; i < n; i++) {
		strcat(got, i ? " " : "");
		strcat(got, names[i]);
	}
	spec_slurm_names_free(names, n);
	assert_string_equal(got, want);
}

static void
t_expand(void **state)
{
	char	**names, err[256];
	int	 n;

	(void)state;
	expand_is("n[1-3]", "n1 n2 n3");
	expand_is("n3", "n3");
	expand_is("n[1-2,5],gpu[09-11]", "n1 n2 n5 gpu09 gpu10 gpu11");
	expand_is("rack[1-2]-n[1-2]", "rack1-n1 rack1-n2 rack2-n1 rack2-n2");
	expand_is("a,b.example.org", "a b.example.org");
	assert_int_equal(spec_slurm_expand("n[1-", &names, &n, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "n[1-"));
	assert_int_equal(spec_slurm_expand("n[3-1]", &names, &n, err,
	    sizeof err), -1);
	assert_int_equal(spec_slurm_expand("n[a]", &names, &n, err,
	    sizeof err), -1);
	assert_int_equal(spec_slurm_expand("n[0-99999]", &names, &n, err,
	    sizeof err), -1);
}

static void
t_node(void **state)
{
	struct slurm_node sn;

	(void)state;
	assert_int_equal(spec_slurm_parse_node(node_plain, &sn), 0);
	assert_string_equal(sn.name, "n1");
	assert_string_equal(sn.addr, "10.197.0.11");
	assert_string_equal(sn.host, "n1");
	assert_int_equal(sn.cpus, 2);
	assert_int_equal(sn.gpus, 0);
	assert_int_equal(spec_slurm_parse_node("CPUTot=4 NodeAddr=x", &sn), -1);
	/* CPUTot when there is no CPUEfctv (older Slurm). */
	assert_int_equal(spec_slurm_parse_node("NodeName=a CPUTot=8", &sn), 0);
	assert_int_equal(sn.cpus, 8);
	assert_string_equal(sn.addr, "");
}

static void
t_gres(void **state)
{
	(void)state;
	assert_int_equal(spec_slurm_gres_gpus("(null)"), 0);
	assert_int_equal(spec_slurm_gres_gpus("gpu:2"), 2);
	assert_int_equal(spec_slurm_gres_gpus("gpu:a100:4(S:0-1)"), 4);
	assert_int_equal(spec_slurm_gres_gpus("gpu:a100:2(S:0,1),gpu:v100:1,"
	    "nic:1"), 3);
	assert_int_equal(spec_slurm_gres_gpus("gpu"), 1);
	assert_int_equal(spec_slurm_gres_gpus("gpu:tesla"), 1);
	assert_int_equal(spec_slurm_gres_gpus("gpumem:4,mps:100"), 0);
}

static void
t_cpus(void **state)
{
	int	 c[4];

	(void)state;
	assert_int_equal(spec_slurm_cpus_per_node("2(x3),1", c, 4), 0);
	assert_int_equal(c[0], 2);
	assert_int_equal(c[2], 2);
	assert_int_equal(c[3], 1);
	assert_int_equal(spec_slurm_cpus_per_node("1(x3)", c, 4), -1);
	assert_int_equal(spec_slurm_cpus_per_node("1(x5)", c, 4), -1);
	assert_int_equal(spec_slurm_cpus_per_node("x", c, 4), -1);
}

static void
t_build(void **state)
{
	struct cluster_spec c;
	char	 err[512];

	(void)state;
	assert_int_equal(spec_slurm_build(&(struct slurm_alloc){ .job = "12",
	    .nodelist = "n[1-3]", .hostnames = hosts_out, .nodes = nodes_out,
	    .topology = topo_out, .cpus_per_node = "1(x3)", .spares = 1 }, &c,
	    err, sizeof err), 0);
	assert_string_equal(c.slurm_job, "12");
	assert_string_equal(c.name, "slurm-12");
	assert_int_equal(c.n_nodes, 3);
	assert_string_equal(c.nodes[1].name, "n2");
	assert_string_equal(c.nodes[1].addr, "10.199.250.12");
	assert_string_equal(c.nodes[1].slurm_job, "12");
	assert_string_equal(c.nodes[0].rack, "leaf1");
	assert_string_equal(c.nodes[1].rack, "leaf1");
	assert_string_equal(c.nodes[2].rack, "leaf2");
	/* The allocation's CPUs, not the node's. */
	assert_int_equal(c.nodes[0].cpu_slots, 1);
	assert_int_equal(c.nodes[0].cuda_slots, 2);
	assert_false(c.nodes[1].spare);
	assert_true(c.nodes[2].spare);
	spec_cluster_free(&c);

	/* No topology, no SLURM_JOB_CPUS_PER_NODE: one rack, CPUEfctv. */
	assert_int_equal(spec_slurm_build(&(struct slurm_alloc){ .job = "7",
	    .hostnames = "n1\n", .nodes = node_plain, .spares = -1 }, &c,
	    err, sizeof err), 0);
	assert_string_equal(c.nodes[0].rack, "default");
	assert_int_equal(c.nodes[0].cpu_slots, 2);
	assert_false(c.nodes[0].spare);
	spec_cluster_free(&c);
}

static void
t_build_errors(void **state)
{
	struct cluster_spec c;
	char	 err[512];

	(void)state;
	assert_int_equal(spec_slurm_build(&(struct slurm_alloc){ .job = "12",
	    .hostnames = hosts_out, .nodes = nodes_out, .spares = 3 }, &c,
	    err, sizeof err), -1);
	assert_non_null(strstr(err, "--spares 3 leaves none of the 3 nodes"));
	assert_int_equal(spec_slurm_build(&(struct slurm_alloc){ .job = "12",
	    .hostnames = "n1\nn9\n", .nodes = nodes_out }, &c, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "says nothing of node n9"));
	assert_int_equal(spec_slurm_build(&(struct slurm_alloc){ .job = "12",
	    .hostnames = "../n1\n", .nodes = nodes_out }, &c, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "[A-Za-z0-9._-]"));
	assert_int_equal(spec_slurm_build(&(struct slurm_alloc){ .job = "12",
	    .hostnames = "", .nodelist = "x", .nodes = nodes_out }, &c, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "named no node"));
	assert_int_equal(spec_slurm_build(&(struct slurm_alloc){ .job = "1;x",
	    .hostnames = hosts_out, .nodes = nodes_out }, &c, err,
	    sizeof err), -1);
}

/* Outside an allocation "slurm" is a usage error; --spares needs one. */
static void
t_open(void **state)
{
	struct cluster_spec c;
	FILE	*out = tmpfile();
	char	 text[1024] = "";

	(void)state;
	unsetenv("SLURM_JOB_ID");
	assert_int_equal(spec_open_cluster("slurm", -1, &c, out),
	    SPEC_CLUSTER_USAGE);
	assert_int_equal(spec_open_cluster(NULL, 1, &c, out),
	    SPEC_CLUSTER_USAGE);
	assert_int_equal(spec_open_cluster(NULL, -1, &c, out), 0);
	assert_int_equal(c.n_nodes, 4);
	assert_string_equal(c.slurm_job, "");
	spec_cluster_free(&c);
	rewind(out);
	assert_true(fread(text, 1, sizeof text - 1, out) > 0);
	assert_non_null(strstr(text, "not inside a Slurm allocation"));
	assert_non_null(strstr(text, "--spares is for a Slurm allocation"));
	fclose(out);
}

/* --cluster and --spares as every command that opens the cluster takes
 * them: a bad N is a usage error before the cluster is looked at. */
static int
t_nothing(const struct cmd_args *a)
{
	(void)a;
	return 0;
}

static void
t_options(void **state)
{
	static const struct cmd_option opts[] = { SPEC_CLUSTER_OPTIONS,
	    { NULL } };
	static const struct cmd_entry e = { .name = "t", .options = opts,
	    .args_max = -1, .exec = t_nothing };
	const char	*bad[] = { "-1", "two", "", "4097" };
	struct cluster_spec c;
	struct cmd_args	 a;
	FILE		*out = tmpfile();
	char		 text[2048] = "";

	(void)state;
	unsetenv("SLURM_JOB_ID");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char	*argv[] = { "t", "--spares", (char *)bad[i], NULL };

		assert_int_equal(cmd_parse(&e, 3, argv, &a), 0);
		assert_int_equal(spec_open_cluster_args(&a, false, &c, out),
		    SPEC_CLUSTER_USAGE);
		cmd_args_free(&a);
	}
	{
		/* A good N outside an allocation: refused by the cluster. */
		char	*argv[] = { "t", "--spares=2", NULL };

		assert_int_equal(cmd_parse(&e, 2, argv, &a), 0);
		assert_int_equal(spec_open_cluster_args(&a, false, &c, out),
		    SPEC_CLUSTER_USAGE);
		cmd_args_free(&a);
	}
	{
		char	*argv[] = { "t", "-c", "/nonexistent/c.yaml", NULL };

		assert_int_equal(cmd_parse(&e, 3, argv, &a), 0);
		assert_int_equal(spec_open_cluster_args(&a, false, &c, out), -1);
		cmd_args_free(&a);
	}
	rewind(out);
	assert_true(fread(text, 1, sizeof text - 1, out) > 0);
	assert_non_null(strstr(text, "--spares wants a number of nodes (0 or "
	    "more), got 'two'"));
	assert_non_null(strstr(text, "--spares is for a Slurm allocation"));
	assert_non_null(strstr(text, "/nonexistent/c.yaml"));
	fclose(out);
}

static void
t_run(void **state)
{
	const char *ok[] = { "sh", "-c", "echo out; echo first >&2; "
	    "echo last words >&2; exit 3", NULL };
	const char *slow[] = { "sleep", "5", NULL };
	const char *none[] = { "hunter-no-such-command", NULL };
	char	*out, err[256];

	(void)state;
	assert_int_equal(run_capture(ok, &out, 5000, err, sizeof err), 3);
	assert_string_equal(out, "out\n");
	assert_string_equal(err, "last words");
	free(out);
	assert_int_equal(run_capture(slow, &out, 200, err, sizeof err), -1);
	assert_null(out);
	assert_non_null(strstr(err, "did not answer"));
	assert_int_equal(run_capture(none, &out, 5000, err, sizeof err), 127);
	assert_non_null(strstr(err, "hunter-no-such-command"));
	free(out);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(t_expand),
		cmocka_unit_test(t_node),
		cmocka_unit_test(t_gres),
		cmocka_unit_test(t_cpus),
		cmocka_unit_test(t_build),
		cmocka_unit_test(t_build_errors),
		cmocka_unit_test(t_open),
		cmocka_unit_test(t_options),
		cmocka_unit_test(t_run),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
